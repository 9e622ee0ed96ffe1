package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/postgres/pgtest"
)

// TestWebhookPerSubjectOrder checks that one endpoint receives the events
// of one subject one at a time, in order, while other subjects and other
// endpoints go ahead.
func TestWebhookPerSubjectOrder(t *testing.T) {
	h := newHookEnv(t)
	e1, e2 := h.endpoint("acme"), h.endpoint("acme")
	a1 := h.event(onboarding.EventApplicationCreated, "acme", "app-a", h.now)
	a2 := h.event(onboarding.EventApplicationSent, "acme", "app-a", h.at(time.Second))
	b1 := h.event(onboarding.EventApplicationCreated, "acme", "app-b", h.at(2*time.Second))
	h.add(a1, a2, b1)
	later := h.at(time.Minute) // a2 is due too
	claimed, next := h.claim("w1", later, 10)
	want := []string{hookPair(e1.ID, a1.ID), hookPair(e1.ID, b1.ID), hookPair(e2.ID, a1.ID), hookPair(e2.ID, b1.ID)}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), hookPairs(claimed)); diff != "" {
		t.Fatalf("first claim (-want +got):\n%s", diff)
	}
	if !next.Equal(later.Add(time.Minute)) {
		t.Errorf("next = %v, want the end of the leases %v", next, later.Add(time.Minute))
	}
	if again, _ := h.claim("w2", later, 10); len(again) != 0 {
		t.Errorf("a2 claimed while a1 is in flight: %v", hookPairs(again))
	}
	for _, d := range claimed {
		if d.EndpointID == e1.ID && d.EventID == a1.ID {
			if d.Event.ID != a1.ID || d.Endpoint.ID != e1.ID || d.Owner != "w1" || !d.LeaseUntil.Equal(later.Add(time.Minute)) {
				t.Errorf("claimed delivery = %+v", d)
			}
			if err := h.finish(d, later, onboarding.DeliveryResult{Done: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	claimed, _ = h.claim("w1", later, 10)
	if diff := cmp.Diff([]string{hookPair(e1.ID, a2.ID)}, hookPairs(claimed)); diff != "" {
		t.Errorf("claim after a1 reached e1 (-want +got):\n%s", diff)
	}
	h.queued()
}

// TestWebhookClaimLease checks that a claimed delivery is not claimed
// again before its lease lapses, and is after, by another instance; the
// worker that lost it cannot finish it.
func TestWebhookClaimLease(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	other := h.open()
	ep := h.endpoint("acme")
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e)
	first, _ := h.claim("w1", h.now, 10)
	if len(first) != 1 {
		t.Fatalf("first claim = %v", hookPairs(first))
	}
	steps := []struct {
		name     string
		s        *Store
		owner    string
		at       time.Time
		want     []string
		wantNext time.Time
	}{
		{"another owner before the lease lapses", other, "w2", h.at(30 * time.Second), []string{}, h.at(time.Minute)},
		{"the same owner before the lease lapses", h.s, "w1", h.at(59 * time.Second), []string{}, h.at(time.Minute)},
		{"a nanosecond before the lease lapses", other, "w2", h.at(time.Minute - time.Nanosecond), []string{}, h.at(time.Minute)},
		{"another owner after the lease lapsed", other, "w2", h.at(61 * time.Second), []string{hookPair(ep.ID, e.ID)}, h.at(121 * time.Second)},
	}
	var second []*onboarding.Delivery
	for _, st := range steps {
		got, next := h.claimOn(st.s, st.owner, st.at, 10)
		if diff := cmp.Diff(st.want, hookPairs(got)); diff != "" || !next.Equal(st.wantNext) {
			t.Errorf("%s: claimed (-want +got):\n%s next=%v, want %v", st.name, diff, next, st.wantNext)
		}
		second = got
	}
	if err := h.finish(first[0], h.at(62*time.Second), onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("FinishDelivery by the first owner = %v, want ErrLeaseLost", err)
	}
	if lines, _ := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: e.ID}); len(lines) != 1 {
		t.Errorf("log after a lost lease = %+v, want the attempt's line", lines)
	}
	if len(second) != 1 {
		t.Fatal("no second claim")
	}
	if second[0].Owner != "w2" || !second[0].LeaseUntil.Equal(h.at(121*time.Second)) {
		t.Errorf("second claim = %+v", second[0])
	}
	if err := h.finishOn(other, second[0], h.at(63*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("FinishDelivery by the owner = %v", err)
	}
	if got, next := h.claim("w1", h.at(time.Hour), 10); len(got) != 0 || !next.IsZero() {
		t.Errorf("claim of an empty queue = %v, next %v; want none, zero", hookPairs(got), next)
	}
	if n, err := h.s.QueuedDeliveries(ctx); n != 0 || err != nil {
		t.Errorf("QueuedDeliveries = %d, %v; want 0", n, err)
	}
}

// TestWebhookStaleFinishBySameOwner: a claim that lapsed and was claimed
// again by the same owner is a new claim; finishing the old one is
// ErrLeaseLost and leaves the new one in place.
func TestWebhookStaleFinishBySameOwner(t *testing.T) {
	h := newHookEnv(t)
	h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now))
	first, _ := h.claim("w1", h.now, 10)
	again, _ := h.claim("w1", h.at(61*time.Second), 10)
	if len(first) != 1 || len(again) != 1 {
		t.Fatalf("claims = %v then %v, want the delivery each time", hookPairs(first), hookPairs(again))
	}
	if err := h.finish(first[0], h.at(62*time.Second), onboarding.DeliveryResult{RetryAt: h.at(time.Hour)}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("FinishDelivery of the lapsed claim = %v, want ErrLeaseLost", err)
	}
	for _, q := range h.queued() {
		if q.Owner != "w1" || !q.LeaseUntil.Equal(again[0].LeaseUntil) || q.Attempts != 0 {
			t.Errorf("after the stale finish: %+v, want the second claim untouched", q)
		}
	}
	if err := h.finish(again[0], h.at(63*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("FinishDelivery of the current claim = %v", err)
	}
	if n, err := h.s.QueuedDeliveries(context.Background()); n != 0 || err != nil {
		t.Errorf("QueuedDeliveries = %d, %v; want 0", n, err)
	}
}

