package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// The claims of deliveries: limits, fairness between endpoints, restarts, concurrent claimers, and the delivery log.

// testClaimLimits checks c.Limit, c.MaxInFlight (counting the caller's
// in-flight deliveries and this claim's, without changing the caller's
// map) and the report of when to come back, which leaves out the due
// deliveries an endpoint's cap holds back.
func testClaimLimits(t *testing.T, open Opener) {
	h := newHooks(t, open)
	busy, idle := h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme", onboarding.EventApplicationCreated)
	for i := 0; i < 3; i++ {
		h.Add(h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.At(time.Duration(i)*time.Second)))
	}
	h.Add(h.Event(onboarding.EventApplicationCreated, "acme", "app-9", h.At(4*time.Second)))
	h.Add(h.Event(onboarding.EventApplicationCreated, "acme", "app-8", h.At(time.Hour)))
	atCap, next, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.At(time.Minute), Lease: time.Minute,
		Limit: 10, InFlight: map[string]int{busy.ID: 2, idle.ID: 3}, MaxInFlight: func(string) int { return 2 }})
	if err != nil || len(atCap) != 0 || !next.IsZero() {
		t.Errorf("every endpoint at its cap: claimed %v, next %v, %v; want none, zero", fixture.Pairs(atCap), next, err)
	}
	inFlight := map[string]int{busy.ID: 1}
	claimed, next, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.At(time.Minute), Lease: time.Minute,
		Limit: 10, InFlight: inFlight, MaxInFlight: func(string) int { return 2 }})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, d := range claimed {
		count[d.EndpointID]++
	}
	if diff := cmp.Diff(map[string]int{busy.ID: 1, idle.ID: 1}, count); diff != "" {
		t.Errorf("claimed per endpoint (-want +got):\n%s", diff)
	}
	if !next.Equal(h.At(2 * time.Minute)) {
		t.Errorf("next = %v, want the leases' end %v, not the due time of a delivery held back", next, h.At(2*time.Minute))
	}
	if diff := cmp.Diff(map[string]int{busy.ID: 1}, inFlight); diff != "" {
		t.Errorf("the caller's InFlight changed (-want +got):\n%s", diff)
	}
	claimed, next = h.Claim("w1", h.At(time.Minute), 1)
	if len(claimed) != 1 || !next.Equal(h.At(2*time.Second)) {
		t.Errorf("limit 1: claimed %v, next %v; want one, next %v", fixture.Pairs(claimed), next, h.At(2*time.Second))
	}
	claimed, next = h.Claim("w1", h.At(time.Minute), 1)
	if len(claimed) != 1 || !next.Equal(h.At(2*time.Minute)) {
		t.Errorf("the last due: claimed %v, next %v; want one, the first leases' end %v", fixture.Pairs(claimed), next, h.At(2*time.Minute))
	}
	claimed, next = h.Claim("w1", h.At(time.Minute), 1)
	if len(claimed) != 0 || !next.Equal(h.At(2*time.Minute)) {
		t.Errorf("nothing due: claimed %v, next %v; want none, the first leases' end %v", fixture.Pairs(claimed), next, h.At(2*time.Minute))
	}
}

