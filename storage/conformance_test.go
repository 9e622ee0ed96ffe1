package storage_test

import (
	"testing"

	"onboard/storage/storetest"
)

// TestConformance runs the Store suite on Badger.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.OpenerOn(storetest.BackendBadger))
}