// TestWebhookFinishEndpointChange: r.Endpoint applies to the endpoint as
// it is when the attempt is recorded (a count raised since the claim is
// reset by a success), and a change that changes nothing writes nothing,
// so that the finishes of one endpoint's deliveries do not wait for one
// another.
func TestWebhookFinishEndpointChange(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now), h.event(onboarding.EventApplicationCreated, "acme", "app-2", h.now))
	claimed, _ := h.claim("w1", h.now, 10)
	if len(claimed) != 2 {
		t.Fatalf("claimed %v, want both", hookPairs(claimed))
	}
	version := func() string {
		var v string
		if err := h.s.pool.QueryRow(ctx, `SELECT xmin::text FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := h.s.UpdateEndpoint(ctx, ep.ID, func(ep *onboarding.Endpoint) error { ep.Exhausted = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	reset := func(ep *onboarding.Endpoint) { ep.Exhausted = 0 }
	if err := h.finish(claimed[0], h.at(time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
		t.Fatal(err)
	}
	got, err := h.s.Endpoint(ctx, ep.ID)
	if err != nil || got.Exhausted != 0 {
		t.Fatalf("endpoint after a success = %+v, %v; want its count reset", got, err)
	}
	before := version()
	if err := h.finish(claimed[1], h.at(2*time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
		t.Fatal(err)
	}
	if after := version(); after != before {
		t.Errorf("a change that changes nothing rewrote the endpoint (xmin %s, then %s)", before, after)
	}
}

// TestWebhookFinishDelivery checks what each result leaves in the queue.
func TestWebhookFinishDelivery(t *testing.T) {
	type state struct {
		gone     bool
		attempts int
		due      time.Duration
		head     bool
	}
	tests := []struct {
		name string
		// secondAt is when the second event of the subject happened,
		// relative to the first.
		secondAt time.Duration
		done     bool
		retry    time.Duration // relative to the claim
		// finishTwice finishes the claim a second time, which must fail.
		finishTwice           bool
		wantFirst, wantSecond state
	}{
		{"retry", time.Second, false, 5 * time.Minute, false,
			state{attempts: 1, due: 5 * time.Minute, head: true}, state{due: time.Second}},
		{"done promotes the next, due now", time.Second, true, 0, false,
			state{gone: true}, state{due: 2 * time.Second, head: true}},
		{"done promotes the next, due when it happened", 10 * time.Minute, true, 0, false,
			state{gone: true}, state{due: 10 * time.Minute, head: true}},
		{"finished twice", time.Second, true, 0, true,
			state{gone: true}, state{due: 2 * time.Second, head: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHookEnv(t)
			ep := h.endpoint("acme")
			first := h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now)
			second := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.at(tt.secondAt))
			h.add(first, second)
			claimed, _ := h.claim("w1", h.now, 10)
			if diff := cmp.Diff([]string{hookPair(ep.ID, first.ID)}, hookPairs(claimed)); diff != "" {
				t.Fatalf("claimed (-want +got):\n%s", diff)
			}
			r := onboarding.DeliveryResult{Done: tt.done}
			if !tt.done {
				r.RetryAt = h.at(tt.retry)
			}
			if err := h.finish(claimed[0], h.at(2*time.Second), r); err != nil {
				t.Fatal(err)
			}
			if tt.finishTwice {
				if err := h.finish(claimed[0], h.at(3*time.Second), r); !errors.Is(err, onboarding.ErrLeaseLost) {
					t.Errorf("second FinishDelivery = %v, want ErrLeaseLost", err)
				}
			}
			queued := h.queued()
			for _, c := range []struct {
				e    *onboarding.Event
				want state
			}{{first, tt.wantFirst}, {second, tt.wantSecond}} {
				q, ok := queued[hookPair(ep.ID, c.e.ID)]
				got := state{gone: true}
				if ok {
					got = state{attempts: q.Attempts, due: q.DueAt.Sub(h.now), head: q.Head}
					if q.Owner != "" || !q.LeaseUntil.IsZero() {
						t.Errorf("%s still leased: %+v", c.e.Type, q)
					}
				}
				if got != c.want {
					t.Errorf("%s after the finish = %+v, want %+v", c.e.Type, got, c.want)
				}
			}
			lines, _ := h.s.DeliveryAttempts(context.Background(), onboarding.AttemptQuery{EventID: first.ID})
			want := 1
			if tt.finishTwice {
				want = 2
			}
			if len(lines) != want {
				t.Errorf("%d log lines, want %d", len(lines), want)
			}
		})
	}
}

// TestWebhookClaimLimits checks c.Limit, c.MaxInFlight (counting the
// caller's in-flight deliveries and this claim's, without changing the
// caller's map) and the report of when to come back, which leaves out the
// due deliveries an endpoint's cap holds back.
func TestWebhookClaimLimits(t *testing.T) {
	h := newHookEnv(t)
	busy, idle := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme", onboarding.EventApplicationCreated)
	for i := 0; i < 3; i++ {
		h.add(h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.at(time.Duration(i)*time.Second)))
	}
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-9", h.at(4*time.Second)))
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-8", h.at(time.Hour)))
	atCap, next, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.at(time.Minute), Lease: time.Minute,
		Limit: 10, InFlight: map[string]int{busy.ID: 2, idle.ID: 3}, MaxInFlight: func(string) int { return 2 }})
	if err != nil || len(atCap) != 0 || !next.IsZero() {
		t.Errorf("every endpoint at its cap: claimed %v, next %v, %v; want none, zero", hookPairs(atCap), next, err)
	}
	inFlight := map[string]int{busy.ID: 1}
	claimed, next, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.at(time.Minute), Lease: time.Minute,
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
	if !next.Equal(h.at(2 * time.Minute)) {
		t.Errorf("next = %v, want the leases' end %v, not the due time of a delivery held back", next, h.at(2*time.Minute))
	}
	if diff := cmp.Diff(map[string]int{busy.ID: 1}, inFlight); diff != "" {
		t.Errorf("the caller's InFlight changed (-want +got):\n%s", diff)
	}
	claimed, next = h.claim("w1", h.at(time.Minute), 1)
	if len(claimed) != 1 || !next.Equal(h.at(2*time.Second)) {
		t.Errorf("limit 1: claimed %v, next %v; want one, next %v", hookPairs(claimed), next, h.at(2*time.Second))
	}
	claimed, next = h.claim("w1", h.at(time.Minute), 1)
	if len(claimed) != 1 || !next.Equal(h.at(2*time.Minute)) {
		t.Errorf("the last due: claimed %v, next %v; want one, the first leases' end %v", hookPairs(claimed), next, h.at(2*time.Minute))
	}
	claimed, next = h.claim("w1", h.at(time.Minute), 1)
	if len(claimed) != 0 || !next.Equal(h.at(2*time.Minute)) {
		t.Errorf("nothing due: claimed %v, next %v; want none, the first leases' end %v", hookPairs(claimed), next, h.at(2*time.Minute))
	}
}

// TestWebhookNoHeadOfLineBlockingAcrossEndpoints queues 50 heads for an
// endpoint at its in-flight cap, and one for another endpoint due after
// them: a claim takes the other endpoint's.
func TestWebhookNoHeadOfLineBlockingAcrossEndpoints(t *testing.T) {
	h := newHookEnv(t)
	capped, free := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme", onboarding.EventApplicationCreated)
	var events []*onboarding.Event
	for i := 0; i < 50; i++ {
		events = append(events, h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.at(time.Duration(i)*time.Millisecond)))
	}
	h.write(events...)
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
	if diff := cmp.Diff([]string{hookPair(free.ID, behind.ID)}, hookPairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	h.queued()
}

// TestWebhookClaimSharesTheLimit queues ten due heads for each of two
// endpoints: a claim with limit 4 takes two of each, the earliest of each.
func TestWebhookClaimSharesTheLimit(t *testing.T) {
	h := newHookEnv(t)
	a, b := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme", onboarding.EventApplicationCreated)
	var want []string
	for i := 0; i < 10; i++ {
		ea := h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("a-%d", i), h.at(time.Duration(i)*time.Millisecond))
		h.add(ea)
		if i < 2 {
			want = append(want, hookPair(a.ID, ea.ID))
		}
	}
	for i := 0; i < 10; i++ {
		eb := h.event(onboarding.EventApplicationCreated, "acme", fmt.Sprintf("b-%d", i), h.at(time.Second+time.Duration(i)*time.Millisecond))
		h.add(eb)
		if i < 2 {
			want = append(want, hookPair(b.ID, eb.ID))
		}
	}
	claimed, next := h.claim("w1", h.at(time.Minute), 4)
	sort.Strings(want)
	if diff := cmp.Diff(want, hookPairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if want := h.at(2 * time.Millisecond); !next.Equal(want) {
		t.Errorf("next = %v, want the first head left %v", next, want)
	}
	h.queued()
}

// TestWebhookQueueSurvivesRestart closes the store with deliveries queued
// and one claimed: another Store opened on the database finds the queue
// as it was and takes up the claimed one once its lease lapses.
func TestWebhookQueueSurvivesRestart(t *testing.T) {
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	a1 := h.event(onboarding.EventApplicationCreated, "acme", "app-a", h.now)
	a2 := h.event(onboarding.EventApplicationSent, "acme", "app-a", h.now)
	b1 := h.event(onboarding.EventApplicationCreated, "acme", "app-b", h.at(time.Hour))
	h.add(a1, a2, b1)
	if claimed, _ := h.claim("w1", h.now, 10); len(claimed) != 1 {
		t.Fatalf("claimed %v", hookPairs(claimed))
	}
	before := h.queued()
	if err := h.s.Close(); err != nil {
		t.Fatal(err)
	}
	h.s = h.open()
	if diff := cmp.Diff(before, h.queued()); diff != "" {
		t.Errorf("queue after reopening (-want +got):\n%s", diff)
	}
	claimed, _ := h.claim("w2", h.at(2*time.Hour), 10)
	if diff := cmp.Diff([]string{hookPair(ep.ID, a1.ID), hookPair(ep.ID, b1.ID)}, hookPairs(claimed)); diff != "" {
		t.Errorf("claimed after reopening (-want +got):\n%s", diff)
	}
	if n, _ := h.s.QueuedDeliveries(context.Background()); n != 3 {
		t.Errorf("QueuedDeliveries = %d, want 3", n)
	}
}

// TestWebhookConcurrentClaimsDoNotOverlap runs workers on two Stores (two
// instances) claiming and finishing at once: every delivery is claimed
// exactly once, and a subject's events are finished in order.
func TestWebhookConcurrentClaimsDoNotOverlap(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	stores := []*Store{h.s, h.open()}
	h.endpoint("acme")
	h.endpoint("acme", onboarding.EventApplicationSent)
	var events []*onboarding.Event
	for i := 0; i < 60; i++ {
		events = append(events, h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%10), h.now))
	}
	h.write(events...)
	const workers = 6
	var mu sync.Mutex
	var done []string // endpoint and event of each delivery, as finished
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			s := stores[w%len(stores)]
			owner := fmt.Sprintf("w%d", w)
			for {
				claimed, next, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: owner, Now: h.now, Lease: time.Hour, Limit: 3})
				if err != nil {
					errs <- err
					return
				}
				if len(claimed) == 0 && next.IsZero() {
					return
				}
				for _, d := range claimed {
					mu.Lock()
					done = append(done, hookPair(d.EndpointID, d.EventID))
					mu.Unlock()
					if err := h.finishOn(s, d, h.now, onboarding.DeliveryResult{Done: true}); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(done) != 2*len(events) {
		t.Errorf("%d deliveries made, want %d", len(done), 2*len(events))
	}
	seen := map[string]bool{}
	for _, p := range done {
		if seen[p] {
			t.Errorf("%s delivered twice", p)
		}
		seen[p] = true
	}
	// Events of one subject were queued in id order; each was claimed only
	// after the one before it finished.
	subject := map[string]string{}
	for _, e := range events {
		subject[e.ID] = e.Subject
	}
	last := map[string]string{}
	for _, p := range done {
		ep, id, _ := cutPair(p)
		k := ep + " " + subject[id]
		if prev := last[k]; prev > id {
			t.Errorf("%s delivered after %s of the same subject", id, prev)
		}
		last[k] = id
	}
}

// cutPair splits a hookPair.
func cutPair(p string) (endpointID, eventID string, ok bool) {
	for i := range p {
		if p[i] == ' ' {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

// TestWebhookFinishDeliveriesBatch: a batch records every attempt in one
// commit, in order: each result applies when its claim still holds, a
// stale claim in the batch is reported lost without holding up the
// others, attempts of one endpoint see each other's change of it, and an
// endpoint a result of the batch disabled has its queue dropped.
func TestWebhookFinishDeliveriesBatch(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	other := h.endpoint("acme")
	for _, app := range []string{"app-1", "app-2", "app-3", "app-4"} {
		h.add(h.event(onboarding.EventApplicationCreated, "acme", app, h.now))
	}
	first, _ := h.claim("w1", h.now, 10) // eight: four events, two endpoints
	if len(first) != 8 {
		t.Fatalf("claimed %v, want eight", hookPairs(first))
	}
	// Every lease lapses and w1 claims all eight again: its attempts of the
	// other endpoint's deliveries are finished under the first claims,
	// which no longer hold.
	second, _ := h.claim("w1", h.at(61*time.Second), 10)
	if len(second) != 8 {
		t.Fatalf("claimed again %v, want all eight", hookPairs(second))
	}
	stale := map[string]*onboarding.Delivery{}
	for _, d := range first {
		stale[hookPair(d.EndpointID, d.EventID)] = d
	}
	if _, err := h.s.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error { e.Exhausted = 4; return nil }); err != nil {
		t.Fatal(err)
	}
	var batch []onboarding.FinishedDelivery
	var wantLost []bool
	retryAt := h.at(time.Hour)
	var epSeen int
	for _, d := range second {
		r := onboarding.DeliveryResult{Attempt: onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type,
			EndpointID: d.EndpointID, OrgID: "acme", Attempt: 1, At: h.at(90 * time.Second)}}
		i := epSeen
		if d.EndpointID == ep.ID {
			epSeen++
		}
		switch {
		case d.EndpointID != ep.ID:
			d = stale[hookPair(d.EndpointID, d.EventID)]
		case i == 0:
			r.Done = true
			r.Endpoint = func(e *onboarding.Endpoint) { e.Exhausted = 0 }
		case i == 1:
			r.RetryAt = retryAt
		default: // given up, twice in a row: the second disables
			r.Done = true
			r.Endpoint = func(e *onboarding.Endpoint) {
				if e.Exhausted++; e.Exhausted >= 2 {
					e.Enabled = false
				}
			}
		}
		batch = append(batch, onboarding.FinishedDelivery{Delivery: d, Result: r})
		wantLost = append(wantLost, d.EndpointID != ep.ID)
	}
	lost, err := h.s.FinishDeliveries(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantLost, lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	// One commit: the batch's log lines were written by one transaction
	// (the drop of the disabled endpoint's queue logs its retried delivery
	// in a transaction of its own).
	rows, err := h.s.pool.Query(ctx, `SELECT xmin::text, count(*) FROM delivery_attempts GROUP BY 1 ORDER BY min(id)`)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for rows.Next() {
		var xmin string
		var n int
		if err := rows.Scan(&xmin, &n); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{len(batch), 1}, counts); diff != "" {
		t.Errorf("log lines per transaction (-want +got):\n%s", diff)
	}
	got, err := h.s.Endpoint(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.Exhausted != 2 {
		t.Errorf("endpoint after the batch: enabled %v, exhausted %d; want disabled at 2 (the success reset 4, two give-ups followed)", got.Enabled, got.Exhausted)
	}
	for _, q := range h.queued() {
		if q.EndpointID == ep.ID {
			t.Errorf("left queued for the disabled endpoint: %+v", q)
		}
		if q.EndpointID == other.ID && !q.LeaseUntil.Equal(second[0].LeaseUntil) {
			t.Errorf("the other endpoint's delivery %+v, want it still under the second claim", q)
		}
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
