package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var eventCases = []suiteCase{
	{"CommitWithTheirChange", testEventsCommitWithTheirChange},
	{"ExpiredAreInvisible", testExpiredEventsAreInvisible},
	{"List", testEvents},
	{"Duplicate", testDuplicateEvent},
}

// testEventsCommitWithTheirChange checks the transactional outbox: the
// events of a create or an update are stored and queued with it, and those
// of a change that fails are not.
func testEventsCommitWithTheirChange(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	created := h.Event(onboarding.EventApplicationCreated, "acme", app.ID, h.Now)
	if err := h.S.CreateApplication(ctx, app, onboarding.Changes{Events: []*onboarding.Event{created}}); err != nil {
		t.Fatal(err)
	}
	fixture.CheckQueues(t, h.S)
	tests := []struct {
		name    string
		event   *onboarding.Event
		fail    error
		stored  bool
		wantErr error
	}{
		{"an update commits its event", h.Event(onboarding.EventApplicationSent, "acme", app.ID, h.At(time.Second)), nil, true, nil},
		{"a failing update writes none", h.Event(onboarding.EventApplicationOpened, "acme", app.ID, h.At(2*time.Second)), errBoom, false, errBoom},
	}
	want := []*onboarding.Event{created} // queued, in the subject's order
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.S.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				a.Status = onboarding.StatusSent
				return onboarding.Changes{Events: []*onboarding.Event{tt.event}}, tt.fail
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("UpdateApplication = %v, want %v", err, tt.wantErr)
			}
			fixture.CheckQueues(t, h.S)
			got, err := h.S.Event(ctx, tt.event.ID)
			if tt.stored {
				want = append(want, tt.event)
				if err != nil {
					t.Fatalf("Event = %v", err)
				}
				if diff := cmp.Diff(tt.event, got); diff != "" {
					t.Errorf("stored event (-want +got):\n%s", diff)
				}
			} else {
				wantNotFound(t, "Event(of a failed update)", err)
			}
			if n := h.Queued(); n != len(want) {
				t.Errorf("QueuedDeliveries = %d, want %d", n, len(want))
			}
		})
	}
	got, err := h.S.Event(ctx, created.ID)
	if err != nil || !cmp.Equal(created, got) {
		t.Errorf("Event(created) = %+v, %v", got, err)
	}
	// A create that fails stores none of its events.
	dup := h.Event(onboarding.EventApplicationCreated, "acme", app.ID, h.At(3*time.Second))
	if err := h.S.CreateApplication(ctx, app, onboarding.Changes{Events: []*onboarding.Event{dup}}); err == nil {
		t.Fatal("CreateApplication(duplicate) succeeded")
	}
	_, err = h.S.Event(ctx, dup.ID)
	wantNotFound(t, "Event(of a failed create)", err)
	if n := h.Queued(); n != len(want) {
		t.Errorf("QueuedDeliveries after a failed create = %d, want %d", n, len(want))
	}
	for _, id := range []string{"", "evt_nope", "app_01KAJ6F4G0000000000000000A"} {
		_, err := h.S.Event(ctx, id)
		wantNotFound(t, "Event("+id+")", err)
	}
	// The queue holds exactly the committed events, delivered in order.
	for _, e := range want {
		claimed, _ := h.Claim("w1", h.At(time.Hour), 10)
		if diff := cmp.Diff([]string{fixture.Pair(ep.ID, e.ID)}, fixture.Pairs(claimed)); diff != "" {
			t.Fatalf("claim (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(e, claimed[0].Event); diff != "" {
			t.Errorf("claimed event (-want +got):\n%s", diff)
		}
		h.FinishAll(claimed, h.At(time.Hour))
	}
	if claimed, next := h.Claim("w1", h.At(time.Hour), 10); len(claimed) != 0 || !next.IsZero() {
		t.Errorf("claim of an empty queue = %v, next %v", fixture.Pairs(claimed), next)
	}
}

