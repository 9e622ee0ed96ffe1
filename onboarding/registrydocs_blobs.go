package onboarding

import (
	"context"
	"io"
)

// BlobBatch puts several blobs that become durable together, at Sync,
// rather than one by one at each Put: a writer that commits one record
// referring to several new blobs (the registry documents job) pays for the
// directory fsyncs once. It is not safe for concurrent use.
type BlobBatch interface {
	// Put stores what r yields as a new blob, as Blobs.Put does: the
	// blob's content is on disk when Put returns, and the blob is either
	// absent or complete after a crash, but it is only certain to be
	// present after a crash once Sync has returned.
	Put(ctx context.Context, r io.Reader, max int64) (id string, size int64, err error)
	// Sync makes the blobs Put since the last Sync durable. A record may
	// refer to a blob of a batch only once Sync has succeeded.
	Sync() error
}

// BlobBatcher is a Blobs that can put blobs in batches; the blobs
// package's store is one.
type BlobBatcher interface {
	// Batch starts a batch of new blobs.
	Batch() BlobBatch
}

// blobBatch starts a batch of new blobs in the Service's blob store; one
// that cannot batch has each Put durable on its own, and Sync does nothing.
func (s *Service) blobBatch() BlobBatch {
	if b, ok := s.blobs.(BlobBatcher); ok {
		return b.Batch()
	}
	return unbatched{s.blobs}
}

// unbatched is the batch of a Blobs that cannot batch.
type unbatched struct{ Blobs }

func (unbatched) Sync() error { return nil }
