package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestEndpoints(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	a1, other, a2 := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme2"), h.endpoint("acme")
	if err := h.s.CreateEndpoint(ctx, a1); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateEndpoint(duplicate) = %v, want errDuplicate", err)
	}
	tests := []struct {
		org  string
		want []*onboarding.Endpoint
	}{
		{"acme", []*onboarding.Endpoint{a1, a2}},
		{"acme2", []*onboarding.Endpoint{other}},
		{"acm", nil},
		{"", []*onboarding.Endpoint{a1, other, a2}},
	}
	for _, tt := range tests {
		got, err := h.s.Endpoints(ctx, tt.org)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Endpoints(%q), oldest first (-want +got):\n%s", tt.org, diff)
		}
	}
	got, err := h.s.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.Description = "CRM"; return nil })
	if err != nil || got.Description != "CRM" {
		t.Fatalf("UpdateEndpoint = %+v, %v", got, err)
	}
	if stored, err := h.s.Endpoint(ctx, a1.ID); err != nil || !cmp.Equal(got, stored) {
		t.Errorf("Endpoint after update = %+v, %v; want %+v", stored, err, got)
	}
	if _, err := h.s.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.OrgID = "acme2"; return nil }); err == nil {
		t.Errorf("UpdateEndpoint(moving it to another organization) succeeded")
	}
	boom := errors.New("boom")
	if _, err := h.s.UpdateEndpoint(ctx, a1.ID, func(*onboarding.Endpoint) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateEndpoint(failing change) = %v, want boom", err)
	}
	if _, err := h.s.UpdateEndpoint(ctx, "we_nope", func(*onboarding.Endpoint) error { return nil }); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("UpdateEndpoint(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := h.s.Endpoint(ctx, "we_nope"); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Endpoint(unknown) = %v, want ErrNotFound", err)
	}
}