// testExpiredEventsAreInvisible stores an event that happened longer ago
// than EventRetention: it cannot be read, listed or redelivered, and the
// delivery it was queued for is dropped with a log line when claimed.
func testExpiredEventsAreInvisible(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	old := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(-onboarding.EventRetention-24*time.Hour))
	fresh := h.Event(onboarding.EventApplicationSent, "acme", "app-2", h.At(-onboarding.EventRetention+24*time.Hour))
	behind := h.Event(onboarding.EventApplicationOpened, "acme", "app-1", h.At(-onboarding.EventRetention+24*time.Hour))
	h.Add(old, fresh, behind)
	_, err := h.S.Event(ctx, old.ID)
	wantNotFound(t, "Event(expired)", err)
	if _, err := h.S.Event(ctx, fresh.ID); err != nil {
		t.Errorf("Event(a day from expiry) = %v", err)
	}
	for typ, want := range map[onboarding.EventType][]string{"": {behind.ID, fresh.ID}, onboarding.EventApplicationSent: {fresh.ID}} {
		got, more, err := h.S.Events(ctx, onboarding.EventQuery{OrgID: "acme", Type: typ, Limit: 10})
		if diff := cmp.Diff(want, eventIDs(got)); err != nil || more || diff != "" {
			t.Errorf("Events(type %q) (-want +got):\n%s more=%v err=%v", typ, diff, more, err)
		}
	}
	_, err = h.S.Redeliver(ctx, old.ID, "", h.Now)
	wantNotFound(t, "Redeliver(expired)", err)
	// The expired event is dropped from its subject's queue, and the one
	// behind it is due at once.
	claimed, next := h.Claim("w1", h.Now, 10)
	if !slices.ContainsFunc(claimed, func(d *onboarding.Delivery) bool { return d.EventID == behind.ID }) {
		if !next.Equal(h.Now) {
			t.Errorf("next = %v, want now (%v): the event behind the dropped one is due", next, h.Now)
		}
		more, _ := h.Claim("w1", h.Now, 10)
		claimed = append(claimed, more...)
	}
	if diff := cmp.Diff(sorted(fixture.Pair(ep.ID, fresh.ID), fixture.Pair(ep.ID, behind.ID)), fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if n := h.Queued(); n != 2 {
		t.Errorf("QueuedDeliveries after the claims = %d, want the two unexpired", n)
	}
	lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: old.ID})
	want := []onboarding.DeliveryAttempt{{EventID: old.ID, EventType: old.Type, EndpointID: ep.ID, OrgID: "acme", At: h.Now,
		Error: "not delivered: the event expired"}}
	if diff := cmp.Diff(want, lines); err != nil || diff != "" {
		t.Errorf("log of the expired event (-want +got):\n%s%v", diff, err)
	}
}

func eventIDs(events []*onboarding.Event) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

// testEvents lists an organization's events newest first, by type, in
// pages, next to another organization's.
func testEvents(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	types := []onboarding.EventType{onboarding.EventApplicationCreated, onboarding.EventApplicationSent, onboarding.EventApplicationCreated,
		onboarding.EventWebhookTest, onboarding.EventApplicationCreated, onboarding.EventApplicationSent, onboarding.EventApplicationCreated}
	var acme, created []string // newest first
	for i, typ := range types {
		e := h.Event(typ, "acme", "", h.At(time.Duration(i)*time.Second))
		h.Add(e, h.Event(typ, "acme2", "", h.At(time.Duration(i)*time.Second)))
		acme = append([]string{e.ID}, acme...)
		if typ == onboarding.EventApplicationCreated {
			created = append([]string{e.ID}, created...)
		}
	}
	tests := []struct {
		name     string
		q        onboarding.EventQuery
		want     []string
		wantMore bool
	}{
		{"all", onboarding.EventQuery{OrgID: "acme", Limit: 100}, acme, false},
		{"first page", onboarding.EventQuery{OrgID: "acme", Limit: 3}, acme[:3], true},
		{"after a cursor", onboarding.EventQuery{OrgID: "acme", Before: acme[2], Limit: 3}, acme[3:6], true},
		{"last page", onboarding.EventQuery{OrgID: "acme", Before: acme[5], Limit: 3}, acme[6:], false},
		{"limit equal to the rest", onboarding.EventQuery{OrgID: "acme", Before: acme[3], Limit: 3}, acme[4:], false},
		{"by type", onboarding.EventQuery{OrgID: "acme", Type: onboarding.EventApplicationCreated, Limit: 100}, created, false},
		{"by type, paged", onboarding.EventQuery{OrgID: "acme", Type: onboarding.EventApplicationCreated, Before: created[0], Limit: 2}, created[1:3], true},
		{"a type with none", onboarding.EventQuery{OrgID: "acme", Type: onboarding.EventRFIRequestExpired, Limit: 10}, []string{}, false},
		{"an organization with none", onboarding.EventQuery{OrgID: "acm", Limit: 10}, []string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, more, err := h.S.Events(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, eventIDs(got)); diff != "" || more != tt.wantMore {
				t.Errorf("events (-want +got):\n%s more=%v, want %v", diff, more, tt.wantMore)
			}
		})
	}
	if _, _, err := h.S.Events(ctx, onboarding.EventQuery{OrgID: "acme", Before: "nope", Limit: 3}); !errors.Is(err, onboarding.ErrInvalidCursor) {
		t.Errorf("Events(bad cursor) = %v, want ErrInvalidCursor", err)
	}
	got, _, err := h.S.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("Events(limit 1) = %v, %v", eventIDs(got), err)
	}
	stored, err := h.S.Event(ctx, got[0].ID)
	if err != nil || !cmp.Equal(stored, got[0]) {
		t.Errorf("listed event and Event differ: %+v, %+v, %v", got[0], stored, err)
	}
}

// testDuplicateEvent: a second AddEvent of an event id, or one of an id
// that is not an event's, fails; the duplicate queues
// nothing more.
func testDuplicateEvent(t *testing.T, open Opener) {
	h := newHooks(t, open)
	h.Endpoint("acme")
	e := h.Event(onboarding.EventWebhookTest, "acme", "", h.Now)
	h.Add(e)
	if err := h.S.AddEvent(context.Background(), e); err == nil {
		t.Error("AddEvent(duplicate) succeeded")
	}
	if err := h.S.AddEvent(context.Background(), &onboarding.Event{ID: "app_1", OrgID: "acme"}); err == nil {
		t.Error("AddEvent(not an event id) succeeded")
	}
	if n := h.Queued(); n != 1 {
		t.Errorf("QueuedDeliveries = %d, want 1", n)
	}
}
