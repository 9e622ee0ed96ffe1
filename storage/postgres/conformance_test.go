package postgres_test

import (
	"testing"

	"onboard/storage/storetest"
)

// TestConformance runs the Store suite on PostgreSQL, each case on a
// database of its own (pgtest.URL), opened with postgres.Open.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.OpenerOn(storetest.BackendPostgres))
}