// TestFanOut checks which endpoints an event is queued for: those of its
// organization that are enabled and want its type, or the one a
// webhook.test is addressed to.
func TestFanOut(t *testing.T) {
	h := newHooks(t)
	all, sentOnly, disabled, other := h.endpoint("acme"), h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme"), h.endpoint("acme2")
	if _, err := h.s.UpdateEndpoint(context.Background(), disabled.ID, func(ep *onboarding.Endpoint) error { ep.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	test := h.event(onboarding.EventWebhookTest, "acme", "", h.now)
	test.Endpoint = sentOnly.ID
	tests := []struct {
		name  string
		event *onboarding.Event
		want  []*onboarding.Endpoint
	}{
		{"every endpoint wanting the type", h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now), []*onboarding.Endpoint{all}},
		{"a filter naming the type", h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now), []*onboarding.Endpoint{all, sentOnly}},
		{"a test addressed to one endpoint", test, []*onboarding.Endpoint{sentOnly}},
		{"another organization", h.event(onboarding.EventApplicationSent, "acme2", "app-2", h.now), []*onboarding.Endpoint{other}},
		{"an organization without endpoints", h.event(onboarding.EventApplicationSent, "acm", "app-3", h.now), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.add(tt.event)
			want := []string{}
			for _, ep := range tt.want {
				want = append(want, pair(ep.ID, tt.event.ID))
			}
			got := []string{}
			for _, q := range h.queued() {
				if q.EventID == tt.event.ID {
					got = append(got, pair(q.EndpointID, q.EventID))
					if q.EventType != tt.event.Type || q.Subject != tt.event.Subject || q.Attempts != 0 || !q.NextAt.Equal(tt.event.At) {
						t.Errorf("queued %+v for event %+v", q, tt.event)
					}
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("queued for (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPerSubjectOrder checks that one endpoint receives the events of one
// subject one at a time, in order, while other subjects and other endpoints
// go ahead.
func TestPerSubjectOrder(t *testing.T) {
	h := newHooks(t)
	e1, e2 := h.endpoint("acme"), h.endpoint("acme")
	a1 := h.event(onboarding.EventApplicationCreated, "acme", "app-a", h.now)
	a2 := h.event(onboarding.EventApplicationSent, "acme", "app-a", h.at(time.Second))
	b1 := h.event(onboarding.EventApplicationCreated, "acme", "app-b", h.at(2*time.Second))
	h.add(a1, a2, b1)
	later := h.at(time.Minute) // a2 is due too
	claimed, next := h.claim("w1", later, 10)
	want := []string{pair(e1.ID, a1.ID), pair(e1.ID, b1.ID), pair(e2.ID, a1.ID), pair(e2.ID, b1.ID)}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), pairs(claimed)); diff != "" {
		t.Fatalf("first claim (-want +got):\n%s", diff)
	}
	if !next.Equal(later.Add(time.Minute)) {
		t.Errorf("next = %v, want the end of the leases %v", next, later.Add(time.Minute))
	}
	if again, _ := h.claim("w2", later, 10); len(again) != 0 {
		t.Errorf("a2 claimed while a1 is in flight: %v", pairs(again))
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
	if diff := cmp.Diff([]string{pair(e1.ID, a2.ID)}, pairs(claimed)); diff != "" {
		t.Errorf("claim after a1 reached e1 (-want +got):\n%s", diff)
	}
	h.queued()
}

// TestClaimLease checks that a claimed delivery is not claimed again
// before its lease lapses, and is after; the worker that lost it cannot
// finish it.
func TestClaimLease(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	ep := h.endpoint("acme")
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e)
	first, _ := h.claim("w1", h.now, 10)
	if len(first) != 1 {
		t.Fatalf("first claim = %v", pairs(first))
	}
	steps := []struct {
		name     string
		owner    string
		at       time.Time
		want     []string
		wantNext time.Time
	}{
		{"another owner before the lease lapses", "w2", h.at(30 * time.Second), []string{}, h.at(time.Minute)},
		{"the same owner before the lease lapses", "w1", h.at(59 * time.Second), []string{}, h.at(time.Minute)},
		{"another owner after the lease lapsed", "w2", h.at(61 * time.Second), []string{pair(ep.ID, e.ID)}, h.at(121 * time.Second)},
	}
	var second []*onboarding.Delivery
	for _, st := range steps {
		got, next := h.claim(st.owner, st.at, 10)
		if diff := cmp.Diff(st.want, pairs(got)); diff != "" || !next.Equal(st.wantNext) {
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
	if err := h.finish(second[0], h.at(63*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Errorf("FinishDelivery by the owner = %v", err)
	}
	if got, next := h.claim("w1", h.at(time.Hour), 10); len(got) != 0 || !next.IsZero() {
		t.Errorf("claim of an empty queue = %v, next %v; want none, zero", pairs(got), next)
	}
	if n, err := h.s.QueuedDeliveries(ctx); n != 0 || err != nil {
		t.Errorf("QueuedDeliveries = %d, %v; want 0", n, err)
	}
}

// TestStaleFinishBySameOwner: a claim that lapsed and was claimed again by
// the same owner is a new claim; finishing the old one is ErrLeaseLost and
// leaves the new one in place.
func TestStaleFinishBySameOwner(t *testing.T) {
	h := newHooks(t)
	h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now))
	first, _ := h.claim("w1", h.now, 10)
	again, _ := h.claim("w1", h.at(61*time.Second), 10)
	if len(first) != 1 || len(again) != 1 {
		t.Fatalf("claims = %v then %v, want the delivery each time", pairs(first), pairs(again))
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

// TestFinishDeliveryEndpointChange: r.Endpoint applies to the endpoint as
// it is when the attempt is recorded (a count raised since the claim is
// reset by a success), and a change that changes nothing writes nothing,
// so that the finishes of one endpoint's deliveries do not conflict.
func TestFinishDeliveryEndpointChange(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	ep := h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now), h.event(onboarding.EventApplicationCreated, "acme", "app-2", h.now))
	claimed, _ := h.claim("w1", h.now, 10)
	if len(claimed) != 2 {
		t.Fatalf("claimed %v, want both", pairs(claimed))
	}
	version := func() uint64 {
		var v uint64
		if err := h.s.db.View(func(txn *badger.Txn) error {
			item, err := txn.Get(endpointKey(ep.ID))
			if err == nil {
				v = item.Version()
			}
			return err
		}); err != nil {
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
		t.Errorf("a change that changes nothing rewrote the endpoint (version %d, then %d)", before, after)
	}
}

// TestFinishDelivery checks what each result leaves in the queue.
func TestFinishDelivery(t *testing.T) {
	tests := []struct {
		name string
		// secondAt is when the second event of the subject happened,
		// relative to the first.
		secondAt time.Duration
		result   onboarding.DeliveryResult
		// finishTwice finishes the claim a second time, which must fail.
		finishTwice bool
		// wantQueued is the queue after the finish, as attempts and due
		// time (relative to the claim) of the first and second event; -1:
		// not queued.
		wantFirst, wantSecond queuedState
	}{
		{"retry", time.Second, onboarding.DeliveryResult{RetryAt: h0(5 * time.Minute)}, false,
			queuedState{attempts: 1, due: 5 * time.Minute, head: true}, queuedState{due: time.Second}},
		{"done promotes the next, due now", time.Second, onboarding.DeliveryResult{Done: true}, false,
			queuedState{gone: true}, queuedState{due: 2 * time.Second, head: true}},
		{"done promotes the next, due when it happened", 10 * time.Minute, onboarding.DeliveryResult{Done: true}, false,
			queuedState{gone: true}, queuedState{due: 10 * time.Minute, head: true}},
		{"finished twice", time.Second, onboarding.DeliveryResult{Done: true}, true,
			queuedState{gone: true}, queuedState{due: 2 * time.Second, head: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHooks(t)
			ep := h.endpoint("acme")
			first := h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now)
			second := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.at(tt.secondAt))
			h.add(first, second)
			claimed, _ := h.claim("w1", h.now, 10)
			if diff := cmp.Diff([]string{pair(ep.ID, first.ID)}, pairs(claimed)); diff != "" {
				t.Fatalf("claimed (-want +got):\n%s", diff)
			}
			r := tt.result
			if !r.RetryAt.IsZero() {
				r.RetryAt = h.at(r.RetryAt.Sub(h0(0)))
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
				want queuedState
			}{{first, tt.wantFirst}, {second, tt.wantSecond}} {
				q, ok := queued[string(deliveryKey(ep.ID, "app-1", c.e.Seq()))]
				got := queuedState{gone: true}
				if ok {
					head, _ := isHeadView(h, ep.ID, "app-1", c.e)
					got = queuedState{attempts: q.Attempts, due: q.due().Sub(h.now), head: head}
					if q.Owner != "" || !q.LeaseUntil.IsZero() {
						t.Errorf("%s still leased: %+v", c.e.Type, q)
					}
				}
				if got != c.want {
					t.Errorf("%s after the finish = %+v, want %+v", c.e.Type, got, c.want)
				}
			}
			lines, _ := h.s.DeliveryAttempts(context.Background(), onboarding.AttemptQuery{EventID: first.ID})
			if want := 1 + btoi(tt.finishTwice); len(lines) != want {
				t.Errorf("%d log lines, want %d", len(lines), want)
			}
		})
	}
}

// h0 stands for a time relative to the test's start in a table built before it.
func h0(d time.Duration) time.Time { return time.Unix(0, 0).Add(d) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type queuedState struct {
	gone     bool
	attempts int
	due      time.Duration
	head     bool
}

func isHeadView(h *hooks, endpointID, subject string, e *onboarding.Event) (bool, error) {
	var head bool
	err := h.s.db.View(func(txn *badger.Txn) error {
		var err error
		head, err = isHead(txn, endpointID, subject, deliveryKey(endpointID, subject, e.Seq()))
		return err
	})
	return head, err
}

// TestDisablingDropsTheQueue checks that an endpoint disabled by the
// operator or by a delivery's result loses its queued deliveries, each
// with a log line, and that other endpoints keep theirs.
func TestDisablingDropsTheQueue(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		perSubj int // events per subject
		subj    int // subjects
		finish  bool
	}{
		{"by the operator", 2, 2, false},
		{"by a delivery's result", 2, 2, true},
		{"more than one transaction's worth", 3, dropBatch/3 + 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHooks(t)
			ep, keep := h.endpoint("acme"), h.endpoint("acme2")
			var events []*onboarding.Event
			for s := 0; s < tt.subj; s++ {
				for i := 0; i < tt.perSubj; i++ {
					events = append(events, h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", s), h.at(time.Duration(i)*time.Millisecond)))
				}
			}
			kept := h.event(onboarding.EventApplicationSent, "acme2", "app-x", h.now)
			events = append(events, kept)
			if err := h.s.update(ctx, func(txn *badger.Txn) error { return h.s.writeEvents(txn, events) }); err != nil {
				t.Fatal(err)
			}
			var want []onboarding.DeliveryAttempt
			reason, dropAt := "disabled by the operator", h.now
			if tt.finish {
				reason, dropAt = "410 Gone", h.at(time.Second)
				claimed, _ := h.claim("w1", h.now, 10)
				var d *onboarding.Delivery
				for _, c := range claimed {
					if c.EndpointID == ep.ID && c.EventID == events[0].ID {
						d = c
					}
				}
				if err := h.finish(d, dropAt, onboarding.DeliveryResult{Done: true, Endpoint: func(e *onboarding.Endpoint) {
					e.Enabled, e.DisabledReason = false, reason
				}}); err != nil {
					t.Fatal(err)
				}
				events = events[1:]
				want = append(want, onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: ep.ID, OrgID: "acme",
					Attempt: 1, At: dropAt, StatusCode: 200, Success: true})
			} else if _, err := h.s.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error {
				e.Enabled, e.DisabledReason = false, reason
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, e := range events[:len(events)-1] {
				want = append(want, onboarding.DeliveryAttempt{EventID: e.ID, EventType: e.Type, EndpointID: ep.ID, OrgID: "acme",
					At: dropAt, Error: "not delivered: the endpoint was disabled (" + reason + ")"})
			}
			if diff := cmp.Diff([]string{pair(keep.ID, kept.ID)}, h.queuedPairs()); diff != "" {
				t.Errorf("queue after disabling (-want +got):\n%s", diff)
			}
			lines, err := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 10 * len(want)})
			if err != nil {
				t.Fatal(err)
			}
			byEvent := func(a, b onboarding.DeliveryAttempt) int {
				return strings.Compare(a.EventID+a.Error, b.EventID+b.Error)
			}
			slices.SortFunc(want, byEvent)
			slices.SortFunc(lines, byEvent)
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			stored, _ := h.s.Endpoint(ctx, ep.ID)
			if stored.Enabled || stored.DisabledReason != reason {
				t.Errorf("endpoint after disabling = %+v", stored)
			}
		})
	}
}

func TestDeleteEndpoint(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	ep, keep := h.endpoint("acme"), h.endpoint("acme")
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e, h.event(onboarding.EventApplicationOpened, "acme", "app-1", h.now))
	if err := h.s.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range h.queued() {
		if q.EndpointID == ep.ID {
			t.Errorf("queued for the deleted endpoint: %+v", q)
		}
	}
	if n, _ := h.s.QueuedDeliveries(ctx); n != 2 {
		t.Errorf("QueuedDeliveries = %d, want the other endpoint's 2", n)
	}
	if lines, _ := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{}); len(lines) != 0 {
		t.Errorf("deleting logged %+v", lines)
	}
	if _, err := h.s.Endpoint(ctx, ep.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Endpoint(deleted) = %v, want ErrNotFound", err)
	}
	if got, _ := h.s.Endpoints(ctx, "acme"); len(got) != 1 || got[0].ID != keep.ID {
		t.Errorf("Endpoints after delete = %+v", got)
	}
	if err := h.s.DeleteEndpoint(ctx, ep.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("DeleteEndpoint(deleted) = %v, want ErrNotFound", err)
	}
	if _, err := h.s.Redeliver(ctx, e.ID, ep.ID, h.now); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Redeliver to a deleted endpoint = %v, want ErrNotFound", err)
	}
}

