package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// LeftoverMaker is implemented, in its own tests only, by a store that
// can leave what a drop of a disabled endpoint's queue that failed (or
// has not run yet) leaves: the endpoint's record disabled, its queue in
// place. The suite checks that nothing of such a queue is sent.
type LeftoverMaker interface {
	// DisableRecordOnly disables ep by writing its record alone, as the
	// first step of UpdateEndpoint does, leaving its queue as it is. It may
	// run inside the store's own transaction (Claim.MaxInFlight).
	DisableRecordOnly(t *testing.T, ep *onboarding.Endpoint)
	// DropLeftovers runs, at now, what drops such queues without an
	// enabling (the claims, or a sweep), each delivery with a log line.
	DropLeftovers(t *testing.T, now time.Time)
}

// leftoverMaker returns s as a LeftoverMaker, or skips t.
func leftoverMaker(t *testing.T, s onboarding.Store) LeftoverMaker {
	t.Helper()
	m, ok := s.(LeftoverMaker)
	if !ok {
		t.Skip("the store cannot leave a disabled endpoint's queue in place")
	}
	return m
}

// testClaimMeetingADisabling disables an endpoint (its record only) while
// a claim is between reading the endpoints and leasing: the claim leases
// nothing of it.
func testClaimMeetingADisabling(t *testing.T, open Opener) {
	h := newHooks(t, open)
	m := leftoverMaker(t, h.S)
	ep := h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now))
	var once sync.Once
	claimed, _, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w", Now: h.Now, Lease: time.Minute, Limit: 10,
		MaxInFlight: func(string) int {
			// Called inside the claim's transaction, after it read the
			// endpoint enabled.
			once.Do(func() { m.DisableRecordOnly(t, ep) })
			return 10
		}})
	if err != nil {
		t.Fatal(err)
	}
	fixture.CheckQueues(t, h.S)
	if len(claimed) != 0 {
		t.Errorf("claimed %v of an endpoint disabled before the claim leased", fixture.Pairs(claimed))
	}
}

// testLeftoversOfADisabledEndpoint leaves a disabled endpoint's queue in
// place, more than one of Badger's drop batches: claims lease nothing of
// it; enabling the endpoint drops it first, or the store's own round does
// (DropLeftovers), each delivery with a log line, so that nothing queued
// before the disabling is sent.
func testLeftoversOfADisabledEndpoint(t *testing.T, open Opener) {
	for _, enable := range []bool{false, true} {
		t.Run(fmt.Sprintf("enable=%v", enable), func(t *testing.T) {
			ctx := context.Background()
			h := newHooks(t, open)
			m := leftoverMaker(t, h.S)
			ep := h.Endpoint("acme")
			var events []*onboarding.Event
			for i := 0; i < 750; i++ {
				events = append(events, h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%30), h.Now))
			}
			h.Add(events...)
			m.DisableRecordOnly(t, ep)
			if claimed, _ := h.Claim("w", h.Now, 10); len(claimed) != 0 {
				t.Errorf("claimed %v of a disabled endpoint's queue", fixture.Pairs(claimed))
			}
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
				m.DropLeftovers(t, h.Now)
			}
			fixture.CheckQueues(t, h.S)
			if n := h.Queued(); n != 0 {
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
