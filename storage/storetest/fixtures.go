package storetest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// t0 is the fixtures' creation time.
var t0 = fixture.T0

// hooks is a store for the event and webhook cases, with a clock that
// starts now (events expire relative to the real time) and makers of
// events and endpoints.
type hooks struct {
	t       *testing.T
	open    Opener
	s       onboarding.Store
	now     time.Time
	entropy *ulid.MonotonicEntropy
}

func newHooks(t *testing.T, open Opener) *hooks {
	t.Helper()
	h := &hooks{t: t, open: open, now: time.Now().UTC().Truncate(time.Millisecond), entropy: ulid.Monotonic(rand.Reader, 0)}
	h.s = open(t, Options{Now: h.clock})
	if h.s == nil {
		t.Fatal("the Opener returned no store for fresh data")
	}
	return h
}

// clock is the store's clock: h.now.
func (h *hooks) clock() time.Time { return h.now }

// restart closes h's store and opens its data again.
func (h *hooks) restart() {
	h.t.Helper()
	h.s = reopen(h.t, h.open, h.s, h.clock)
}

// at is h.now plus d.
func (h *hooks) at(d time.Duration) time.Time { return h.now.Add(d) }

// event builds (without storing) an event of org about subject at at.
func (h *hooks) event(typ onboarding.EventType, org, subject string, at time.Time) *onboarding.Event {
	id := "evt_" + ulid.MustNew(ulid.Timestamp(at), h.entropy).String()
	if subject == "" {
		subject = id
	}
	return &onboarding.Event{ID: id, Type: typ, OrgID: org, Subject: subject, At: at,
		Body: json.RawMessage(fmt.Sprintf(`{"id":%q,"type":%q,"data":{}}`, id, typ))}
}

// add stores events with AddEvent.
func (h *hooks) add(events ...*onboarding.Event) {
	h.t.Helper()
	for _, e := range events {
		if err := h.s.AddEvent(context.Background(), e); err != nil {
			h.t.Fatalf("AddEvent(%s): %v", e.Type, err)
		}
	}
}

// endpoint creates an enabled endpoint of org receiving types (none: all).
func (h *hooks) endpoint(org string, types ...onboarding.EventType) *onboarding.Endpoint {
	h.t.Helper()
	ep := &onboarding.Endpoint{ID: "we_" + ulid.MustNew(ulid.Timestamp(h.now), h.entropy).String(), OrgID: org,
		URL: "https://hooks.example.com/" + org, Events: types, Enabled: true, CreatedAt: h.now,
		Secrets: []onboarding.SigningSecret{{Key: []byte("k"), CreatedAt: h.now}}}
	if err := h.s.CreateEndpoint(context.Background(), ep); err != nil {
		h.t.Fatal(err)
	}
	return ep
}

// disable disables ep as the operator does.
func (h *hooks) disable(ep *onboarding.Endpoint) {
	h.t.Helper()
	if _, err := h.s.UpdateEndpoint(context.Background(), ep.ID, func(e *onboarding.Endpoint) error { e.Enabled = false; return nil }); err != nil {
		h.t.Fatal(err)
	}
}

// claim claims up to limit deliveries for owner at at, with a one-minute lease.
func (h *hooks) claim(owner string, at time.Time, limit int) ([]*onboarding.Delivery, time.Time) {
	h.t.Helper()
	got, next, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: owner, Now: at, Lease: time.Minute, Limit: limit})
	if err != nil {
		h.t.Fatal(err)
	}
	checkQueues(h.t, h.s)
	return got, next
}

// finish finishes d alone with a log line at at, answering
// onboarding.ErrLeaseLost when its claim no longer held.
func (h *hooks) finish(d *onboarding.Delivery, at time.Time, r onboarding.DeliveryResult) error {
	r.Attempt = onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: d.Event.OrgID,
		Attempt: d.Attempts + 1, At: at, StatusCode: 200, Success: r.Done}
	lost, err := h.s.FinishDeliveries(context.Background(), []onboarding.FinishedDelivery{{Delivery: d, Result: r}})
	if err != nil {
		return err
	}
	if len(lost) != 1 {
		h.t.Fatalf("FinishDeliveries of one delivery answered %d lost flags", len(lost))
	}
	checkQueues(h.t, h.s)
	if lost[0] {
		return onboarding.ErrLeaseLost
	}
	return nil
}

// finishAll finishes ds as delivered.
func (h *hooks) finishAll(ds []*onboarding.Delivery, at time.Time) {
	h.t.Helper()
	for _, d := range ds {
		if err := h.finish(d, at, onboarding.DeliveryResult{Done: true}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// queued counts the queued deliveries.
func (h *hooks) queued() int {
	h.t.Helper()
	n, err := h.s.QueuedDeliveries(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// pair names a delivery by endpoint and event.
func pair(endpointID, eventID string) string { return endpointID + " " + eventID }

// pairs names deliveries, sorted.
func pairs(ds []*onboarding.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, pair(d.EndpointID, d.EventID))
	}
	sort.Strings(out)
	return out
}

// sorted returns ss sorted, never nil.
func sorted(ss ...string) []string {
	out := append([]string{}, ss...)
	sort.Strings(out)
	return out
}

// errBoom is the error of a change that fails.
var errBoom = errors.New("boom")