// testNoHeadOfLineBlocking queues 50 heads for an endpoint at its
// in-flight cap, and one for another endpoint due after them: a claim
// takes the other endpoint's.
func testNoHeadOfLineBlocking(t *testing.T, open Opener) {
	h := newHooks(t, open)
	capped, free := h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme", onboarding.EventApplicationCreated)
	for i := 0; i < 50; i++ {
		h.Add(h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.At(time.Duration(i)*time.Millisecond)))
	}
	behind := h.Event(onboarding.EventApplicationCreated, "acme", "app-x", h.At(time.Second))
	h.Add(behind)
	claimed, _, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.At(time.Minute), Lease: time.Minute,
		Limit: 4, InFlight: map[string]int{capped.ID: 1}, MaxInFlight: func(id string) int {
			if id == capped.ID {
				return 1
			}
			return 4
		}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{fixture.Pair(free.ID, behind.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	fixture.CheckQueues(t, h.S)
}

// testClaimSharesTheLimit queues ten due heads for each of two endpoints:
// a claim with limit 4 takes two of each, the earliest of each.
func testClaimSharesTheLimit(t *testing.T, open Opener) {
	h := newHooks(t, open)
	a, b := h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme", onboarding.EventApplicationCreated)
	var want []string
	for i := 0; i < 10; i++ {
		ea := h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("a-%d", i), h.At(time.Duration(i)*time.Millisecond))
		h.Add(ea)
		if i < 2 {
			want = append(want, fixture.Pair(a.ID, ea.ID))
		}
	}
	for i := 0; i < 10; i++ {
		eb := h.Event(onboarding.EventApplicationCreated, "acme", fmt.Sprintf("b-%d", i), h.At(time.Second+time.Duration(i)*time.Millisecond))
		h.Add(eb)
		if i < 2 {
			want = append(want, fixture.Pair(b.ID, eb.ID))
		}
	}
	claimed, next := h.Claim("w1", h.At(time.Minute), 4)
	if diff := cmp.Diff(sorted(want...), fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if want := h.At(2 * time.Millisecond); !next.Equal(want) {
		t.Errorf("next = %v, want the first head left %v", next, want)
	}
}

// testQueueSurvivesRestart restarts the store with deliveries queued and
// one claimed: after it, the queue is as it was and the claimed one is
// taken up once its lease lapses.
func testQueueSurvivesRestart(t *testing.T, open Opener) {
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	a1 := h.Event(onboarding.EventApplicationCreated, "acme", "app-a", h.Now)
	a2 := h.Event(onboarding.EventApplicationSent, "acme", "app-a", h.Now)
	b1 := h.Event(onboarding.EventApplicationCreated, "acme", "app-b", h.At(time.Hour))
	h.Add(a1, a2, b1)
	if claimed, _ := h.Claim("w1", h.Now, 10); len(claimed) != 1 {
		t.Fatalf("claimed %v", fixture.Pairs(claimed))
	}
	h.restart()
	fixture.CheckQueues(t, h.S)
	if n := h.Queued(); n != 3 {
		t.Errorf("QueuedDeliveries after the restart = %d, want 3", n)
	}
	if got, next := h.Claim("w2", h.At(time.Minute-time.Nanosecond), 10); len(got) != 0 || !next.Equal(h.At(time.Minute)) {
		t.Errorf("claim while the lease holds = %v, next %v", fixture.Pairs(got), next)
	}
	claimed, _ := h.Claim("w2", h.At(2*time.Hour), 10)
	if diff := cmp.Diff(sorted(fixture.Pair(ep.ID, a1.ID), fixture.Pair(ep.ID, b1.ID)), fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed after the restart (-want +got):\n%s", diff)
	}
	h.FinishAll(claimed, h.At(2*time.Hour))
	claimed, _ = h.Claim("w2", h.At(2*time.Hour), 10)
	if diff := cmp.Diff([]string{fixture.Pair(ep.ID, a2.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed after the heads (-want +got):\n%s", diff)
	}
}

// testDeliveryAttempts reads the delivery log through each of its walks.
func testDeliveryAttempts(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	we1, we2, we10 := h.Endpoint("acme"), h.Endpoint("acme"), h.Endpoint("acme")
	evA := h.Event(onboarding.EventApplicationSent, "acme", "app-a", h.Now)
	evB := h.Event(onboarding.EventApplicationSent, "acme", "app-b", h.Now)
	h.Add(evA, evB)
	eps := map[string]*onboarding.Endpoint{"we_1": we1, "we_2": we2, "we_10": we10}
	evs := map[string]*onboarding.Event{"evt_a": evA, "evt_b": evB}
	claimed, _ := h.Claim("w1", h.Now, 10)
	byPair := map[string]*onboarding.Delivery{}
	for _, d := range claimed {
		byPair[fixture.Pair(d.EndpointID, d.EventID)] = d
	}
	var lines []onboarding.DeliveryAttempt // oldest first
	for i, l := range []struct {
		ep, ev string
		ok     bool
	}{{"we_1", "evt_a", false}, {"we_2", "evt_a", true}, {"we_1", "evt_a", true}, {"we_1", "evt_b", false}, {"we_2", "evt_b", false}, {"we_10", "evt_b", true}} {
		d := byPair[fixture.Pair(eps[l.ep].ID, evs[l.ev].ID)]
		if d == nil {
			t.Fatalf("no claim of %s for %s: %v", l.ev, l.ep, fixture.Pairs(claimed))
		}
		line := onboarding.DeliveryAttempt{EventID: d.EventID, EventType: onboarding.EventApplicationSent, EndpointID: d.EndpointID, OrgID: "acme",
			Attempt: 1, At: h.At(time.Duration(i) * time.Second), Success: l.ok, StatusCode: 200}
		lines = append(lines, line)
		if _, err := h.S.FinishDeliveries(ctx, []onboarding.FinishedDelivery{{Delivery: d, Result: onboarding.DeliveryResult{Attempt: line, Done: l.ok, RetryAt: h.At(time.Hour)}}}); err != nil {
			t.Fatal(err)
		}
	}
	pick := func(idx ...int) []onboarding.DeliveryAttempt {
		var out []onboarding.DeliveryAttempt
		for _, i := range idx {
			out = append(out, lines[i])
		}
		return out
	}
	tests := []struct {
		name string
		q    onboarding.AttemptQuery
		want []onboarding.DeliveryAttempt
	}{
		{"all", onboarding.AttemptQuery{}, pick(5, 4, 3, 2, 1, 0)},
		{"limit", onboarding.AttemptQuery{Limit: 2}, pick(5, 4)},
		{"endpoint", onboarding.AttemptQuery{EndpointID: we1.ID}, pick(3, 2, 0)},
		{"event", onboarding.AttemptQuery{EventID: evB.ID}, pick(5, 4, 3)},
		{"endpoint and event", onboarding.AttemptQuery{EndpointID: we1.ID, EventID: evA.ID}, pick(2, 0)},
		{"failed", onboarding.AttemptQuery{FailedOnly: true}, pick(4, 3, 0)},
		{"failed of an endpoint", onboarding.AttemptQuery{EndpointID: we2.ID, FailedOnly: true, Limit: 1}, pick(4)},
		{"unknown endpoint", onboarding.AttemptQuery{EndpointID: "we_3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.S.DeliveryAttempts(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("newest first (-want +got):\n%s", diff)
			}
		})
	}
	// A line older than DeliveryLogRetention is gone.
	evC := h.Event(onboarding.EventApplicationSent, "acme", "app-c", h.Now)
	h.Add(evC)
	claimed, _ = h.Claim("w1", h.Now, 10)
	var dc *onboarding.Delivery
	for _, d := range claimed {
		if d.EventID == evC.ID && d.EndpointID == we1.ID {
			dc = d
		}
	}
	if dc == nil {
		t.Fatalf("no claim of the third event: %v", fixture.Pairs(claimed))
	}
	old := onboarding.DeliveryAttempt{EventID: evC.ID, EventType: evC.Type, EndpointID: we1.ID, OrgID: "acme", Attempt: 1,
		At: h.At(-onboarding.DeliveryLogRetention - time.Hour)}
	if _, err := h.S.FinishDeliveries(ctx, []onboarding.FinishedDelivery{{Delivery: dc, Result: onboarding.DeliveryResult{Attempt: old, Done: true}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: evC.ID}); err != nil || len(got) != 0 {
		t.Errorf("an expired line is listed: %+v, %v", got, err)
	}
}

// claimAndFinish runs workers claiming and finishing through stores at
// once until nothing is queued, and returns the event ids in the order
// they were claimed.
func claimAndFinish(t *testing.T, h *hooks, workers int, stores ...onboarding.Store) []string {
	ctx := context.Background()
	claimed := newClaimLedger(t)
	runClaimers(t, workers, stores, func(s onboarding.Store, owner string) (bool, error) {
		ds, next, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: owner, Now: h.Now, Lease: time.Hour, Limit: 3})
		if err != nil {
			return false, err
		}
		for _, d := range ds {
			claimed.claimed(owner, d.EventID)
			r := onboarding.DeliveryResult{Done: true, Attempt: onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type,
				EndpointID: d.EndpointID, OrgID: d.Event.OrgID, Attempt: 1, At: h.Now, StatusCode: 200, Success: true}}
			if err := fixture.FinishDelivery(ctx, s, d, r); err != nil {
				return false, fmt.Errorf("finish %s: %v", d.EventID, err) // not retried as a conflict of the claim
			}
		}
		return len(ds) == 0 && next.IsZero(), nil
	})
	return claimed.order
}

