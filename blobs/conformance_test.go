package blobs_test

import (
	"testing"

	"onboard/blobs"
	"onboard/blobs/blobstest"
)

// TestConformance runs the blob store suite on the local store, bare and
// behind a Guard.
func TestConformance(t *testing.T) {
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
