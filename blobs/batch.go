package blobs

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/google/uuid"

	"onboard/atomicfile"
	"onboard/onboarding"
)

// Batch puts several blobs whose names become durable together, at Sync:
// the registry documents job stores every filing of an application in one
// Batch and commits the record that refers to them after one Sync.
//
// Why one directory fsync suffices. A blob is durable once its content and
// its name are: Put fsyncs the content before renaming the file into its
// shard and fsyncs the shard afterwards. The content fsync must come before
// the rename (else a crash could leave a name over a short file), but the
// shard's fsync only has to come before anything refers to the blob: until
// then a blob lost in a crash is one that no record names, and one that
// survives unreferenced is removed by the orphan sweep. So a Batch fsyncs
// each blob's content at Put and its shard once, at Sync. The blobs of a
// Batch share one shard (their ids share their first four hex digits, the
// rest of the random UUID being drawn as usual), so Sync is one fsync
// however many blobs were put. A shard's own entry in its parent is made
// durable at once, as for Put (makeShard), so that no other writer's blob
// in that shard depends on a Sync that may come much later.
//
// A Batch is not safe for concurrent use.
type Batch struct {
	s      *Store
	prefix [2]byte // the first two bytes of the ids of the batch, once one is chosen
	chosen bool
	dirty  string // the shard to fsync at Sync; empty when none
}

var _ onboarding.BlobBatch = (*Batch)(nil)

// Batch starts a batch of new blobs (onboarding.BlobBatcher).
func (s *Store) Batch() onboarding.BlobBatch { return &Batch{s: s} }

// Put stores what r yields as a new blob, as Store.Put does, except that
// the blob's name is only durable once Sync has returned.
func (b *Batch) Put(ctx context.Context, r io.Reader, max int64) (id string, size int64, err error) {
	u, err := uuid.NewRandom()
	if err != nil {
		return "", 0, fmt.Errorf("blobs: put: new id: %w", err)
	}
	if !b.chosen {
		b.prefix, b.chosen = [2]byte{u[0], u[1]}, true
	}
	u[0], u[1] = b.prefix[0], b.prefix[1] // the version and variant bits are in u[6] and u[8]
	id = u.String()
	size, shard, err := b.s.put(ctx, r, max, id)
	if err != nil {
		return "", 0, err
	}
	b.dirty = shard
	return id, size, nil
}

// Sync fsyncs the shard of the blobs put since the last Sync, making them
// durable.
func (b *Batch) Sync() error {
	if b.dirty == "" {
		return nil
	}
	if err := atomicfile.Sync(b.dirty); err != nil {
		return fmt.Errorf("blobs: sync shard %s: %w", hex.EncodeToString(b.prefix[:]), err)
	}
	b.dirty = ""
	return nil
}
