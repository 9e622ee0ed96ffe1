package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestFinishDeliveryUnchangedEndpoint: a result's Endpoint change that
// changes nothing does not rewrite the endpoint's record, so that the
// finishes of one endpoint's deliveries do not conflict. (What the change
// does is the Store suite's.)
func TestFinishDeliveryUnchangedEndpoint(t *testing.T) {
	h := newHooks(t)
	ep, d := h.ClaimOne("acme")
	version := func() uint64 {
		var v uint64
		if err := h.S.db.View(func(txn *badger.Txn) error {
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
	before := version()
	reset := func(ep *onboarding.Endpoint) { ep.Exhausted = 0 }
	if err := h.Finish(d, h.At(time.Second), onboarding.DeliveryResult{Done: true, Endpoint: reset}); err != nil {
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
	gone, kept := h.Endpoint("acme"), h.Endpoint("acme")
	for i := 0; i < 10; i++ {
		h.Add(h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.Now))
	}
	if err := h.S.db.Update(func(txn *badger.Txn) error { return txn.Delete(endpointKey(gone.ID)) }); err != nil {
		t.Fatal(err)
	}
	if err := h.S.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if n, _ := h.S.QueuedDeliveries(ctx); n != 10 {
		t.Errorf("QueuedDeliveries after reopening = %d, want the 10 of the endpoint left", n)
	}
	for _, q := range h.queued() {
		if q.EndpointID != kept.ID {
			t.Errorf("delivery to %s left queued", q.EndpointID)
		}
	}
	if lines, _ := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{}); len(lines) != 0 {
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
			ep := h.Endpoint("acme")
			first := h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now)
			second := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
			h.Add(first)
			claimed, _ := h.Claim("w1", h.Now, 1)
			if len(claimed) != 1 {
				t.Fatalf("claimed %v", fixture.Pairs(claimed))
			}
			queue := h.S.db.NewTransaction(true)
			defer queue.Discard()
			if err := h.S.writeEvents(queue, []*onboarding.Event{second}); err != nil {
				t.Fatal(err)
			}
			finish := h.S.db.NewTransaction(true)
			defer finish.Discard()
			key := deliveryKey(ep.ID, "app-1", first.Seq())
			var q queuedDelivery
			if err := getRecord(finish, key, &q); err != nil {
				t.Fatal(err)
			}
			if _, err := finishHead(finish, key, &q, h.Now); err != nil {
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

// TestFinishDeliveriesBatchIsOneCommit: a batch records every attempt in
// one commit: its log lines have the same version. (What each result does
// is the Store suite's.)
func TestFinishDeliveriesBatchIsOneCommit(t *testing.T) {
	h := newHooks(t)
	n := h.FinishBatch()
	versions := map[uint64]int{}
	eachItem(t, h.S, badger.IteratorOptions{Prefix: []byte(prefixAttempt)}, func(item *badger.Item) error {
		versions[item.Version()]++
		return nil
	})
	if len(versions) != 1 {
		t.Errorf("log lines by commit version: %v; want the batch's %d in one", versions, n)
	}
}