// TestRedeliver queues events again: for the endpoints that want them, or
// one named; a delivery still queued starts over rather than doubling.
func TestRedeliver(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	all, sentOnly, createdOnly, off, other := h.endpoint("acme"), h.endpoint("acme", onboarding.EventApplicationSent),
		h.endpoint("acme", onboarding.EventApplicationCreated), h.endpoint("acme"), h.endpoint("acme2")
	if _, err := h.s.UpdateEndpoint(ctx, off.ID, func(ep *onboarding.Endpoint) error { ep.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e)
	// Deliver it everywhere, so that nothing is queued.
	claimed, _ := h.claim("w1", h.now, 10)
	for _, d := range claimed {
		if err := h.finish(d, h.now, onboarding.DeliveryResult{Done: true}); err != nil {
			t.Fatal(err)
		}
	}
	errTests := []struct {
		name, event, endpoint string
	}{
		{"an unknown event", "evt_01KAJ6F4G0000000000000000A", ""},
		{"not an event id", "app-1", ""},
		{"an unknown endpoint", e.ID, "we_nope"},
		{"another organization's endpoint", e.ID, other.ID},
	}
	for _, tt := range errTests {
		if got, err := h.s.Redeliver(ctx, tt.event, tt.endpoint, h.now); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("Redeliver(%s) = %v, %v; want ErrNotFound", tt.name, got, err)
		}
	}
	at := h.at(time.Minute)
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
		got, err := h.s.Redeliver(ctx, e.ID, tt.endpoint, at)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: queued for (-want +got):\n%s", tt.name, diff)
		}
	}
	want := []string{pair(all.ID, e.ID), pair(createdOnly.ID, e.ID), pair(sentOnly.ID, e.ID)}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), h.queuedPairs()); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if got, next := h.claim("w1", h.at(59*time.Second), 10); len(got) != 0 || !next.Equal(at) {
		t.Errorf("claim before the redelivery is due = %v, next %v; want none, %v", pairs(got), next, at)
	}

	// A delivery that failed once and is leased starts over.
	claimed, _ = h.claim("w1", at, 10)
	if len(claimed) != 3 {
		t.Fatalf("claimed %v", pairs(claimed))
	}
	if err := h.finish(claimed[0], at, onboarding.DeliveryResult{RetryAt: h.at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	again := h.at(2 * time.Minute)
	for _, d := range claimed {
		if _, err := h.s.Redeliver(ctx, e.ID, d.EndpointID, again); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range h.queued() {
		if q.Attempts != 0 || !q.NextAt.Equal(again) || q.Owner != "" {
			t.Errorf("after redelivering: %+v, want no attempts, due at %v, unclaimed", q, again)
		}
	}
	if err := h.finish(claimed[1], again, onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("finishing a delivery that started over = %v, want ErrLeaseLost", err)
	}
	if got, _ := h.claim("w2", again, 10); len(got) != 3 {
		t.Errorf("claim after redelivering = %v, want all three", pairs(got))
	}
}

// TestRedeliverBehindTheHead redelivers an event older than the one in
// flight: it waits for it, then goes.
func TestRedeliverBehindTheHead(t *testing.T) {
	h := newHooks(t)
	ep := h.endpoint("acme")
	first := h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now)
	second := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.at(time.Second))
	h.add(first)
	claimed, _ := h.claim("w1", h.now, 10)
	if err := h.finish(claimed[0], h.now, onboarding.DeliveryResult{Done: true}); err != nil {
		t.Fatal(err)
	}
	h.add(second)
	claimed, _ = h.claim("w1", h.at(time.Second), 10)
	if diff := cmp.Diff([]string{pair(ep.ID, second.ID)}, pairs(claimed)); diff != "" {
		t.Fatalf("claimed (-want +got):\n%s", diff)
	}
	if _, err := h.s.Redeliver(context.Background(), first.ID, "", h.at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.claim("w2", h.at(2*time.Second), 10); len(got) != 0 {
		t.Errorf("claimed %v while the subject's head is in flight", pairs(got))
	}
	if err := h.finish(claimed[0], h.at(3*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Fatal(err)
	}
	claimed, _ = h.claim("w1", h.at(3*time.Second), 10)
	if diff := cmp.Diff([]string{pair(ep.ID, first.ID)}, pairs(claimed)); diff != "" {
		t.Errorf("claimed after the head finished (-want +got):\n%s", diff)
	}
}

// TestClaimLimits checks c.Limit, c.MaxInFlight (counting the caller's
// in-flight deliveries and this claim's, without changing the caller's
// map) and the report of when to come back, which leaves out the due
// deliveries an endpoint's cap holds back (the caller hears when an
// attempt in flight to it ends, and would otherwise poll).
func TestClaimLimits(t *testing.T) {
	h := newHooks(t)
	busy, idle := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme", onboarding.EventApplicationCreated)
	for i := 0; i < 3; i++ {
		h.add(h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.at(time.Duration(i)*time.Second)))
	}
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-9", h.at(4*time.Second)))
	h.add(h.event(onboarding.EventApplicationCreated, "acme", "app-8", h.at(time.Hour)))
	atCap, next, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w1", Now: h.at(time.Minute), Lease: time.Minute,
		Limit: 10, InFlight: map[string]int{busy.ID: 2, idle.ID: 3}, MaxInFlight: func(string) int { return 2 }})
	if err != nil || len(atCap) != 0 || !next.IsZero() {
		t.Errorf("every endpoint at its cap: claimed %v, next %v, %v; want none, zero", pairs(atCap), next, err)
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
		t.Errorf("limit 1: claimed %v, next %v; want one, next %v", pairs(claimed), next, h.at(2*time.Second))
	}
	claimed, next = h.claim("w1", h.at(time.Minute), 1)
	if len(claimed) != 1 || !next.Equal(h.at(2*time.Minute)) {
		t.Errorf("the last due: claimed %v, next %v; want one, the first leases' end %v", pairs(claimed), next, h.at(2*time.Minute))
	}
	claimed, next = h.claim("w1", h.at(time.Minute), 1)
	if len(claimed) != 0 || !next.Equal(h.at(2*time.Minute)) {
		t.Errorf("nothing due: claimed %v, next %v; want none, the first leases' end %v", pairs(claimed), next, h.at(2*time.Minute))
	}
}

