package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

// DisableRecordOnly disables ep by writing its row alone, as
// UpdateEndpoint's first transaction does, leaving its queue as it is:
// what a drop that failed (or has not run yet) leaves. With
// DropLeftovers, it makes s a storetest.LeftoverMaker.
func (s *Store) DisableRecordOnly(t *testing.T, ep *onboarding.Endpoint) {
	t.Helper()
	off := *ep
	off.Enabled, off.DisabledReason = false, onboarding.DisabledByOperator
	if err := s.inTx(context.Background(), func(tx pgx.Tx) error { return writeEndpoint(context.Background(), tx, &off) }); err != nil {
		t.Fatal(err)
	}
}

// DropLeftovers sweeps (sweepWebhooks), which drops what disabled
// endpoints left queued; claims do not.
func (s *Store) DropLeftovers(t *testing.T, _ time.Time) {
	t.Helper()
	if swept, err := s.sweepWebhooks(context.Background()); err != nil || !swept {
		t.Fatalf("sweep = %v, %v", swept, err)
	}
}
