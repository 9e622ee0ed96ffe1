package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// floor returns the store's floor of family's space of ep (nil: none,
// the space's start).
func (h *hooks) floor(family string, ep *onboarding.Endpoint) []byte {
	h.S.due.mu.Lock()
	defer h.S.due.mu.Unlock()
	return bytes.Clone(h.S.due.keys[string(indexSpace(family, ep.ID))])
}

// raiseFloor makes a claim at at that takes nothing (limit 0), which
// raises the due floors, and checks that ep's due floor is then past every
// entry due at below: the write that follows must lower it to be claimed.
func (h *hooks) raiseFloor(ep *onboarding.Endpoint, at, below time.Time) {
	h.T.Helper()
	h.Claim("raiser", at, 0)
	if f := h.floor(prefixDueIndex, ep); bytes.Compare(f, floorKey(indexSpace(prefixDueIndex, ep.ID), dueNanos(below)+1)) < 0 {
		h.T.Fatalf("the floor %x is not past the entries due at %v", f, below)
	}
}

// longClaim claims up to limit deliveries for owner at at with a
// three-hour lease.
func (h *hooks) longClaim(owner string, at time.Time, limit int) []*onboarding.Delivery {
	h.T.Helper()
	got, _, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: owner, Now: at, Lease: 3 * time.Hour, Limit: limit})
	if err != nil {
		h.T.Fatal(err)
	}
	return got
}

// dueEntry is the due-index key of e's delivery to ep while it is due at.
func dueEntry(ep *onboarding.Endpoint, e *onboarding.Event, at time.Time) []byte {
	return dueKey(at, deliveryKey(ep.ID, e.Subject, e.Seq()))
}

// TestClaimsFindEntriesBelowTheFloor raises the due floor past the time a
// delivery is then queued for, by every path that writes a due entry: the
// write must lower the floor, or the delivery would never be claimed.
// Times go backwards on purpose.
func TestClaimsFindEntriesBelowTheFloor(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// queue raises the floor (raiseFloor) and then queues a
		// delivery below it; it returns the delivery and when to claim.
		queue func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time)
	}{
		{"an event in the past", func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time) {
			e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(-time.Hour))
			h.raiseFloor(ep, h.Now, e.At)
			h.Add(e)
			return fixture.Pair(ep.ID, e.ID), e.At
		}},
		{"a new application's event", func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time) {
			app := fixture.App("acme", 1, onboarding.StatusCreated)
			e := h.Event(onboarding.EventApplicationCreated, "acme", app.ID, h.Now)
			h.raiseFloor(ep, h.At(time.Hour), e.At)
			if err := h.S.CreateApplication(ctx, app, onboarding.Changes{Events: []*onboarding.Event{e}}); err != nil {
				t.Fatal(err)
			}
			return fixture.Pair(ep.ID, e.ID), e.At
		}},
		{"an application change's event", func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time) {
			app := fixture.App("acme", 1, onboarding.StatusCreated)
			if err := h.S.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
				t.Fatal(err)
			}
			e := h.Event(onboarding.EventApplicationSent, "acme", app.ID, h.Now)
			h.raiseFloor(ep, h.At(time.Hour), e.At)
			if _, err := h.S.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				return onboarding.Changes{Events: []*onboarding.Event{e}}, nil
			}); err != nil {
				t.Fatal(err)
			}
			return fixture.Pair(ep.ID, e.ID), e.At
		}},
		{"a redelivery", func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time) {
			e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
			h.Add(e)
			for _, d := range h.longClaim("w1", h.Now, 10) {
				if err := h.Finish(d, h.Now, onboarding.DeliveryResult{Done: true}); err != nil {
					t.Fatal(err)
				}
			}
			h.raiseFloor(ep, h.At(time.Hour), h.At(time.Minute))
			if _, err := h.S.Redeliver(ctx, e.ID, ep.ID, h.At(time.Minute)); err != nil {
				t.Fatal(err)
			}
			return fixture.Pair(ep.ID, e.ID), h.At(time.Minute)
		}},
		{"a retry", func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time) {
			e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
			h.Add(e)
			claimed := h.longClaim("w1", h.Now, 10)
			// The floor rises to the lease's end, the only entry left.
			h.raiseFloor(ep, h.At(time.Hour), h.At(time.Minute))
			if err := h.Finish(claimed[0], h.Now, onboarding.DeliveryResult{RetryAt: h.At(time.Minute)}); err != nil {
				t.Fatal(err)
			}
			return fixture.Pair(ep.ID, e.ID), h.At(time.Minute)
		}},
		{"the next of a subject", func(t *testing.T, h *hooks, ep *onboarding.Endpoint) (string, time.Time) {
			first := h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now)
			second := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
			h.Add(first, second)
			claimed := h.longClaim("w1", h.Now, 10)
			h.raiseFloor(ep, h.At(time.Hour), h.At(time.Minute))
			if err := h.Finish(claimed[0], h.At(time.Minute), onboarding.DeliveryResult{Done: true}); err != nil {
				t.Fatal(err)
			}
			return fixture.Pair(ep.ID, second.ID), h.At(time.Minute)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHooks(t)
			ep := h.Endpoint("acme")
			want, at := tt.queue(t, h, ep)
			claimed, _ := h.Claim("w2", at, 10)
			if diff := cmp.Diff([]string{want}, fixture.Pairs(claimed)); diff != "" {
				t.Errorf("claim at %v (-want +got):\n%s", at, diff)
			}
			h.queued()
		})
	}
}

