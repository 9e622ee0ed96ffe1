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
	ep := h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now))
	claimed, _ := h.Claim("w1", h.Now, 10)
	if len(claimed) != 1 {
		t.Fatalf("claimed %v, want the delivery", fixture.Pairs(claimed))
	}
	version := func() string {
		var v string
		if err := h.S.pool.QueryRow(ctx, `SELECT xmin::text FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	reset := func(ep *onboarding.Endpoint) { ep.Exhausted = 0 } // already 0
	if err := h.Finish(claimed[0], h.At(time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
		t.Fatal(err)
	}
	if after := version(); after != before {
		t.Errorf("a change that changes nothing rewrote the endpoint (xmin %s, then %s)", before, after)
	}
}

// TestWebhookFinishDeliveriesIsOneCommit: a batch's log lines are written
// by one transaction. (What a batch does is the Store suite's.)
func TestWebhookFinishDeliveriesIsOneCommit(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	h.Endpoint("acme")
	h.Endpoint("acme")
	for _, app := range []string{"app-1", "app-2", "app-3"} {
		h.Add(h.Event(onboarding.EventApplicationCreated, "acme", app, h.Now))
	}
	claimed, _ := h.Claim("w1", h.Now, 10)
	if len(claimed) != 6 {
		t.Fatalf("claimed %v, want six", fixture.Pairs(claimed))
	}
	var batch []onboarding.FinishedDelivery
	for i, d := range claimed {
		r := onboarding.DeliveryResult{Done: i%2 == 0, Attempt: onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type,
			EndpointID: d.EndpointID, OrgID: "acme", Attempt: 1, At: h.At(time.Second)}}
		if !r.Done {
			r.RetryAt = h.At(time.Hour)
		}
		batch = append(batch, onboarding.FinishedDelivery{Delivery: d, Result: r})
	}
	lost, err := h.S.FinishDeliveries(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(make([]bool, len(batch)), lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	got := rows(t, h.S, `SELECT count(*) FROM delivery_attempts GROUP BY xmin`)
	if diff := cmp.Diff([]string{fmt.Sprint(len(batch))}, got); diff != "" {
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
