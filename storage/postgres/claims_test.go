package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/postgres/pgtest"
)

// TestWebhookUnchangedEndpointIsNotRewritten: a result's change of its
// endpoint that changes nothing writes nothing, so that the finishes of
// one endpoint's deliveries do not wait for one another's row lock. (What
// the change does is the Store suite's.)
func TestWebhookUnchangedEndpointIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now))
	claimed, _ := h.claim("w1", h.now, 10)
	if len(claimed) != 1 {
		t.Fatalf("claimed %v, want the delivery", hookPairs(claimed))
	}
	version := func() string {
		var v string
		if err := h.s.pool.QueryRow(ctx, `SELECT xmin::text FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	reset := func(ep *onboarding.Endpoint) { ep.Exhausted = 0 } // already 0
	if err := h.finish(claimed[0], h.at(time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
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
	h.endpoint("acme")
	h.endpoint("acme")
	for _, app := range []string{"app-1", "app-2", "app-3"} {
		h.add(h.event(onboarding.EventApplicationCreated, "acme", app, h.now))
	}
	claimed, _ := h.claim("w1", h.now, 10)
	if len(claimed) != 6 {
		t.Fatalf("claimed %v, want six", hookPairs(claimed))
	}
	var batch []onboarding.FinishedDelivery
	for i, d := range claimed {
		r := onboarding.DeliveryResult{Done: i%2 == 0, Attempt: onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type,
			EndpointID: d.EndpointID, OrgID: "acme", Attempt: 1, At: h.at(time.Second)}}
		if !r.Done {
			r.RetryAt = h.at(time.Hour)
		}
		batch = append(batch, onboarding.FinishedDelivery{Delivery: d, Result: r})
	}
	lost, err := h.s.FinishDeliveries(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(make([]bool, len(batch)), lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	got := rows(t, h.s, `SELECT count(*) FROM delivery_attempts GROUP BY xmin`)
	if diff := cmp.Diff([]string{fmt.Sprint(len(batch))}, got); diff != "" {
		t.Errorf("log lines per transaction (-want +got):\n%s", diff)
	}
}

// BenchmarkWebhookSteadyFlow adds one event for one endpoint, claims it
// and finishes it, a millisecond apart: the cost of one delivery's three
// transactions, which should not grow with the deliveries finished
// before it.
func BenchmarkWebhookSteadyFlow(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	entropy := ulid.Monotonic(ulid.DefaultEntropy(), 0)
	ep := &onboarding.Endpoint{ID: "we_" + ulid.MustNew(ulid.Timestamp(now), entropy).String(), OrgID: "acme",
		URL: "https://hooks.example.com/", Enabled: true, CreatedAt: now}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Millisecond)
		id := "evt_" + ulid.MustNew(ulid.Timestamp(now), entropy).String()
		e := &onboarding.Event{ID: id, Type: onboarding.EventApplicationCreated, OrgID: "acme", Subject: fmt.Sprintf("app-%d", i), At: now,
			Body: json.RawMessage(`{"id":"` + id + `","type":"application.created","data":{}}`)}
		if err := s.AddEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
		got, _, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w1", Now: now, Lease: 25 * time.Second, Limit: 4})
		if err != nil || len(got) != 1 {
			b.Fatalf("claim %d: %d claimed, %v", i, len(got), err)
		}
		d := got[0]
		if err := s.FinishDelivery(ctx, d, onboarding.DeliveryResult{Done: true, Attempt: onboarding.DeliveryAttempt{
			EventID: d.EventID, EventType: e.Type, EndpointID: ep.ID, OrgID: "acme", Attempt: 1, At: now, StatusCode: 200, Success: true}}); err != nil {
			b.Fatal(err)
		}
	}
}
