package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

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
