package storage_test

import (
	"testing"

	"onboard/storage"
	"onboard/storage/storetest"
	"onboard/storage/storetest/fixture"
)

// TestConformance runs the Store suite on Badger.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.OpenerOn(storetest.BackendBadger))
}

// The store's tests make it check its queues and leave leftovers, so that
// no case of the suite skips for want of them.
var (
	_ fixture.QueueChecker    = (*storage.Store)(nil)
	_ storetest.LeftoverMaker = (*storage.Store)(nil)
)
