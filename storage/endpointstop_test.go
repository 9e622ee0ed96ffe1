package storage

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// disableRecordOnly disables ep by writing its record alone, as the first
// transaction of UpdateEndpoint does, leaving its queue as it is: what a
// drain that failed (or has not run yet) leaves.
func (h *hooks) disableRecordOnly(ep *onboarding.Endpoint) {
	h.T.Helper()
	off := *ep
	off.Enabled, off.DisabledReason = false, onboarding.DisabledByOperator
	if err := h.S.db.Update(func(txn *badger.Txn) error { return setRecord(txn, endpointKey(ep.ID), &off) }); err != nil {
		h.T.Fatal(err)
	}
}

// TestClaimMeetingADisabling disables an endpoint (its record only) while a
// claim is between reading the endpoints and committing: the claim must
// conflict and, retried, lease nothing of it.
func TestClaimMeetingADisabling(t *testing.T) {
	h := newHooks(t)
	ep := h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now))
	var once sync.Once
	claimed, _, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w", Now: h.Now, Lease: time.Minute, Limit: 10,
		MaxInFlight: func(string) int {
			// Called inside the claim's transaction, after its view read
			// the endpoint enabled.
			once.Do(func() { h.disableRecordOnly(ep) })
			return 10
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 0 {
		t.Errorf("claimed %v of an endpoint disabled before the claim committed", fixture.Pairs(claimed))
	}
}

// TestLeftoversOfADisabledEndpoint leaves a disabled endpoint's queue of
// more than one drop batch in place (a drain that failed): claims drop it,
// logged, a batch each; enabling the endpoint drops the rest first, so
// that nothing queued before the disabling is sent.
func TestLeftoversOfADisabledEndpoint(t *testing.T) {
	ctx := context.Background()
	for _, enable := range []bool{false, true} {
		t.Run(fmt.Sprintf("enable=%v", enable), func(t *testing.T) {
			h := newHooks(t)
			ep := h.Endpoint("acme")
			var events []*onboarding.Event
			for i := 0; i < dropBatch+dropBatch/2; i++ {
				events = append(events, h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%30), h.Now))
			}
			if err := h.S.update(ctx, func(txn *badger.Txn) error { return h.S.writeEvents(txn, events) }); err != nil {
				t.Fatal(err)
			}
			h.disableRecordOnly(ep)
			if enable {
				got, err := h.S.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error {
					e.Enabled, e.DisabledReason = true, ""
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if !got.Enabled {
					t.Errorf("UpdateEndpoint returned %+v, want it enabled", got)
				}
			} else {
				for claims := 0; ; claims++ {
					claimed, next := h.Claim("w", h.Now, 10)
					if len(claimed) != 0 {
						t.Fatalf("claimed %v of a disabled endpoint", fixture.Pairs(claimed))
					}
					if next.IsZero() {
						break
					}
					if claims > 3 {
						t.Fatalf("after %d claims, something is still due at %v", claims, next)
					}
				}
			}
			if n := len(h.queued()); n != 0 {
				t.Errorf("%d deliveries left queued", n)
			}
			lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 2 * len(events)})
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(events) {
				t.Errorf("%d log lines for %d dropped deliveries", len(lines), len(events))
			}
			if enable {
				e := h.Event(onboarding.EventApplicationSent, "acme", "app-new", h.Now)
				h.Add(e)
				claimed, _ := h.Claim("w", h.Now, 10)
				if diff := cmp.Diff([]string{fixture.Pair(ep.ID, e.ID)}, fixture.Pairs(claimed)); diff != "" {
					t.Errorf("claimed after enabling (-want +got):\n%s", diff)
				}
			}
		})
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
