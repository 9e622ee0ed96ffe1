package blobs

import (
	"errors"
	"sync"
	"time"

	"onboard/onboarding"
)

// Guarded is the blob store a Guard wraps: the local Store or the S3
// bucket store (package blobs/bucket). Everything but Delete passes
// through the Guard unchanged.
type Guarded interface {
	onboarding.Blobs
	onboarding.BlobBatcher
	// Walk calls fn with the id and modification time of every stored
	// blob (onboarding.SweptBlobs).
	Walk(fn func(id string, modified time.Time) error) error
}

// Guard is a blob store whose deletions a backup can hold off. The Service
// deletes a blob right after the record that dropped it commits (a
// replaced or removed upload); a backup that took its snapshot just before
// that commit still refers to the blob and copies it later. So a backup
// holds the Guard from before its snapshot until it has copied every blob
// the snapshot refers to: meanwhile Delete only notes the id, and the last
// hold to end deletes the noted blobs.
//
// A Delete that found no hold may still be removing its file when a hold
// begins; that is safe, because the record that dropped the blob committed
// before the Delete was called, so before the hold, so before the snapshot
// the hold precedes: the snapshot does not refer to the blob.
type Guard struct {
	Guarded

	mu       sync.Mutex
	holds    int      // backups running
	deferred []string // blobs deleted while held
}

var (
	_ onboarding.Blobs       = (*Guard)(nil)
	_ onboarding.BlobBatcher = (*Guard)(nil)
	_ onboarding.SweptBlobs  = (*Guard)(nil)
	_ Guarded                = (*Store)(nil)
)

// NewGuard returns a Guard over s.
func NewGuard(s Guarded) *Guard { return &Guard{Guarded: s} }

// Delete removes blob id, or, while a hold is on, notes it for the end of
// the last hold. Removing a missing blob is not an error.
func (g *Guard) Delete(id string) error {
	g.mu.Lock()
	if g.holds > 0 {
		g.deferred = append(g.deferred, id)
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	return g.Guarded.Delete(id)
}

// Hold holds off deletions until release is called. Releasing the last
// hold deletes the blobs deleted meanwhile and returns their failures;
// calls of release after the first do nothing.
func (g *Guard) Hold() (release func() error) {
	g.mu.Lock()
	g.holds++
	g.mu.Unlock()
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() { err = g.release() })
		return err
	}
}

func (g *Guard) release() error {
	g.mu.Lock()
	g.holds--
	var ids []string
	if g.holds == 0 {
		ids, g.deferred = g.deferred, nil
	}
	g.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, g.Guarded.Delete(id))
	}
	return errors.Join(errs...)
}