// concurrentClaims queues 30 events of 10 subjects and has workers claim
// them through stores: every delivery is claimed exactly once, and a
// subject's events are finished in order.
func concurrentClaims(t *testing.T, h *hooks, stores ...onboarding.Store) {
	ctx := context.Background()
	h.Endpoint("acme")
	var want []string
	for i := 0; i < 30; i++ {
		e := h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%10), h.Now)
		h.Add(e)
		want = append(want, e.ID)
	}
	done := claimAndFinish(t, h, 4, stores...)
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(done))); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	// Events of one subject were queued in id order; each was claimed only
	// after the one before it finished.
	last := map[string]string{}
	for _, id := range done {
		e, err := h.S.Event(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if prev := last[e.Subject]; prev > id {
			t.Errorf("%s delivered after %s of the same subject", id, prev)
		}
		last[e.Subject] = id
	}
	if n := h.Queued(); n != 0 {
		t.Errorf("QueuedDeliveries after the workers = %d", n)
	}
}

// testConcurrentClaimsDoNotOverlap runs workers claiming and finishing at
// once on one store.
func testConcurrentClaimsDoNotOverlap(t *testing.T, open Opener) {
	h := newHooks(t, open)
	concurrentClaims(t, h, h.S)
}

// testConcurrentClaimsTwoInstances runs workers claiming and finishing at
// once through two stores on the same data.
func testConcurrentClaimsTwoInstances(t *testing.T, open Opener) {
	h := newHooks(t, open)
	s2 := beside(t, open, h.S)
	concurrentClaims(t, h, h.S, s2)
}
