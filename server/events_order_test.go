package server

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/notify"
	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestDeliveryOrderWhenClockStepsBack: docs/webhooks.md says events of one
// application reach each endpoint in the order they happened. The queue of
// (endpoint, application) is ordered by the event id's ULID, so
// Service.nextSeq must issue increasing ULIDs even when the wall clock
// steps back (an NTP correction): ulid.Monotonic alone keeps that promise
// only within one millisecond, and a later event would jump the queue.
func TestDeliveryOrderWhenClockStepsBack(t *testing.T) {
	e := newEnv(t, envOptions{transport: notify.NewWebhooks(notify.WebhookOptions{AllowPrivate: true, AllowHTTP: true})})
	e.addEndpoint(t, "http://127.0.0.1:9/hook")
	ctx := context.Background()

	e.mail.mu.Lock()
	e.mail.fail = errors.New("relay down")
	e.mail.mu.Unlock()
	id := e.create(t, "acme", "") // application.created, the queue's head
	e.mail.mu.Lock()
	e.mail.fail = nil
	e.mail.mu.Unlock()
	if w := e.do("POST", "/api/external/applications/"+id+"/invite", "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("resend = %d %s", w.Code, w.Body)
	}
	// application.sent waits behind it. Then the wall clock steps back two
	// seconds, and the application is approved.
	e.setStatus(t, id, onboarding.StatusSubmitted)
	e.clock.Advance(-2 * time.Second)
	e.decide(t, id, `{"type":"application.approved"}`)

	var got []onboarding.EventType
	for range 5 {
		claimed, _, err := e.store.ClaimDeliveries(ctx, onboarding.Claim{Owner: "review", Now: e.clock.Now().Add(time.Hour), Lease: time.Minute, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(claimed) == 0 {
			break
		}
		for _, d := range claimed {
			got = append(got, d.Event.Type)
			if err := fixture.FinishDelivery(ctx, e.store, d, onboarding.DeliveryResult{Done: true, Attempt: onboarding.DeliveryAttempt{
				EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: "acme", Attempt: 1, At: e.clock.Now(), Success: true,
			}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []onboarding.EventType{onboarding.EventApplicationCreated, onboarding.EventApplicationSent, onboarding.EventApplicationApproved}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivery order to the endpoint (-want +got):\n%s", diff)
	}
}
