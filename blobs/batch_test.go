package blobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/blobs"
	"onboard/onboarding"
)

// TestBatch checks that a batch's blobs are random version 4 UUIDs sharing
// one shard, readable at once and after Sync, and that a failed Put leaves
// nothing behind and does not spoil the batch.
func TestBatch(t *testing.T) {
	s, dir := openStore(t)
	ctx := context.Background()
	var b onboarding.BlobBatch = s.Batch()
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync of an empty batch: %v", err)
	}
	want := map[string][]byte{}
	var ids []string
	for i := range 5 {
		content := randomBytes(1000+i, uint64(i))
		if i == 2 {
			if _, _, err := b.Put(ctx, bytes.NewReader(content), 10); !errors.Is(err, onboarding.ErrFileTooLarge) {
				t.Fatalf("Put over the limit: %v, want ErrFileTooLarge", err)
			}
			continue
		}
		id, size, err := b.Put(ctx, bytes.NewReader(content), 1<<20)
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
		if size != int64(len(content)) {
			t.Errorf("Put size %d, want %d", size, len(content))
		}
		u, err := uuid.Parse(id)
		if err != nil || !blobs.ValidID(id) || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
			t.Errorf("Put id %q: want a canonical version 4 UUID", id)
		}
		want[id] = content
		ids = append(ids, id)
	}
	for _, id := range ids[1:] {
		if id[:4] != ids[0][:4] {
			t.Errorf("ids %s and %s of one batch in different shards", ids[0], id)
		}
	}
	for id, content := range want {
		if got := readBlob(t, s, id); !bytes.Equal(got, content) {
			t.Errorf("blob %s before Sync: %d bytes, want %d", id, len(got), len(content))
		}
	}
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	var wantFiles []string
	for _, id := range ids {
		wantFiles = append(wantFiles, fmt.Sprintf("%s/%s/%s", id[0:2], id[2:4], id))
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(wantFiles)), files(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// Another batch draws its own shard (almost surely another one).
	other := s.Batch()
	seen := map[string]bool{}
	for range 4 {
		id, _, err := other.Put(ctx, strings.NewReader("x"), 10)
		if err != nil {
			t.Fatal(err)
		}
		seen[id] = true
	}
	if len(seen) != 4 {
		t.Errorf("a batch gave %d distinct ids for 4 blobs", len(seen))
	}
	if err := other.Sync(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPutThree puts three 64 KiB blobs one by one (Put) or as one
// batch (Batch, then Sync): what the registry documents job does for an
// application of three filings.
func BenchmarkPutThree(b *testing.B) {
	content := randomBytes(64<<10, 1)
	ctx := context.Background()
	for _, batched := range []bool{false, true} {
		b.Run(fmt.Sprintf("batched=%v", batched), func(b *testing.B) {
			s, _ := openStore(b)
			for b.Loop() {
				var put func(context.Context, *bytes.Reader) error
				batch := s.Batch()
				if batched {
					put = func(ctx context.Context, r *bytes.Reader) error { _, _, err := batch.Put(ctx, r, 1<<20); return err }
				} else {
					put = func(ctx context.Context, r *bytes.Reader) error { _, _, err := s.Put(ctx, r, 1<<20); return err }
				}
				for range 3 {
					if err := put(ctx, bytes.NewReader(content)); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
