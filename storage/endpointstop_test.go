package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestStoppingAnEndpointUnderLoad disables or removes an endpoint with a
// backlog of several drop batches while producers queue events for it and
// workers claim and finish deliveries. The call succeeds; no claim that
// starts after it returns gets a delivery of the endpoint; every event
// queued before the call began was delivered or (disabling) dropped with a
// log line; and nothing of the endpoint's queue is left.
func TestStoppingAnEndpointUnderLoad(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		stop   func(s *Store, id string) error
		logged bool // dropped deliveries get a log line
	}{
		{"disable", func(s *Store, id string) error {
			_, err := s.UpdateEndpoint(ctx, id, func(ep *onboarding.Endpoint) error {
				ep.Enabled, ep.DisabledReason = false, onboarding.DisabledByOperator
				return nil
			})
			return err
		}, true},
		{"remove", func(s *Store, id string) error { return s.DeleteEndpoint(ctx, id) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHooks(t)
			ep := h.endpoint("acme")
			h.endpoint("acme") // another endpoint, whose deliveries go on
			var mu sync.Mutex  // h.event's entropy is not safe for concurrent use
			event := func(subject string) *onboarding.Event {
				mu.Lock()
				defer mu.Unlock()
				return h.event(onboarding.EventApplicationSent, "acme", subject, h.now)
			}
			var before []string // events committed before the call began
			for chunk := 0; chunk < 6; chunk++ {
				var events []*onboarding.Event
				for i := 0; i < dropBatch/2; i++ {
					e := event(fmt.Sprintf("app-%d", i%40))
					events = append(events, e)
					before = append(before, e.ID)
				}
				if err := h.s.update(ctx, func(txn *badger.Txn) error { return h.s.writeEvents(txn, events) }); err != nil {
					t.Fatal(err)
				}
			}

			var stopping, stopped atomic.Bool
			quit := make(chan struct{})
			added, claimedBefore, claimedAfter := make(chan struct{}, 1024), make(chan struct{}, 1024), make(chan struct{}, 1024)
			tick := func(c chan struct{}) {
				select {
				case c <- struct{}{}:
				default:
				}
			}
			errs, failed := make(chan error, 16), make(chan struct{})
			var failing sync.Once
			fail := func(err error) {
				failing.Do(func() { close(failed) })
				select {
				case errs <- err:
				default: // enough said
				}
			}
			// await takes a tick from c, unless a goroutine failed.
			await := func(c chan struct{}) bool {
				select {
				case <-c:
					return true
				case <-failed:
					return false
				}
			}
			var wg sync.WaitGroup
			for p := 0; p < 3; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-quit:
							return
						default:
						}
						e := event(fmt.Sprintf("app-%d", (p*7+i)%40))
						if err := h.s.AddEvent(ctx, e); err != nil {
							fail(fmt.Errorf("AddEvent: %w", err))
							return
						}
						if !stopping.Load() {
							mu.Lock()
							before = append(before, e.ID)
							mu.Unlock()
						}
						tick(added)
					}
				}()
			}
			wg.Add(1)
			go func() { // one claimer, as one process runs
				defer wg.Done()
				for {
					select {
					case <-quit:
						return
					default:
					}
					after := stopped.Load()
					claimed, _, err := h.s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w", Now: h.now, Lease: time.Hour, Limit: 8})
					if err != nil {
						fail(fmt.Errorf("ClaimDeliveries: %w", err))
						return
					}
					for _, d := range claimed {
						if after && d.EndpointID == ep.ID {
							fail(fmt.Errorf("a claim begun after the call returned got %s", d.EventID))
						}
						if err := h.finish(d, h.now, onboarding.DeliveryResult{Done: true}); err != nil && !errors.Is(err, onboarding.ErrLeaseLost) {
							fail(fmt.Errorf("FinishDelivery: %w", err))
							return
						}
					}
					if after {
						tick(claimedAfter)
					} else if len(claimed) > 0 {
						tick(claimedBefore)
					}
				}
			}()
			// The call is made while the load runs, and the load goes on
			// after it returns.
			for i := 0; i < 20; i++ {
				if !await(added) || !await(claimedBefore) {
					break
				}
			}
			stopping.Store(true)
			err := tt.stop(h.s, ep.ID)
			stopped.Store(true)
			for i := 0; i < 20 && err == nil; i++ {
				if !await(added) || !await(claimedAfter) {
					break
				}
			}
			close(quit)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if err != nil {
				t.Fatalf("%s under load: %v", tt.name, err)
			}

			for _, q := range h.queued() {
				if q.EndpointID == ep.ID {
					t.Errorf("left queued for the endpoint: %+v", q)
				}
			}
			late, _ := h.claim("late", h.at(48*time.Hour), 1000)
			for _, d := range late {
				if d.EndpointID == ep.ID {
					t.Errorf("claimable after the call: %s", d.EventID)
				}
			}
			lines, err := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 100 * len(before)})
			if err != nil {
				t.Fatal(err)
			}
			ended := map[string]bool{} // delivered, or dropped with a line
			for _, l := range lines {
				dropped := strings.HasPrefix(l.Error, "not delivered: the endpoint was disabled")
				if dropped && !tt.logged {
					t.Errorf("removing logged %+v", l)
				}
				if l.Success || dropped {
					ended[l.EventID] = true
				}
			}
			if tt.logged {
				missing := 0
				for _, id := range before {
					if !ended[id] {
						missing++
					}
				}
				if missing > 0 {
					t.Errorf("%d of %d events queued before disabling were neither delivered nor logged as dropped", missing, len(before))
				}
			}
		})
	}
}

