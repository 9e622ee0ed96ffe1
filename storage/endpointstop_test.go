package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// DisableRecordOnly disables ep by writing its record alone, as the
// first transaction of UpdateEndpoint does, leaving its queue as it is:
// what a drain that failed (or has not run yet) leaves. With
// DropLeftovers, it makes s a storetest.LeftoverMaker.
func (s *Store) DisableRecordOnly(t *testing.T, ep *onboarding.Endpoint) {
	t.Helper()
	off := *ep
	off.Enabled, off.DisabledReason = false, onboarding.DisabledByOperator
	if err := s.db.Update(func(txn *badger.Txn) error { return setRecord(txn, endpointKey(ep.ID), &off) }); err != nil {
		t.Fatal(err)
	}
}

// DropLeftovers claims at now until nothing is due: each claim drops a
// batch (dropBatch) of what disabled endpoints left queued, and must
// lease nothing, as the store holds no other queue.
func (s *Store) DropLeftovers(t *testing.T, now time.Time) {
	t.Helper()
	for claims := 0; ; claims++ {
		claimed, next, err := s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w", Now: now, Lease: time.Minute, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(claimed) != 0 {
			t.Fatalf("claimed %v of a disabled endpoint", fixture.Pairs(claimed))
		}
		if next.IsZero() {
			return
		}
		if claims > 3 {
			t.Fatalf("after %d claims, something is still due at %v", claims, next)
		}
	}
}

// TestOrphanQueueDroppedWhileServing: the queue of an endpoint whose
// record is gone (a removal whose drop failed part-way) is dropped by the
// store's garbage-collection round, not only at the next start.
func TestOrphanQueueDroppedWhileServing(t *testing.T) {
	h := newHooks(t)
	h.S.Close()
	h.gcEvery = 20 * time.Millisecond
	h.open()
	ep := h.Endpoint("acme")
	keep := h.Endpoint("acme")
	for i := range 3 {
		h.Add(h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.Now))
	}
	if err := h.S.db.Update(func(txn *badger.Txn) error { return txn.Delete(endpointKey(ep.ID)) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		left := map[string]int{}
		for _, q := range h.queued() {
			left[q.EndpointID]++
		}
		if left[ep.ID] == 0 {
			if left[keep.ID] != 3 {
				t.Errorf("the other endpoint has %d deliveries queued, want its 3", left[keep.ID])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the removed endpoint's %d deliveries were still queued after a minute", left[ep.ID])
		}
		time.Sleep(10 * time.Millisecond) // polling the queue until the round has run
	}
}