// TestOpenDropsOrphanQueues queues deliveries for an endpoint whose record
// is gone (as a crash in the middle of a delete would leave them): claims
// only seek the queues of the endpoints there are, so opening the store
// drops them, without log lines.
func TestOpenDropsOrphanQueues(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	gone, kept := h.endpoint("acme"), h.endpoint("acme")
	for i := 0; i < 10; i++ {
		h.add(h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.now))
	}
	if err := h.s.db.Update(func(txn *badger.Txn) error { return txn.Delete(endpointKey(gone.ID)) }); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if n, _ := h.s.QueuedDeliveries(ctx); n != 10 {
		t.Errorf("QueuedDeliveries after reopening = %d, want the 10 of the endpoint left", n)
	}
	for _, q := range h.queued() {
		if q.EndpointID != kept.ID {
			t.Errorf("delivery to %s left queued", q.EndpointID)
		}
	}
	if lines, _ := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{}); len(lines) != 0 {
		t.Errorf("dropping for a missing endpoint logged %+v", lines)
	}
}

// TestQueueSurvivesRestart closes the store with deliveries queued and one
// claimed: after reopening, the queue is as it was and the claimed one is
// taken up once its lease lapses.
func TestQueueSurvivesRestart(t *testing.T) {
	h := newHooks(t)
	ep := h.endpoint("acme")
	a1 := h.event(onboarding.EventApplicationCreated, "acme", "app-a", h.now)
	a2 := h.event(onboarding.EventApplicationSent, "acme", "app-a", h.now)
	b1 := h.event(onboarding.EventApplicationCreated, "acme", "app-b", h.at(time.Hour))
	h.add(a1, a2, b1)
	if claimed, _ := h.claim("w1", h.now, 10); len(claimed) != 1 {
		t.Fatalf("claimed %v", pairs(claimed))
	}
	before := h.queued()
	if err := h.s.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if diff := cmp.Diff(before, h.queued()); diff != "" {
		t.Errorf("queue after reopening (-want +got):\n%s", diff)
	}
	claimed, _ := h.claim("w2", h.at(2*time.Hour), 10)
	if diff := cmp.Diff([]string{pair(ep.ID, a1.ID), pair(ep.ID, b1.ID)}, pairs(claimed)); diff != "" {
		t.Errorf("claimed after reopening (-want +got):\n%s", diff)
	}
	if n, _ := h.s.QueuedDeliveries(context.Background()); n != 3 {
		t.Errorf("QueuedDeliveries = %d, want 3", n)
	}
}

