package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// BenchmarkSteadyFlow adds one event for one endpoint, claims it and
// finishes it, a millisecond apart, with a 25 s lease: each claim should
// cost the same however many deliveries were finished before it.
func BenchmarkSteadyFlow(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
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

// TestNoHeadOfLineBlockingAcrossEndpoints queues 50 heads for an endpoint
// at its in-flight cap, and one for another endpoint due after them: a
// claim takes the other endpoint's.
func TestNoHeadOfLineBlockingAcrossEndpoints(t *testing.T) {
	h := newHooks(t)
	capped, free := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme", onboarding.EventApplicationCreated)
	for i := 0; i < 50; i++ {
		h.add(h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.at(time.Duration(i)*time.Millisecond)))
	}
	behind := h.event(onboarding.EventApplicationCreated, "acme", "app-x", h.at(time.Second))
	h.add(behind)
	claimed, _, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.at(time.Minute), Lease: time.Minute,
		Limit: 4, InFlight: map[string]int{capped.ID: 1}, MaxInFlight: func(id string) int {
			if id == capped.ID {
				return 1
			}
			return 4
		}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{pair(free.ID, behind.ID)}, pairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	h.queued()
}

// TestClaimSharesTheLimit queues ten due heads for each of two endpoints:
// a claim with limit 4 takes two of each, the earliest of each.
func TestClaimSharesTheLimit(t *testing.T) {
	h := newHooks(t)
	a, b := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme", onboarding.EventApplicationCreated)
	var want []string
	for i := 0; i < 10; i++ {
		ea := h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("a-%d", i), h.at(time.Duration(i)*time.Millisecond))
		h.add(ea)
		if i < 2 {
			want = append(want, pair(a.ID, ea.ID))
		}
	}
	for i := 0; i < 10; i++ {
		eb := h.event(onboarding.EventApplicationCreated, "acme", fmt.Sprintf("b-%d", i), h.at(time.Second+time.Duration(i)*time.Millisecond))
		h.add(eb)
		if i < 2 {
			want = append(want, pair(b.ID, eb.ID))
		}
	}
	claimed, next := h.claim("w1", h.at(time.Minute), 4)
	sort.Strings(want)
	if diff := cmp.Diff(want, pairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if want := h.at(2 * time.Millisecond); !next.Equal(want) {
		t.Errorf("next = %v, want the first head left %v", next, want)
	}
	h.queued()
}

// TestLapsedLeaseIsClaimedByAnother claims a head for w1 and lets its lease
// lapse: w2 claims it then, not before, and w1's finish is refused.
func TestLapsedLeaseIsClaimedByAnother(t *testing.T) {
	h := newHooks(t)
	ep := h.endpoint("acme")
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e)
	first, _ := h.claim("w1", h.now, 4)
	if diff := cmp.Diff([]string{pair(ep.ID, e.ID)}, pairs(first)); diff != "" {
		t.Fatalf("w1's claim (-want +got):\n%s", diff)
	}
	if got, next := h.claim("w2", h.at(time.Minute-time.Nanosecond), 4); len(got) != 0 || !next.Equal(h.at(time.Minute)) {
		t.Errorf("w2's claim while the lease holds = %v, next %v; want none, %v", pairs(got), next, h.at(time.Minute))
	}
	got, _ := h.claim("w2", h.at(time.Minute), 4)
	if len(got) != 1 || got[0].Owner != "w2" || !got[0].LeaseUntil.Equal(h.at(2*time.Minute)) {
		t.Fatalf("w2's claim once the lease lapsed = %+v; want the delivery, leased to w2 until %v", got, h.at(2*time.Minute))
	}
	if err := h.finish(first[0], h.at(time.Minute), onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("w1's finish = %v, want ErrLeaseLost", err)
	}
	if err := h.finish(got[0], h.at(time.Minute), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("w2's finish = %v", err)
	}
	if q := h.queued(); len(q) != 0 {
		t.Errorf("queued after w2 finished: %v", q)
	}
}
