package onboarding

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// The orphan blob sweep. A blob is written before the record that refers
// to it commits, and deleted after the record that dropped it commits, so
// a crash between the two (or a failed delete) leaves a file that no
// record refers to. The sweep removes such files once they are older than
// a grace period, which no request or job takes to commit the record of a
// blob it has just written.
const (
	// OrphanGrace is how old an unreferenced blob must be to be removed
	// while the server runs: far longer than any upload or registry fetch
	// takes between writing a blob and committing its record.
	OrphanGrace = time.Hour
	// sweepEvery is how often BlobSweep.Run sweeps, the first time one
	// interval after it starts.
	sweepEvery = time.Hour
)

// SweptBlobs is the blob store as the sweep sees it.
type SweptBlobs interface {
	// Walk calls fn with the id and modification time of every stored
	// blob, stopping at fn's first error, which it returns.
	Walk(fn func(id string, modified time.Time) error) error
	// Delete removes a blob; removing a missing blob is not an error. A
	// backup in progress may hold the removal off until it ends.
	Delete(id string) error
}

// BlobReferrer finds the blobs the records refer to.
type BlobReferrer interface {
	// BlobReferences returns the ids of every blob an application or an
	// RFI request refers to, as read at one moment.
	BlobReferences(ctx context.Context) (map[string]bool, error)
}

// BlobSweep removes the blobs no record refers to.
type BlobSweep struct {
	Records BlobReferrer
	Files   SweptBlobs
	Log     *slog.Logger     // Run's reports; default discard
	Now     func() time.Time // default time.Now
}

// SweepResult is what one sweep found and did.
type SweepResult struct {
	Blobs   int // blobs in the store
	Removed int // unreferenced ones older than the grace period, removed
	Recent  int // ones younger than it, not examined
}

// Sweep removes the blobs older than grace that no application or RFI
// request refers to. It lists the blobs first and reads the references
// after, so that a record committed meanwhile is seen: a blob is only
// removed when it was old before the references were read and none of
// them names it.
func (b *BlobSweep) Sweep(ctx context.Context, grace time.Duration) (SweepResult, error) {
	var res SweepResult
	now := b.Now
	if now == nil {
		now = time.Now
	}
	cutoff := now().Add(-grace)
	var old []string
	err := b.Files.Walk(func(id string, modified time.Time) error {
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
	refs, err := b.Records.BlobReferences(ctx)
	if err != nil {
		return res, err
	}
	for _, id := range old {
		if refs[id] {
			continue
		}
		if err := b.Files.Delete(id); err != nil {
			return res, fmt.Errorf("remove orphan blob %s: %w", id, err)
		}
		res.Removed++
	}
	return res, nil
}

// Run sweeps with OrphanGrace every sweepEvery until ctx ends, logging
// what each sweep removed; a failed sweep is logged and tried again at the
// next interval.
func (b *BlobSweep) Run(ctx context.Context) error {
	log := b.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		res, err := b.Sweep(ctx, OrphanGrace)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			log.Error("orphan blob sweep failed", "err", err)
		case res.Removed > 0:
			log.Info("orphan blobs removed", "removed", res.Removed, "blobs", res.Blobs)
		}
	}
}
