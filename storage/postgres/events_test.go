package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

// TestWebhookEventsCommitWithTheirTransaction checks the transactional
// outbox: the events writeEvents writes are stored and queued with the
// transaction it is given, and those of a transaction that rolls back are
// not.
func TestWebhookEventsCommitWithTheirTransaction(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	boom := errors.New("boom")
	tests := []struct {
		name   string
		events []*onboarding.Event
		fail   error
	}{
		{"a transaction commits its events", []*onboarding.Event{
			h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now),
			h.event(onboarding.EventApplicationSent, "acme", "app-1", h.at(time.Second))}, nil},
		{"a failing transaction writes none", []*onboarding.Event{h.event(onboarding.EventApplicationOpened, "acme", "app-1", h.at(2*time.Second))}, boom},
	}
	want := []string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.s.inTx(ctx, func(tx pgx.Tx) error {
				if err := h.s.writeEvents(ctx, tx, tt.events); err != nil {
					return err
				}
				return tt.fail
			})
			if !errors.Is(err, tt.fail) {
				t.Fatalf("transaction = %v, want %v", err, tt.fail)
			}
			for _, e := range tt.events {
				got, err := h.s.Event(ctx, e.ID)
				if tt.fail == nil {
					want = append(want, hookPair(ep.ID, e.ID))
					if err != nil {
						t.Fatalf("Event = %v", err)
					}
					if diff := cmp.Diff(e, got); diff != "" {
						t.Errorf("stored event (-want +got):\n%s", diff)
					}
				} else if !errors.Is(err, onboarding.ErrNotFound) {
					t.Errorf("Event = %+v, %v; want ErrNotFound", got, err)
				}
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), h.queuedPairs()); diff != "" {
				t.Errorf("queue (-want +got):\n%s", diff)
			}
		})
	}
	// An event id stored already fails the transaction, which writes none
	// of its events.
	fresh := h.event(onboarding.EventApplicationOpened, "acme", "app-1", h.at(3*time.Second))
	err := h.s.inTx(ctx, func(tx pgx.Tx) error {
		return h.s.writeEvents(ctx, tx, []*onboarding.Event{fresh, tests[0].events[0]})
	})
	if !errors.Is(err, errWebhookDuplicate) {
		t.Errorf("writeEvents(a stored event) = %v, want errWebhookDuplicate", err)
	}
	if _, err := h.s.Event(ctx, fresh.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("event of a failed transaction: %v, want ErrNotFound", err)
	}
	for _, id := range []string{"", "evt_nope", "app_01KAJ6F4G0000000000000000A"} {
		if _, err := h.s.Event(ctx, id); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("Event(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if err := h.s.AddEvent(ctx, &onboarding.Event{ID: "app_1", OrgID: "acme"}); err == nil {
		t.Errorf("AddEvent(not an event id) succeeded")
	}
}

// TestWebhookExpiredEventsAreInvisible stores an event that happened
// longer ago than EventRetention: it cannot be read, listed or
// redelivered, and the delivery it was queued for is dropped with a log
// line when claimed, its subject's next event taking its place.
func TestWebhookExpiredEventsAreInvisible(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	old := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.at(-31*24*time.Hour))
	fresh := h.event(onboarding.EventApplicationSent, "acme", "app-2", h.at(-29*24*time.Hour))
	behind := h.event(onboarding.EventApplicationOpened, "acme", "app-1", h.at(-29*24*time.Hour))
	h.add(old, fresh, behind)
	if _, err := h.s.Event(ctx, old.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Event(expired) = %v, want ErrNotFound", err)
	}
	if _, err := h.s.Event(ctx, fresh.ID); err != nil {
		t.Errorf("Event(29 days old) = %v", err)
	}
	for typ, want := range map[onboarding.EventType][]string{"": {behind.ID, fresh.ID}, onboarding.EventApplicationSent: {fresh.ID}} {
		got, more, err := h.s.Events(ctx, onboarding.EventQuery{OrgID: "acme", Type: typ, Limit: 10})
		if diff := cmp.Diff(want, hookEventIDs(got)); err != nil || more || diff != "" {
			t.Errorf("Events(type %q) (-want +got):\n%s more=%v err=%v", typ, diff, more, err)
		}
	}
	if _, err := h.s.Redeliver(ctx, old.ID, "", h.now); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Redeliver(expired) = %v, want ErrNotFound", err)
	}
	claimed, next := h.claim("w1", h.now, 10)
	if diff := cmp.Diff([]string{hookPair(ep.ID, fresh.ID)}, hookPairs(claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if !next.Equal(h.now) {
		t.Errorf("next = %v, want now (%v): the event behind the dropped one is due", next, h.now)
	}
	if diff := cmp.Diff([]string{hookPair(ep.ID, fresh.ID), hookPair(ep.ID, behind.ID)}, h.queuedPairs()); diff != "" {
		t.Errorf("queue after the claim (-want +got):\n%s", diff)
	}
	if q := h.queued()[hookPair(ep.ID, behind.ID)]; !q.Head || !q.DueAt.Equal(h.now) {
		t.Errorf("the event behind the dropped one: %+v, want the head, due now", q)
	}
	lines, err := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: old.ID})
	want := []onboarding.DeliveryAttempt{{EventID: old.ID, EventType: old.Type, EndpointID: ep.ID, OrgID: "acme", At: h.now,
		Error: "not delivered: the event expired"}}
	if diff := cmp.Diff(want, lines); err != nil || diff != "" {
		t.Errorf("log of the expired event (-want +got):\n%s%v", diff, err)
	}
}

// TestWebhookEvents lists an organization's events newest first, by type,
// in pages, next to another organization's.
func TestWebhookEvents(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	types := []onboarding.EventType{onboarding.EventApplicationCreated, onboarding.EventApplicationSent, onboarding.EventApplicationCreated,
		onboarding.EventWebhookTest, onboarding.EventApplicationCreated, onboarding.EventApplicationSent, onboarding.EventApplicationCreated}
	var acme, created []string // newest first
	for i, typ := range types {
		e := h.event(typ, "acme", "", h.at(time.Duration(i)*time.Second))
		h.add(e, h.event(typ, "acme2", "", h.at(time.Duration(i)*time.Second)))
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
			got, more, err := h.s.Events(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, hookEventIDs(got)); diff != "" || more != tt.wantMore {
				t.Errorf("events (-want +got):\n%s more=%v, want %v", diff, more, tt.wantMore)
			}
		})
	}
	if _, _, err := h.s.Events(ctx, onboarding.EventQuery{OrgID: "acme", Before: "nope", Limit: 3}); !errors.Is(err, onboarding.ErrInvalidCursor) {
		t.Errorf("Events(bad cursor) = %v, want ErrInvalidCursor", err)
	}
}
