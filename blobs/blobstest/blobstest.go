// Package blobstest is the conformance suite of a blob store: the contract
// of onboarding.Blobs and of the orphan sweep's walk (onboarding.SweptBlobs),
// written once and run against every implementation (the local directory
// of package blobs and the S3 bucket of package blobs/bucket).
package blobstest

import (
	"testing"
	"time"

	"onboard/onboarding"
)

// Blobs is a blob store under test: what the Service and the orphan sweep
// use of it.
type Blobs interface {
	onboarding.Blobs
	// Walk calls fn with the id and modification time of every stored
	// blob, stopping at fn's first error, which it returns (wrapped).
	Walk(fn func(id string, modified time.Time) error) error
}

// part is the size, in bytes, around which the suite puts content: the
// smallest part of an S3 multipart upload, where a streaming store
// switches from one request to several. The local store has no such
// boundary; the cases cost it little.
const part = 5 << 20

// Run runs every case of the suite as a subtest of t. open returns a new,
// empty store for one subtest, to be cleaned up through that subtest's
// t.Cleanup; stores from two calls must not see each other's blobs. A
// store that is also an onboarding.BlobBatcher has its batches tested
// too.
func Run(t *testing.T, open func(t *testing.T) Blobs) {
	cases := []struct {
		name string
		run  func(t *testing.T, open func(t *testing.T) Blobs)
	}{
		{"RoundTrip", testRoundTrip},
		{"EmptyBlob", testEmptyBlob},
		{"Seek", testSeek},
		{"ReadAt", testReadAt},
		{"ConcurrentReaders", testConcurrentReaders},
		{"ServeContentRanges", testServeContentRanges},
		{"SizeLimit", testSizeLimit},
		{"ReadsAtMostMaxPlusOne", testReadsAtMostMaxPlusOne},
		{"NegativeLimit", testNegativeLimit},
		{"FailedPutsLeaveNothing", testFailedPutsLeaveNothing},
		{"OpenMissing", testOpenMissing},
		{"InvalidIDs", testInvalidIDs},
		{"Delete", testDelete},
		{"ConcurrentPuts", testConcurrentPuts},
		{"Walk", testWalk},
		{"WalkStops", testWalkStops},
		{"Batch", testBatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open)
		})
	}
}
