package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// disableRowOnly disables ep by writing its row alone, as UpdateEndpoint's
// first transaction does, leaving its queue as it is: what a drop that
// failed (or has not run yet) leaves.
func (h *hookEnv) disableRowOnly(ep *onboarding.Endpoint) {
	h.T.Helper()
	off := *ep
	off.Enabled, off.DisabledReason = false, onboarding.DisabledByOperator
	if err := h.S.inTx(context.Background(), func(tx pgx.Tx) error { return writeEndpoint(context.Background(), tx, &off) }); err != nil {
		h.T.Fatal(err)
	}
}

// TestWebhookClaimMeetingADisabling disables an endpoint (its row only)
// while a claim is between reading the endpoints and leasing: the claim
// leases nothing of it.
func TestWebhookClaimMeetingADisabling(t *testing.T) {
	h := newHookEnv(t)
	ep := h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now))
	var once sync.Once
	claimed, _, err := h.S.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: "w", Now: h.Now, Lease: time.Minute, Limit: 10,
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
		t.Errorf("claimed %v of an endpoint disabled before the claim leased", fixture.Pairs(claimed))
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
			ep := h.Endpoint("acme")
			var events []*onboarding.Event
			for i := 0; i < 90; i++ {
				events = append(events, h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", i%30), h.Now))
			}
			h.write(events...)
			h.disableRowOnly(ep)
			if claimed, next := h.Claim("w", h.Now, 10); len(claimed) != 0 || !next.IsZero() {
				t.Errorf("claim of a disabled endpoint's queue = %v, next %v; want none, zero", fixture.Pairs(claimed), next)
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
			} else if swept, err := h.S.sweepWebhooks(ctx); err != nil || !swept {
				t.Fatalf("sweep = %v, %v", swept, err)
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
