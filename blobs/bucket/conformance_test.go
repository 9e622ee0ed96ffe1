package bucket_test

import (
	"testing"

	"onboard/blobs"
	"onboard/blobs/blobstest"
	"onboard/blobs/bucket"
	"onboard/blobs/bucket/buckettest"
)

// openStore returns a store over a new random prefix of the test bucket,
// emptied when t ends.
func openStore(t testing.TB) (*bucket.Store, bucket.Options) {
	t.Helper()
	o := buckettest.Options(t)
	s, err := bucket.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, o
}

// TestConformance runs the blob store suite on the bucket store, bare and
// behind a Guard.
func TestConformance(t *testing.T) {
	buckettest.Server(t)
	t.Run("Store", func(t *testing.T) {
		blobstest.Run(t, func(t *testing.T) blobstest.Blobs {
			s, _ := openStore(t)
			return s
		})
	})
	t.Run("Guard", func(t *testing.T) {
		blobstest.Run(t, func(t *testing.T) blobstest.Blobs {
			s, _ := openStore(t)
			return blobs.NewGuard(s)
		})
	})
}