// TestDeliveryAttempts reads the delivery log through each of its walks.
func TestDeliveryAttempts(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	var lines []onboarding.DeliveryAttempt // oldest first
	for i, l := range []struct {
		ep, ev string
		ok     bool
	}{{"we_1", "evt_a", false}, {"we_2", "evt_a", true}, {"we_1", "evt_a", true}, {"we_1", "evt_b", false}, {"we_2", "evt_b", false}, {"we_10", "evt_b", true}} {
		lines = append(lines, onboarding.DeliveryAttempt{EventID: l.ev, EventType: onboarding.EventApplicationSent, EndpointID: l.ep, OrgID: "acme",
			Attempt: 1, At: h.at(time.Duration(i) * time.Second), Success: l.ok, StatusCode: 200})
	}
	if err := h.s.update(ctx, func(txn *badger.Txn) error {
		for i := range lines {
			if err := h.s.writeAttempt(txn, &lines[i]); err != nil {
				return err
			}
		}
		// A line that expired.
		return h.s.writeAttempt(txn, &onboarding.DeliveryAttempt{EventID: "evt_a", EndpointID: "we_1", At: h.at(-31 * 24 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
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
		{"endpoint", onboarding.AttemptQuery{EndpointID: "we_1"}, pick(3, 2, 0)},
		{"event", onboarding.AttemptQuery{EventID: "evt_b"}, pick(5, 4, 3)},
		{"endpoint and event", onboarding.AttemptQuery{EndpointID: "we_1", EventID: "evt_a"}, pick(2, 0)},
		{"failed", onboarding.AttemptQuery{FailedOnly: true}, pick(4, 3, 0)},
		{"failed of an endpoint", onboarding.AttemptQuery{EndpointID: "we_2", FailedOnly: true, Limit: 1}, pick(4)},
		{"unknown endpoint", onboarding.AttemptQuery{EndpointID: "we_3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.s.DeliveryAttempts(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("newest first (-want +got):\n%s", diff)
			}
		})
	}
	if got := slices.Collect(maps.Keys(keysWithPrefix(t, h.s, prefixAttempt))); len(got) != len(lines) {
		t.Errorf("%d lines stored, want %d (the expired one hidden)", len(got), len(lines))
	}
}

// TestConcurrentClaimsDoNotOverlap runs workers claiming and finishing at
// once: every delivery is claimed exactly once, and a subject's events are
// finished in order.
func TestConcurrentClaimsDoNotOverlap(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	h.endpoint("acme")
	var want []string
	for i := 0; i < 30; i++ {
		e := h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%10), h.now)
		h.add(e)
		want = append(want, e.ID)
	}
	const workers = 4
	var mu sync.Mutex
	var done []string // event ids in the order they were finished
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				claimed, next, err := h.s.ClaimDeliveries(ctx, onboarding.Claim{Owner: owner, Now: h.now, Lease: time.Hour, Limit: 3})
				if err != nil {
					errs <- err
					return
				}
				if len(claimed) == 0 && next.IsZero() {
					return
				}
				for _, d := range claimed {
					mu.Lock()
					done = append(done, d.EventID)
					mu.Unlock()
					if err := h.finish(d, h.now, onboarding.DeliveryResult{Done: true}); err != nil {
						errs <- err
						return
					}
				}
				if len(claimed) == 0 {
					runtime.Gosched() // what is due is in another worker's hands
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(done))); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	// Events of one subject were queued in id order; each was claimed only
	// after the one before it finished.
	last := map[string]string{}
	for _, id := range done {
		e, _ := h.s.Event(ctx, id)
		if prev := last[e.Subject]; prev > id {
			t.Errorf("%s delivered after %s of the same subject", id, prev)
		}
		last[e.Subject] = id
	}
}

