package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"onboard/blobs"
	"onboard/storage"
)

// The orphan blob sweep. A blob is written before the record that refers
// to it commits, and deleted after the record that dropped it commits, so
// a crash between the two (or a failed delete) leaves a file that no
// record refers to. The sweep removes such files once they are older than
// a grace period, which no request or job takes to commit the record of a
// blob it has just written.
const (
	// orphanGrace is how old an unreferenced blob must be to be removed
	// while the server runs: far longer than any upload or registry fetch
	// takes between writing a blob and committing its record.
	orphanGrace = time.Hour
	// sweepEvery is how often `onboard serve` sweeps, the first time one
	// interval after it starts.
	sweepEvery = time.Hour
)

// blobSweeper removes the blobs no record refers to.
type blobSweeper struct {
	store *storage.Store
	files *blobs.Guard // deletions go through the Guard, which a backup holds off
	log   *slog.Logger
	now   func() time.Time
}

// sweepResult is what one sweep found and did.
type sweepResult struct {
	Blobs   int // blobs in the store
	Removed int // unreferenced ones older than the grace period, removed
	Recent  int // ones younger than it, not examined
}

// sweep removes the blobs older than grace that no application or RFI
// request refers to. It lists the blobs first and reads the references
// after, so that a record committed meanwhile is seen: a blob is only
// removed when it was old before the references were read and none of
// them names it.
func (b *blobSweeper) sweep(ctx context.Context, grace time.Duration) (sweepResult, error) {
	var res sweepResult
	cutoff := b.now().Add(-grace)
	var old []string
	err := b.files.Walk(func(id string, modified time.Time) error {
		res.Blobs++
		if modified.Before(cutoff) {
			old = append(old, id)
		} else {
			res.Recent++
		}
		return ctx.Err()
	})
	if err != nil {
		return res, err
	}
	if len(old) == 0 {
		return res, nil // nothing old enough to remove: no need to read every record
	}
	refs, err := b.store.BlobReferences(ctx)
	if err != nil {
		return res, err
	}
	for _, id := range old {
		if refs[id] {
			continue
		}
		if err := b.files.Delete(id); err != nil {
			return res, fmt.Errorf("remove orphan blob %s: %w", id, err)
		}
		res.Removed++
	}
	return res, nil
}

// run sweeps every sweepEvery until ctx ends, logging what each sweep
// removed; a failed sweep is logged and tried again at the next interval.
func (b *blobSweeper) run(ctx context.Context) error {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		res, err := b.sweep(ctx, orphanGrace)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			b.log.Error("orphan blob sweep failed", "err", err)
		case res.Removed > 0:
			b.log.Info("orphan blobs removed", "removed", res.Removed, "blobs", res.Blobs)
		}
	}
}
