package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/postgres/pgtest"
	"onboard/storage/storetest/fixture"
)

// TestWebhookUnchangedEndpointIsNotRewritten: a result's change of its
// endpoint that changes nothing writes nothing, so that the finishes of
// one endpoint's deliveries do not wait for one another's row lock. (What
// the change does is the Store suite's.)
func TestWebhookUnchangedEndpointIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep, d := h.ClaimOne("acme")
	version := func() string {
		var v string
		if err := h.S.pool.QueryRow(ctx, `SELECT xmin::text FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	reset := func(ep *onboarding.Endpoint) { ep.Exhausted = 0 } // already 0
	if err := h.Finish(d, h.At(time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
		t.Fatal(err)
	}
	if after := version(); after != before {
		t.Errorf("a change that changes nothing rewrote the endpoint (xmin %s, then %s)", before, after)
	}
}

// TestWebhookFinishDeliveriesIsOneCommit: a batch's log lines are written
// by one transaction. (What a batch does is the Store suite's.)
func TestWebhookFinishDeliveriesIsOneCommit(t *testing.T) {
	h := newHookEnv(t)
	n := h.FinishBatch()
	got := rows(t, h.S, `SELECT count(*) FROM delivery_attempts GROUP BY xmin`)
	if diff := cmp.Diff([]string{fmt.Sprint(n)}, got); diff != "" {
		t.Errorf("log lines per transaction (-want +got):\n%s", diff)
	}
}

// BenchmarkWebhookSteadyFlow is fixture.SteadyFlow on PostgreSQL: the
// cost of one delivery's three transactions, which should not grow with
// the deliveries finished before it.
func BenchmarkWebhookSteadyFlow(b *testing.B) {
	s, err := Open(context.Background(), pgtest.URL(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fixture.SteadyFlow(b, s)
}