// disableRecordOnly disables ep by writing its record alone, as the first
// transaction of UpdateEndpoint does, leaving its queue as it is: what a
// drain that failed (or has not run yet) leaves.
func (h *hooks) disableRecordOnly(ep *onboarding.Endpoint) {
	h.t.Helper()
	off := *ep
	off.Enabled, off.DisabledReason = false, onboarding.DisabledByOperator
	if err := h.s.db.Update(func(txn *badger.Txn) error { return setRecord(txn, endpointKey(ep.ID), &off) }); err != nil {
		h.t.Fatal(err)
	}
}

// TestClaimMeetingADisabling disables an endpoint (its record only) while a
// claim is between reading the endpoints and committing: the claim must
// conflict and, retried, lease nothing of it.
func TestClaimMeetingADisabling(t *testing.T) {
	h := newHooks(t)
	ep := h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now))
	var once sync.Once
	claimed, _, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w", Now: h.now, Lease: time.Minute, Limit: 10,
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
		t.Errorf("claimed %v of an endpoint disabled before the claim committed", pairs(claimed))
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
			ep := h.endpoint("acme")
			var events []*onboarding.Event
			for i := 0; i < dropBatch+dropBatch/2; i++ {
				events = append(events, h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%30), h.now))
			}
			if err := h.s.update(ctx, func(txn *badger.Txn) error { return h.s.writeEvents(txn, events) }); err != nil {
				t.Fatal(err)
			}
			h.disableRecordOnly(ep)
			if enable {
				got, err := h.s.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error {
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
					claimed, next := h.claim("w", h.now, 10)
					if len(claimed) != 0 {
						t.Fatalf("claimed %v of a disabled endpoint", pairs(claimed))
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
			lines, err := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 2 * len(events)})
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(events) {
				t.Errorf("%d log lines for %d dropped deliveries", len(lines), len(events))
			}
			if enable {
				e := h.event(onboarding.EventApplicationSent, "acme", "app-new", h.now)
				h.add(e)
				claimed, _ := h.claim("w", h.now, 10)
				if diff := cmp.Diff([]string{pair(ep.ID, e.ID)}, pairs(claimed)); diff != "" {
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
	h.s.Close()
	h.gcEvery = 20 * time.Millisecond
	h.open()
	ep := h.endpoint("acme")
	keep := h.endpoint("acme")
	for i := range 3 {
		h.add(h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i), h.now))
	}
	if err := h.s.db.Update(func(txn *badger.Txn) error { return txn.Delete(endpointKey(ep.ID)) }); err != nil {
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