// TestQueueingBehindAFinishingHeadConflicts interleaves a transaction that
// queues an event behind a subject's head with one that finishes that head
// as the last of its queue: whichever commits second must fail with a
// conflict (and be retried), or the queued event would be left with no
// head and never sent.
func TestQueueingBehindAFinishingHeadConflicts(t *testing.T) {
	tests := []struct {
		name        string
		finishFirst bool
	}{
		{"the finish commits first", true},
		{"the queueing commits first", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHooks(t)
			ep := h.endpoint("acme")
			first := h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now)
			second := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
			h.add(first)
			claimed, _ := h.claim("w1", h.now, 1)
			if len(claimed) != 1 {
				t.Fatalf("claimed %v", pairs(claimed))
			}
			queue := h.s.db.NewTransaction(true)
			defer queue.Discard()
			if err := h.s.writeEvents(queue, []*onboarding.Event{second}); err != nil {
				t.Fatal(err)
			}
			finish := h.s.db.NewTransaction(true)
			defer finish.Discard()
			key := deliveryKey(ep.ID, "app-1", first.Seq())
			var q queuedDelivery
			if err := getRecord(finish, key, &q); err != nil {
				t.Fatal(err)
			}
			if _, err := finishHead(finish, key, &q, h.now); err != nil {
				t.Fatal(err)
			}
			a, b := queue, finish
			if tt.finishFirst {
				a, b = finish, queue
			}
			if err := a.Commit(); err != nil {
				t.Fatalf("first commit: %v", err)
			}
			if err := b.Commit(); !errors.Is(err, badger.ErrConflict) {
				t.Errorf("second commit = %v, want ErrConflict", err)
			}
			h.queued()
		})
	}
}

