package postgres_test

import (
	"testing"

	"onboard/storage/postgres"
	"onboard/storage/storetest"
	"onboard/storage/storetest/fixture"
)

// TestConformance runs the Store suite on PostgreSQL, each case on a
// database of its own (pgtest.URL), opened with postgres.Open.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.OpenerOn(storetest.BackendPostgres))
}

// The store's tests make it check its queues and leave leftovers, so that
// no case of the suite skips for want of them.
var (
	_ fixture.QueueChecker    = (*postgres.Store)(nil)
	_ storetest.LeftoverMaker = (*postgres.Store)(nil)
)
