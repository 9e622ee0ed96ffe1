package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

// TestWebhookStoppingAnEndpointUnderLoad disables or removes an endpoint
// with a backlog while producers on two instances queue events for it and
// a worker on one of them claims and finishes deliveries. The call
// succeeds; no claim that starts after it returns gets a delivery of the
// endpoint; every event queued before the call began was delivered or
// (disabling) dropped with a log line; and nothing of the endpoint's queue
// is left.
func TestWebhookStoppingAnEndpointUnderLoad(t *testing.T) {
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
			h := newHookEnv(t)
			stores := []*Store{h.s, h.open()}
			ep := h.endpoint("acme")
			h.endpoint("acme") // another endpoint, whose deliveries go on
			event := func(subject string) *onboarding.Event {
				return h.event(onboarding.EventApplicationSent, "acme", subject, h.now)
			}
			var mu sync.Mutex
			var before []string // events committed before the call began
			for chunk := 0; chunk < 4; chunk++ {
				var events []*onboarding.Event
				for i := 0; i < 250; i++ {
					e := event(fmt.Sprintf("app-%d", i%40))
					events = append(events, e)
					before = append(before, e.ID)
				}
				h.write(events...)
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
				wg.Go(func() {
					s := stores[p%len(stores)]
					for i := 0; ; i++ {
						select {
						case <-quit:
							return
						default:
						}
						e := event(fmt.Sprintf("app-%d", (p*7+i)%40))
						if err := s.AddEvent(ctx, e); err != nil {
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
				})
			}
			wg.Go(func() { // one claimer, on the other instance
				s := stores[1]
				for {
					select {
					case <-quit:
						return
					default:
					}
					after := stopped.Load()
					claimed, _, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w", Now: h.now, Lease: time.Hour, Limit: 8})
					if err != nil {
						fail(fmt.Errorf("ClaimDeliveries: %w", err))
						return
					}
					for _, d := range claimed {
						if after && d.EndpointID == ep.ID {
							fail(fmt.Errorf("a claim begun after the call returned got %s", d.EventID))
						}
						if err := h.finishOn(s, d, h.now, onboarding.DeliveryResult{Done: true}); err != nil && !errors.Is(err, onboarding.ErrLeaseLost) {
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
			})
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
			late, _ := h.claim("late", h.at(48*time.Hour), 10000)
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

// disableRowOnly disables ep by writing its row alone, as UpdateEndpoint's
// first transaction does, leaving its queue as it is: what a drop that
// failed (or has not run yet) leaves.
func (h *hookEnv) disableRowOnly(ep *onboarding.Endpoint) {
	h.t.Helper()
	off := *ep
	off.Enabled, off.DisabledReason = false, onboarding.DisabledByOperator
	if err := h.s.inTx(context.Background(), func(tx pgx.Tx) error { return writeEndpoint(context.Background(), tx, &off) }); err != nil {
		h.t.Fatal(err)
	}
}

// TestWebhookClaimMeetingADisabling disables an endpoint (its row only)
// while a claim is between reading the endpoints and leasing: the claim
// leases nothing of it.
func TestWebhookClaimMeetingADisabling(t *testing.T) {
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	h.add(h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now))
	var once sync.Once
	claimed, _, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w", Now: h.now, Lease: time.Minute, Limit: 10,
		MaxInFlight: func(string) int {
			// Called inside the claim's transaction, after it read the
			// endpoint enabled.
			once.Do(func() { h.disableRowOnly(ep) })
			return 10
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 0 {
		t.Errorf("claimed %v of an endpoint disabled before the claim leased", hookPairs(claimed))
	}
}

// TestWebhookLeftoversOfADisabledEndpoint leaves a disabled endpoint's
// queue in place (a drop that failed): claims do not take it; enabling
// the endpoint drops it first, or the sweep does, each delivery with a log
// line, so that nothing queued before the disabling is sent.
func TestWebhookLeftoversOfADisabledEndpoint(t *testing.T) {
	ctx := context.Background()
	for _, enable := range []bool{false, true} {
		t.Run(fmt.Sprintf("enable=%v", enable), func(t *testing.T) {
			h := newHookEnv(t)
			ep := h.endpoint("acme")
			var events []*onboarding.Event
			for i := 0; i < 90; i++ {
				events = append(events, h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%30), h.now))
			}
			h.write(events...)
			h.disableRowOnly(ep)
			if claimed, next := h.claim("w", h.now, 10); len(claimed) != 0 || !next.IsZero() {
				t.Errorf("claim of a disabled endpoint's queue = %v, next %v; want none, zero", hookPairs(claimed), next)
			}
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
			} else if swept, err := h.s.sweepWebhooks(ctx); err != nil || !swept {
				t.Fatalf("sweep = %v, %v", swept, err)
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
				if diff := cmp.Diff([]string{hookPair(ep.ID, e.ID)}, hookPairs(claimed)); diff != "" {
					t.Errorf("claimed after enabling (-want +got):\n%s", diff)
				}
			}
		})
	}
}