// TestFinishDeliveriesBatch: a batch records every attempt in one commit,
// in order: each result applies when its claim still holds, a stale claim
// in the batch is reported lost without holding up the others, attempts
// of one endpoint see each other's change of it, and an endpoint a result
// of the batch disabled has its queue dropped.
func TestFinishDeliveriesBatch(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	ep := h.endpoint("acme")
	other := h.endpoint("acme")
	for _, app := range []string{"app-1", "app-2", "app-3", "app-4"} {
		h.add(h.event(onboarding.EventApplicationCreated, "acme", app, h.now))
	}
	first, _ := h.claim("w1", h.now, 10) // eight: four events, two endpoints
	if len(first) != 8 {
		t.Fatalf("claimed %v, want eight", pairs(first))
	}
	// Every lease lapses and w1 claims all eight again: its attempts of the
	// other endpoint's deliveries are finished under the first claims,
	// which no longer hold.
	second, _ := h.claim("w1", h.at(61*time.Second), 10)
	if len(second) != 8 {
		t.Fatalf("claimed again %v, want all eight", pairs(second))
	}
	stale := map[string]*onboarding.Delivery{}
	for _, d := range first {
		stale[pair(d.EndpointID, d.EventID)] = d
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
			d = stale[pair(d.EndpointID, d.EventID)]
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
	// One commit: the batch's log lines have the same version (the drop
	// of the disabled endpoint's queue logs its retried delivery in a
	// commit of its own).
	versions := map[uint64]int{}
	if err := h.s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixAttempt)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			versions[it.Item().Version()]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(versions) != 2 || versions[minKey(versions)] != len(batch) {
		t.Errorf("log lines by commit version: %v; want the batch's %d in one, then the drop's", versions, len(batch))
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

// minKey is the smallest key of m.
func minKey(m map[uint64]int) uint64 {
	k := uint64(math.MaxUint64)
	for v := range m {
		k = min(k, v)
	}
	return k
}