// TestWriteDuringAClaim commits an entry while a claim is in flight, after
// the claim's snapshot, earlier than anything the claim's walk met: the
// claim must not raise the floor past it.
func TestWriteDuringAClaim(t *testing.T) {
	h := newHooks(t)
	ep := h.Endpoint("acme")
	late := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(time.Hour))
	early := h.Event(onboarding.EventApplicationSent, "acme", "app-2", h.Now)
	h.Add(late)
	// The claim begins: it reads the floor, then its transaction takes
	// its snapshot.
	from, others := h.S.due.beginClaim()
	snap := h.S.db.NewTransaction(false)
	defer snap.Discard()
	// Meanwhile early is queued, and AddEvent returns.
	h.Add(early)
	// The claim's walk meets late's entry first, and the claim commits.
	prefix := indexSpace(prefixDueIndex, ep.ID)
	it := snap.NewIterator(badger.IteratorOptions{Prefix: prefix})
	seek, ok := from[string(prefix)]
	if !ok {
		seek = prefix
	}
	it.Seek(seek)
	if !it.ValidForPrefix(prefix) {
		t.Fatal("the claim's snapshot has no due entry")
	}
	met := it.Item().KeyCopy(nil)
	it.Close()
	if diff := cmp.Diff(dueEntry(ep, late, late.At), met); diff != "" {
		t.Fatalf("the claim met (-want +got):\n%s", diff)
	}
	h.S.due.endClaim(others, true, map[string][]byte{string(prefix): met}, dueWrites{})
	claimed, _ := h.Claim("w1", h.Now, 10)
	if diff := cmp.Diff([]string{fixture.Pair(ep.ID, early.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claim after the in-flight claim (-want +got):\n%s", diff)
	}
}

// TestClaimRaisesTheFloor checks that a claim leaves the floor at the
// first entry its walk met, so that the next one does not walk what it
// deleted before that.
func TestClaimRaisesTheFloor(t *testing.T) {
	h := newHooks(t)
	ep := h.Endpoint("acme")
	var events []*onboarding.Event
	for i := range 3 {
		events = append(events, h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.At(time.Duration(i)*time.Second)))
	}
	h.Add(events...)
	if f := h.floor(prefixDueIndex, ep); f != nil {
		t.Fatalf("the floor of a new store is %x, want the start", f)
	}
	at := h.At(10 * time.Second)
	for i, e := range events {
		claimed, _ := h.Claim("w1", at, 1)
		if diff := cmp.Diff([]string{fixture.Pair(ep.ID, e.ID)}, fixture.Pairs(claimed)); diff != "" {
			t.Fatalf("claim %d (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(dueEntry(ep, e, e.At), h.floor(prefixDueIndex, ep)); diff != "" {
			t.Errorf("floor after claim %d (-want +got):\n%s", i, diff)
		}
	}
	h.Claim("w1", at, 1)
	if diff := cmp.Diff(floorKey(indexSpace(prefixDueIndex, ep.ID), math.MaxUint64), h.floor(prefixDueIndex, ep)); diff != "" {
		t.Errorf("due floor after the last claim, which met no due entry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(leaseKey(at.Add(time.Minute), deliveryKey(ep.ID, events[0].Subject, events[0].Seq())), h.floor(prefixLeaseIndex, ep)); diff != "" {
		t.Errorf("lease floor after the last claim (-want +got):\n%s", diff)
	}
}

// TestFloorUnderConcurrentWrites queues events at ever earlier times while
// a worker claims and finishes them: every one is delivered.
func TestFloorUnderConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	h.Endpoint("acme")
	const writers, perWriter = 4, 25
	var want []string
	var events [writers][]*onboarding.Event
	for w := range writers {
		for i := range perWriter {
			at := h.At(-time.Duration(i*writers+w) * time.Millisecond)
			e := h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d-%d", w, i), at)
			events[w] = append(events[w], e)
			want = append(want, e.ID)
		}
	}
	var got []string
	claimAll := func() error {
		for {
			claimed, _, err := h.S.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w1", Now: h.Now, Lease: time.Hour, Limit: 3})
			if err != nil || len(claimed) == 0 {
				return err
			}
			for _, d := range claimed {
				got = append(got, d.EventID)
				if err := h.Finish(d, h.Now, onboarding.DeliveryResult{Done: true}); err != nil {
					return err
				}
			}
		}
	}
	stop := make(chan struct{})
	claimer := make(chan error, 1)
	go func() {
		for {
			// A claim that keeps losing to the writers gives up with a
			// conflict; RunWebhooks logs it and claims again, and so does
			// this claimer.
			if err := claimAll(); err != nil && !errors.Is(err, badger.ErrConflict) {
				claimer <- err
				return
			}
			select {
			case <-stop:
				claimer <- nil
				return
			default:
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for _, e := range events[w] {
				if err := h.S.AddEvent(ctx, e); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-claimer; err != nil {
		t.Fatal(err)
	}
	// Every write has returned: one more pass claims whatever is left.
	if err := claimAll(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}
