package storetest

import (
	"context"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var deliveryCases = []suiteCase{
	{"PerSubjectOrder", testPerSubjectOrder},
	{"ClaimLease", testClaimLease},
	{"LapsedLeaseIsClaimedByAnother", testLapsedLeaseIsClaimedByAnother},
	{"StaleFinishBySameOwner", testStaleFinishBySameOwner},
	{"Finish", testFinishDelivery},
	{"FinishEndpointChange", testFinishDeliveryEndpointChange},
	{"FinishBatch", testFinishDeliveriesBatch},
	{"Redeliver", testRedeliver},
	{"RedeliverBehindTheHead", testRedeliverBehindTheHead},
	{"ClaimLimits", testClaimLimits},
	{"NoHeadOfLineBlockingAcrossEndpoints", testNoHeadOfLineBlocking},
	{"ClaimSharesTheLimit", testClaimSharesTheLimit},
	{"QueueSurvivesRestart", testQueueSurvivesRestart},
	{"Log", testDeliveryAttempts},
	{"ConcurrentClaimsDoNotOverlap", testConcurrentClaimsDoNotOverlap},
	{"ConcurrentClaimsTwoInstances", testConcurrentClaimsTwoInstances},
}

// testPerSubjectOrder checks that one endpoint receives the events of one
// subject one at a time, in order, while other subjects and other endpoints
// go ahead.
func testPerSubjectOrder(t *testing.T, open Opener) {
	h := newHooks(t, open)
	e1, e2 := h.Endpoint("acme"), h.Endpoint("acme")
	a1 := h.Event(onboarding.EventApplicationCreated, "acme", "app-a", h.Now)
	a2 := h.Event(onboarding.EventApplicationSent, "acme", "app-a", h.At(time.Second))
	b1 := h.Event(onboarding.EventApplicationCreated, "acme", "app-b", h.At(2*time.Second))
	h.Add(a1, a2, b1)
	later := h.At(time.Minute) // a2 is due too
	claimed, next := h.Claim("w1", later, 10)
	want := []string{fixture.Pair(e1.ID, a1.ID), fixture.Pair(e1.ID, b1.ID), fixture.Pair(e2.ID, a1.ID), fixture.Pair(e2.ID, b1.ID)}
	if diff := cmp.Diff(sorted(want...), fixture.Pairs(claimed)); diff != "" {
		t.Fatalf("first claim (-want +got):\n%s", diff)
	}
	if !next.Equal(later.Add(time.Minute)) {
		t.Errorf("next = %v, want the end of the leases %v", next, later.Add(time.Minute))
	}
	if again, _ := h.Claim("w2", later, 10); len(again) != 0 {
		t.Errorf("a2 claimed while a1 is in flight: %v", fixture.Pairs(again))
	}
	for _, d := range claimed {
		if d.EndpointID == e1.ID && d.EventID == a1.ID {
			if d.Event.ID != a1.ID || d.Endpoint.ID != e1.ID || d.Owner != "w1" || !d.LeaseUntil.Equal(later.Add(time.Minute)) {
				t.Errorf("claimed delivery = %+v", d)
			}
			if diff := cmp.Diff(a1, d.Event); diff != "" {
				t.Errorf("claimed event (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(e1, d.Endpoint); diff != "" {
				t.Errorf("claimed endpoint (-want +got):\n%s", diff)
			}
			if err := h.Finish(d, later, onboarding.DeliveryResult{Done: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	claimed, _ = h.Claim("w1", later, 10)
	if diff := cmp.Diff([]string{fixture.Pair(e1.ID, a2.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claim after a1 reached e1 (-want +got):\n%s", diff)
	}
}

// testClaimLease checks that a claimed delivery is not claimed again
// before its lease lapses, and is after; the worker that lost it cannot
// finish it, though its attempt is logged.
func testClaimLease(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	h.Add(e)
	first, _ := h.Claim("w1", h.Now, 10)
	if len(first) != 1 {
		t.Fatalf("first claim = %v", fixture.Pairs(first))
	}
	steps := []struct {
		name     string
		owner    string
		at       time.Time
		want     []string
		wantNext time.Time
	}{
		{"another owner before the lease lapses", "w2", h.At(30 * time.Second), []string{}, h.At(time.Minute)},
		{"the same owner before the lease lapses", "w1", h.At(59 * time.Second), []string{}, h.At(time.Minute)},
		{"a nanosecond before the lease lapses", "w2", h.At(time.Minute - time.Nanosecond), []string{}, h.At(time.Minute)},
		{"another owner after the lease lapsed", "w2", h.At(61 * time.Second), []string{fixture.Pair(ep.ID, e.ID)}, h.At(121 * time.Second)},
	}
	var second []*onboarding.Delivery
	for _, st := range steps {
		got, next := h.Claim(st.owner, st.at, 10)
		if diff := cmp.Diff(st.want, fixture.Pairs(got)); diff != "" || !next.Equal(st.wantNext) {
			t.Errorf("%s: claimed (-want +got):\n%s next=%v, want %v", st.name, diff, next, st.wantNext)
		}
		second = got
	}
	if err := h.Finish(first[0], h.At(62*time.Second), onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("finish by the first owner = %v, want ErrLeaseLost", err)
	}
	if lines, _ := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: e.ID}); len(lines) != 1 {
		t.Errorf("log after a lost lease = %+v, want the attempt's line", lines)
	}
	if len(second) != 1 {
		t.Fatal("no second claim")
	}
	if err := h.Finish(second[0], h.At(63*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("finish by the owner = %v", err)
	}
	if got, next := h.Claim("w1", h.At(time.Hour), 10); len(got) != 0 || !next.IsZero() {
		t.Errorf("claim of an empty queue = %v, next %v; want none, zero", fixture.Pairs(got), next)
	}
	if n := h.Queued(); n != 0 {
		t.Errorf("QueuedDeliveries = %d; want 0", n)
	}
}

// testLapsedLeaseIsClaimedByAnother claims a head for w1 and lets its
// lease lapse: w2 claims it then, not before, and w1's finish is refused.
func testLapsedLeaseIsClaimedByAnother(t *testing.T, open Opener) {
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	h.Add(e)
	first, _ := h.Claim("w1", h.Now, 4)
	if diff := cmp.Diff([]string{fixture.Pair(ep.ID, e.ID)}, fixture.Pairs(first)); diff != "" {
		t.Fatalf("w1's claim (-want +got):\n%s", diff)
	}
	if got, next := h.Claim("w2", h.At(time.Minute-time.Nanosecond), 4); len(got) != 0 || !next.Equal(h.At(time.Minute)) {
		t.Errorf("w2's claim while the lease holds = %v, next %v; want none, %v", fixture.Pairs(got), next, h.At(time.Minute))
	}
	got, _ := h.Claim("w2", h.At(time.Minute), 4)
	if len(got) != 1 || got[0].Owner != "w2" || !got[0].LeaseUntil.Equal(h.At(2*time.Minute)) {
		t.Fatalf("w2's claim once the lease lapsed = %+v; want the delivery, leased to w2 until %v", got, h.At(2*time.Minute))
	}
	if err := h.Finish(first[0], h.At(time.Minute), onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("w1's finish = %v, want ErrLeaseLost", err)
	}
	if err := h.Finish(got[0], h.At(time.Minute), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("w2's finish = %v", err)
	}
	if n := h.Queued(); n != 0 {
		t.Errorf("QueuedDeliveries after w2 finished = %d", n)
	}
}

// testStaleFinishBySameOwner: a claim that lapsed and was claimed again by
// the same owner is a new claim; finishing the old one is ErrLeaseLost and
// leaves the new one in place.
func testStaleFinishBySameOwner(t *testing.T, open Opener) {
	h := newHooks(t, open)
	h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now))
	first, _ := h.Claim("w1", h.Now, 10)
	again, _ := h.Claim("w1", h.At(61*time.Second), 10)
	if len(first) != 1 || len(again) != 1 {
		t.Fatalf("claims = %v then %v, want the delivery each time", fixture.Pairs(first), fixture.Pairs(again))
	}
	if err := h.Finish(first[0], h.At(62*time.Second), onboarding.DeliveryResult{RetryAt: h.At(time.Hour)}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("finish of the lapsed claim = %v, want ErrLeaseLost", err)
	}
	// The second claim holds until its lease's end, untouched.
	if got, next := h.Claim("w2", again[0].LeaseUntil.Add(-time.Nanosecond), 10); len(got) != 0 || !next.Equal(again[0].LeaseUntil) {
		t.Errorf("claim during the second lease = %v, next %v; want none, %v", fixture.Pairs(got), next, again[0].LeaseUntil)
	}
	if err := h.Finish(again[0], h.At(63*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("finish of the current claim = %v", err)
	}
	if n := h.Queued(); n != 0 {
		t.Errorf("QueuedDeliveries = %d; want 0", n)
	}
}

// testFinishDelivery checks what each result leaves in the queue: a retry
// keeps the delivery at the subject's head, due at RetryAt with its
// attempt counted; done promotes the next of the subject, due when it
// happened or now, whichever is later; a second finish of one claim is
// ErrLeaseLost and changes nothing but the log.
func testFinishDelivery(t *testing.T, open Opener) {
	tests := []struct {
		name        string
		secondAt    time.Duration // when the subject's second event happened, after the first
		result      onboarding.DeliveryResult
		retryAt     time.Duration // of result, after the start
		finishTwice bool
		// The claims that follow the finish: what is due at each time.
		firstDue  time.Duration // -1: gone
		secondDue time.Duration // -1: not before firstDue's delivery is done
	}{
		{"retry", time.Second, onboarding.DeliveryResult{}, 5 * time.Minute, false, 5 * time.Minute, -1},
		{"done promotes the next, due now", time.Second, onboarding.DeliveryResult{Done: true}, 0, false, -1, 2 * time.Second},
		{"done promotes the next, due when it happened", 10 * time.Minute, onboarding.DeliveryResult{Done: true}, 0, false, -1, 10 * time.Minute},
		{"finished twice", time.Second, onboarding.DeliveryResult{Done: true}, 0, true, -1, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHooks(t, open)
			ep := h.Endpoint("acme")
			first := h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now)
			second := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(tt.secondAt))
			h.Add(first, second)
			claimed, _ := h.Claim("w1", h.Now, 10)
			if diff := cmp.Diff([]string{fixture.Pair(ep.ID, first.ID)}, fixture.Pairs(claimed)); diff != "" {
				t.Fatalf("claimed (-want +got):\n%s", diff)
			}
			r := tt.result
			if tt.retryAt != 0 {
				r.RetryAt = h.At(tt.retryAt)
			}
			if err := h.Finish(claimed[0], h.At(2*time.Second), r); err != nil {
				t.Fatal(err)
			}
			if tt.finishTwice {
				if err := h.Finish(claimed[0], h.At(3*time.Second), r); !errors.Is(err, onboarding.ErrLeaseLost) {
					t.Errorf("second finish = %v, want ErrLeaseLost", err)
				}
			}
			lines, _ := h.S.DeliveryAttempts(context.Background(), onboarding.AttemptQuery{EventID: first.ID})
			if want := 1; tt.finishTwice {
				if len(lines) != 2 {
					t.Errorf("%d log lines, want 2", len(lines))
				}
			} else if len(lines) != want {
				t.Errorf("%d log lines, want %d", len(lines), want)
			}
			// What is due, and when: the head, unleased, nothing behind it.
			due, ev, attempts := tt.secondDue, second, 0
			if tt.firstDue >= 0 {
				due, ev, attempts = tt.firstDue, first, 1
			}
			if got, next := h.Claim("w2", h.At(due-time.Nanosecond), 10); len(got) != 0 || !next.Equal(h.At(due)) {
				t.Errorf("claim just before it is due = %v, next %v; want none, %v", fixture.Pairs(got), next, h.At(due))
			}
			got, _ := h.Claim("w2", h.At(due), 10)
			if diff := cmp.Diff([]string{fixture.Pair(ep.ID, ev.ID)}, fixture.Pairs(got)); diff != "" {
				t.Fatalf("claim when due (-want +got):\n%s", diff)
			}
			if got[0].Attempts != attempts || !got[0].NextAt.Equal(h.At(due)) {
				t.Errorf("claimed %+v, want %d attempts, due at %v", got[0], attempts, h.At(due))
			}
			if n := h.Queued(); n != 1+btoi(tt.firstDue >= 0) {
				t.Errorf("QueuedDeliveries = %d", n)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// testFinishDeliveryEndpointChange: r.Endpoint applies to the endpoint as
// it is when the attempt is recorded (a count raised since the claim is
// reset by a success).
func testFinishDeliveryEndpointChange(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now), h.Event(onboarding.EventApplicationCreated, "acme", "app-2", h.Now))
	claimed, _ := h.Claim("w1", h.Now, 10)
	if len(claimed) != 2 {
		t.Fatalf("claimed %v, want both", fixture.Pairs(claimed))
	}
	if _, err := h.S.UpdateEndpoint(ctx, ep.ID, func(ep *onboarding.Endpoint) error { ep.Exhausted = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	reset := func(ep *onboarding.Endpoint) { ep.Exhausted = 0 }
	if err := h.Finish(claimed[0], h.At(time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
		t.Fatal(err)
	}
	got, err := h.S.Endpoint(ctx, ep.ID)
	if err != nil || got.Exhausted != 0 {
		t.Fatalf("endpoint after a success = %+v, %v; want its count reset", got, err)
	}
	count := func(ep *onboarding.Endpoint) { ep.Exhausted++ }
	if err := h.Finish(claimed[1], h.At(2*time.Second), onboarding.DeliveryResult{Done: true, Endpoint: count}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.S.Endpoint(ctx, ep.ID); err != nil || got.Exhausted != 1 || !got.Enabled {
		t.Errorf("endpoint after a give-up = %+v, %v; want enabled, count 1", got, err)
	}
}

// testFinishDeliveriesBatch: a batch records every attempt in order: each
// result applies when its claim still holds, a stale claim in the batch is
// reported lost without holding up the others, attempts of one endpoint
// see each other's change of it, and an endpoint a result of the batch
// disabled has its queue dropped.
func testFinishDeliveriesBatch(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	other := h.Endpoint("acme")
	for _, app := range []string{"app-1", "app-2", "app-3", "app-4"} {
		h.Add(h.Event(onboarding.EventApplicationCreated, "acme", app, h.Now))
	}
	first, _ := h.Claim("w1", h.Now, 10) // eight: four events, two endpoints
	if len(first) != 8 {
		t.Fatalf("claimed %v, want eight", fixture.Pairs(first))
	}
	// Every lease lapses and w1 claims all eight again: its attempts of the
	// other endpoint's deliveries are finished under the first claims,
	// which no longer hold.
	second, _ := h.Claim("w1", h.At(61*time.Second), 10)
	if len(second) != 8 {
		t.Fatalf("claimed again %v, want all eight", fixture.Pairs(second))
	}
	sort.Slice(second, func(i, j int) bool { return second[i].EventID < second[j].EventID })
	stale := map[string]*onboarding.Delivery{}
	for _, d := range first {
		stale[fixture.Pair(d.EndpointID, d.EventID)] = d
	}
	if _, err := h.S.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error { e.Exhausted = 4; return nil }); err != nil {
		t.Fatal(err)
	}
	var batch []onboarding.FinishedDelivery
	var wantLost []bool
	retryAt := h.At(time.Hour)
	var epSeen int
	var retried string
	for _, d := range second {
		r := onboarding.DeliveryResult{Attempt: onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type,
			EndpointID: d.EndpointID, OrgID: "acme", Attempt: 1, At: h.At(90 * time.Second)}}
		i := epSeen
		if d.EndpointID == ep.ID {
			epSeen++
		}
		switch {
		case d.EndpointID != ep.ID:
			d = stale[fixture.Pair(d.EndpointID, d.EventID)]
		case i == 0:
			r.Done = true
			r.Endpoint = func(e *onboarding.Endpoint) { e.Exhausted = 0 }
		case i == 1:
			r.RetryAt = retryAt
			retried = d.EventID
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
	h.Now = h.At(90 * time.Second)
	lost, err := h.S.FinishDeliveries(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	fixture.CheckQueues(t, h.S)
	if diff := cmp.Diff(wantLost, lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	got, err := h.S.Endpoint(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.Exhausted != 2 {
		t.Errorf("endpoint after the batch: enabled %v, exhausted %d; want disabled at 2 (the success reset 4, two give-ups followed)", got.Enabled, got.Exhausted)
	}
	// Every attempt is logged, and the retried delivery's drop.
	lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(batch)+1 {
		t.Errorf("%d log lines, want the batch's %d and the drop's", len(lines), len(batch))
	}
	dropped, _ := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, EventID: retried, FailedOnly: true})
	if len(dropped) != 2 {
		t.Errorf("lines of the retried delivery = %+v, want its attempt and its drop", dropped)
	}
	// The other endpoint's deliveries are still under the second claim;
	// the disabled one's are gone.
	if n := h.Queued(); n != 4 {
		t.Errorf("QueuedDeliveries = %d, want the other endpoint's 4", n)
	}
	if got, next := h.Claim("w2", second[0].LeaseUntil.Add(-time.Nanosecond), 10); len(got) != 0 || !next.Equal(second[0].LeaseUntil) {
		t.Errorf("claim during the second claims' leases = %v, next %v", fixture.Pairs(got), next)
	}
	if got, _ := h.Claim("w2", second[0].LeaseUntil, 10); len(got) != 4 || got[0].EndpointID != other.ID {
		t.Errorf("claim after the second claims' leases = %v, want the other endpoint's 4", fixture.Pairs(got))
	}
}

// testRedeliver queues events again: for the endpoints that want them, or
// one named; a delivery still queued starts over rather than doubling.
func testRedeliver(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	all, sentOnly, createdOnly, off, other := h.Endpoint("acme"), h.Endpoint("acme", onboarding.EventApplicationSent),
		h.Endpoint("acme", onboarding.EventApplicationCreated), h.Endpoint("acme"), h.Endpoint("acme2")
	h.Disable(off)
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	h.Add(e)
	// Deliver it everywhere, so that nothing is queued.
	claimed, _ := h.Claim("w1", h.Now, 10)
	h.FinishAll(claimed, h.Now)
	errTests := []struct {
		name, event, endpoint string
	}{
		{"an unknown event", "evt_01KAJ6F4G0000000000000000A", ""},
		{"not an event id", "app-1", ""},
		{"an unknown endpoint", e.ID, "we_nope"},
		{"another organization's endpoint", e.ID, other.ID},
	}
	for _, tt := range errTests {
		if got, err := h.S.Redeliver(ctx, tt.event, tt.endpoint, h.Now); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("Redeliver(%s) = %v, %v; want ErrNotFound", tt.name, got, err)
		}
	}
	at := h.At(time.Minute)
	tests := []struct {
		name     string
		endpoint string
		want     []string
	}{
		{"every endpoint that wants it", "", []string{all.ID, sentOnly.ID}},
		{"a named endpoint, whatever its filter", createdOnly.ID, []string{createdOnly.ID}},
		{"a disabled endpoint", off.ID, nil},
		{"again, while queued", "", []string{all.ID, sentOnly.ID}},
	}
	for _, tt := range tests {
		got, err := h.S.Redeliver(ctx, e.ID, tt.endpoint, at)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		fixture.CheckQueues(t, h.S)
		slices.Sort(got)
		if diff := cmp.Diff(sorted(tt.want...), sorted(got...)); diff != "" {
			t.Errorf("%s: queued for (-want +got):\n%s", tt.name, diff)
		}
	}
	if n := h.Queued(); n != 3 {
		t.Errorf("QueuedDeliveries = %d, want 3", n)
	}
	if got, next := h.Claim("w1", h.At(59*time.Second), 10); len(got) != 0 || !next.Equal(at) {
		t.Errorf("claim before the redelivery is due = %v, next %v; want none, %v", fixture.Pairs(got), next, at)
	}

	// A delivery that failed once and is leased starts over.
	claimed, _ = h.Claim("w1", at, 10)
	want := sorted(fixture.Pair(all.ID, e.ID), fixture.Pair(createdOnly.ID, e.ID), fixture.Pair(sentOnly.ID, e.ID))
	if diff := cmp.Diff(want, fixture.Pairs(claimed)); diff != "" {
		t.Fatalf("claimed (-want +got):\n%s", diff)
	}
	if err := h.Finish(claimed[0], at, onboarding.DeliveryResult{RetryAt: h.At(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	again := h.At(2 * time.Minute)
	for _, d := range claimed {
		if _, err := h.S.Redeliver(ctx, e.ID, d.EndpointID, again); err != nil {
			t.Fatal(err)
		}
	}
	fixture.CheckQueues(t, h.S)
	if err := h.Finish(claimed[1], again, onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("finishing a delivery that started over = %v, want ErrLeaseLost", err)
	}
	if got, next := h.Claim("w2", again.Add(-time.Nanosecond), 10); len(got) != 0 || !next.Equal(again) {
		t.Errorf("claim before the second redelivery is due = %v, next %v; want none, %v", fixture.Pairs(got), next, again)
	}
	got, _ := h.Claim("w2", again, 10)
	if diff := cmp.Diff(want, fixture.Pairs(got)); diff != "" {
		t.Errorf("claim after redelivering (-want +got):\n%s", diff)
	}
	for _, d := range got {
		if d.Attempts != 0 || !d.NextAt.Equal(again) {
			t.Errorf("after redelivering: %+v, want no attempts, due at %v", d, again)
		}
	}
	// A test addressed to one endpoint is redelivered to it alone.
	test := h.Event(onboarding.EventWebhookTest, "acme", "", again)
	test.Endpoint = createdOnly.ID
	h.Add(test)
	if got, err := h.S.Redeliver(ctx, test.ID, "", again); err != nil || !cmp.Equal([]string{createdOnly.ID}, got) {
		t.Errorf("Redeliver(an addressed test) = %v, %v; want %s alone", got, err, createdOnly.ID)
	}
	if claimed, _ := h.Claim("w3", again, 10); !cmp.Equal([]string{fixture.Pair(createdOnly.ID, test.ID)}, fixture.Pairs(claimed)) {
		t.Errorf("claimed %v, want the test's delivery alone", fixture.Pairs(claimed))
	}
}

// testRedeliverBehindTheHead redelivers an event older than the one in
// flight: it waits for it, then goes.
func testRedeliverBehindTheHead(t *testing.T, open Opener) {
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	first := h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now)
	second := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(time.Second))
	h.Add(first)
	claimed, _ := h.Claim("w1", h.Now, 10)
	h.FinishAll(claimed, h.Now)
	h.Add(second)
	claimed, _ = h.Claim("w1", h.At(time.Second), 10)
	if diff := cmp.Diff([]string{fixture.Pair(ep.ID, second.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Fatalf("claimed (-want +got):\n%s", diff)
	}
	if _, err := h.S.Redeliver(context.Background(), first.ID, "", h.At(time.Second)); err != nil {
		t.Fatal(err)
	}
	fixture.CheckQueues(t, h.S)
	if got, _ := h.Claim("w2", h.At(2*time.Second), 10); len(got) != 0 {
		t.Errorf("claimed %v while the subject's head is in flight", fixture.Pairs(got))
	}
	if err := h.Finish(claimed[0], h.At(3*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Fatal(err)
	}
	claimed, _ = h.Claim("w1", h.At(3*time.Second), 10)
	if diff := cmp.Diff([]string{fixture.Pair(ep.ID, first.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed after the head finished (-want +got):\n%s", diff)
	}
}
