package onboarding_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// sweptFiles is a blob store of ids and their modification times.
type sweptFiles map[string]time.Time

func (f sweptFiles) Walk(fn func(string, time.Time) error) error {
	for id, mod := range f {
		if err := fn(id, mod); err != nil {
			return err
		}
	}
	return nil
}

func (f sweptFiles) Delete(id string) error {
	delete(f, id)
	return nil
}

// referrer answers a fixed set of references.
type referrer map[string]bool

func (r referrer) BlobReferences(context.Context) (map[string]bool, error) { return r, nil }

// TestBlobSweep removes the old blobs no record refers to, and leaves the
// referenced ones and those younger than the grace period.
func TestBlobSweep(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	files := sweptFiles{"old-orphan": now.Add(-2 * time.Hour), "old-kept": now.Add(-2 * time.Hour), "new-orphan": now.Add(-time.Minute)}
	s := &onboarding.BlobSweep{Records: referrer{"old-kept": true}, Files: files, Now: func() time.Time { return now }}
	res, err := s.Sweep(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if want := (onboarding.SweepResult{Blobs: 3, Removed: 1, Recent: 1}); res != want {
		t.Errorf("sweep = %+v, want %+v", res, want)
	}
	left := slices.Sorted(maps.Keys(files))
	if diff := cmp.Diff([]string{"new-orphan", "old-kept"}, left); diff != "" {
		t.Errorf("blobs left (-want +got):\n%s", diff)
	}
}
