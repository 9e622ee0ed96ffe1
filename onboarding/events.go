package onboarding

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/oklog/ulid/v2"
)

// Events (docs/webhooks.md). An event is written to the store in the same
// transaction as the change that caused it (the transactional outbox), so a
// change that did not commit emits nothing and a crash after commit loses
// nothing. Its body is rendered once, at commit: every delivery of it and
// the events API send exactly those bytes.

// EventType names what happened.
type EventType string

// The event types.
const (
	EventApplicationCreated                  EventType = "application.created"
	EventApplicationSent                     EventType = "application.sent"
	EventApplicationOpened                   EventType = "application.opened"
	EventApplicationSubmitted                EventType = "application.submitted"
	EventApplicationReferred                 EventType = "application.referred"
	EventApplicationApproved                 EventType = "application.approved"
	EventApplicationRejected                 EventType = "application.rejected"
	EventApplicationRegistryDocumentsUpdated EventType = "application.registry_documents_updated"
	EventRFIRequestCreated                   EventType = "rfi_request.created"
	EventRFIRequestOpened                    EventType = "rfi_request.opened"
	EventRFIRequestCompleted                 EventType = "rfi_request.completed"
	EventRFIRequestExpired                   EventType = "rfi_request.expired"
	EventWebhookTest                         EventType = "webhook.test"
)

// EventTypes returns every event type, in the order docs/webhooks.md lists them.
func EventTypes() []EventType {
	return []EventType{
		EventApplicationCreated, EventApplicationSent, EventApplicationOpened, EventApplicationSubmitted,
		EventApplicationReferred, EventApplicationApproved, EventApplicationRejected,
		EventApplicationRegistryDocumentsUpdated,
		EventRFIRequestCreated, EventRFIRequestOpened, EventRFIRequestCompleted, EventRFIRequestExpired,
		EventWebhookTest,
	}
}

// ParseEventType returns the event type named s, or the API's error for an
// unknown one.
func ParseEventType(s string) (EventType, error) {
	t := EventType(s)
	if !slices.Contains(EventTypes(), t) {
		return "", ErrInvalidEventType(s)
	}
	return t, nil
}

// ErrInvalidEventType is the 400 for an event type that does not exist.
func ErrInvalidEventType(t string) *Error {
	return Errorf(KindInvalid, "Invalid event type '%s'", ClipInput(t))
}

// ErrEventNotFound is the 404 of get event.
var ErrEventNotFound = &Error{Kind: KindNotFound, Message: "Event not found"}

// EventRetention is how long events stay readable through the events API
// and redeliverable; the store forgets them after.
const EventRetention = 30 * 24 * time.Hour

// eventIDPrefix starts every event id: "evt_" and a ULID, so ids sort by
// time, never contain '.', and say what they are.
const eventIDPrefix = "evt_"

// Event is a committed fact a partner hears about, by webhook and through
// the events API.
type Event struct {
	ID    string // eventIDPrefix + ULID; the webhook-id of every delivery
	Type  EventType
	OrgID string
	// Subject is the id of the application or RFI request the event is
	// about (for webhook.test, the event's own id). One endpoint receives
	// the events of one subject in the order they happened.
	Subject string
	// Endpoint, for webhook.test, is the only endpoint the event goes to;
	// empty, the event goes to every enabled endpoint that wants its type.
	Endpoint string
	At       time.Time
	// Body is the JSON body {"id","type","timestamp","data"}, exactly as
	// webhooks send it and the events API lists it.
	Body json.RawMessage
}

// Seq is the ULID of the event's id: its position in time order. It is
// zero for an id that is not an event id.
func (e *Event) Seq() ulid.ULID {
	id, _ := EventSeq(e.ID)
	return id
}

// EventSeq parses an event id into its ULID; ok is false when id is not an
// event id.
func EventSeq(id string) (seq ulid.ULID, ok bool) {
	rest, found := strings.CutPrefix(id, eventIDPrefix)
	if !found {
		return ulid.ULID{}, false
	}
	seq, err := ulid.ParseStrict(rest)
	return seq, err == nil
}

// newEvent builds an event of org about subject, happening at, with data
// as its body's data member.
func (s *Service) newEvent(t EventType, org, subject string, at time.Time, data any) (*Event, error) {
	// Encoded as encoding/json does, by the JSON v2 implementation in that
	// mode: the same bytes in less time (storage's encode says more).
	b, err := jsonv2.Marshal(data, jsonv1.DefaultOptionsV1())
	if err != nil {
		return nil, fmt.Errorf("render event %s: %w", t, err)
	}
	return s.newEventJSON(t, org, subject, at, b)
}

// newEventJSON builds an event as newEvent does, from its data member
// already encoded. The body is the wire format of docs/webhooks.md:
// {"id","type","timestamp","data"}.
func (s *Service) newEventJSON(t EventType, org, subject string, at time.Time, data []byte) (*Event, error) {
	seq, err := s.nextSeq(at)
	if err != nil {
		return nil, err
	}
	id := eventIDPrefix + seq.String()
	if subject == "" {
		subject = id
	}
	// The id, type and timestamp are ASCII letters, digits and
	// punctuation that no JSON encoder escapes.
	b := make([]byte, 0, len(data)+len(`{"id":"","type":"","timestamp":"","data":}`)+96)
	b = append(b, `{"id":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, string(t))
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendQuote(b, Timestamp(at))
	b = append(b, `,"data":`...)
	b = append(b, data...)
	b = append(b, '}')
	return &Event{ID: id, Type: t, OrgID: org, Subject: subject, At: at, Body: b}, nil
}

// AppendViewByReflection appends v's JSON encoding to dst as encoding/json
// writes it, by the JSON v2 implementation in that mode: the encoder of
// application views when Options.AppendView is nil, and the reference that
// any other must match byte for byte.
func AppendViewByReflection(dst []byte, v *ApplicationView) ([]byte, error) {
	b, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1())
	if err != nil {
		return dst, err
	}
	if dst == nil {
		return b, nil
	}
	return append(dst, b...), nil
}

// applicationEvents returns the events an application change emits, from
// the application before and after it: each status the
// change moved it to has its event, in the order of the status machine,
// and registry documents leaving `pending` emit theirs. A change that moves
// nothing (a PATCH, a form save) emits none. before is nil for a new
// application. Every event's data is the application after the change, as
// get-application shows it, without download links and sensitive fields.
func (s *Service) applicationEvents(before *Application, after *Application, at time.Time) ([]*Event, error) {
	var types []EventType
	from := Status("")
	fromDocs := RegistryDocumentsStatus("")
	if before != nil {
		from, fromDocs = before.Status, before.RegistryDocumentsStatus
	} else {
		types = append(types, EventApplicationCreated)
	}
	if after.Status != from {
		switch after.Status {
		case StatusSent:
			types = append(types, EventApplicationSent)
		case StatusInProgress:
			types = append(types, EventApplicationOpened)
		case StatusSubmitted:
			types = append(types, EventApplicationSubmitted)
		case StatusReview:
			types = append(types, EventApplicationReferred)
		case StatusApproved:
			types = append(types, EventApplicationApproved)
		case StatusRejected:
			types = append(types, EventApplicationRejected)
		}
	}
	if fromDocs == RegistryDocumentsPending && after.RegistryDocumentsStatus != RegistryDocumentsPending {
		types = append(types, EventApplicationRegistryDocumentsUpdated)
	}
	if len(types) == 0 {
		return nil, nil
	}
	view, err := s.View(after, ViewOptions{WithoutSensitive: true})
	if err != nil {
		return nil, err
	}
	// Each event's body is a copy, so the data is encoded into a scratch
	// buffer that the next change reuses.
	scratch, _ := s.viewScratch.Get().(*[]byte)
	if scratch == nil {
		scratch = new([]byte)
	}
	data, err := s.appendView((*scratch)[:0], &view)
	if err != nil {
		return nil, fmt.Errorf("render application %s: %w", after.ID, err)
	}
	events := make([]*Event, len(types))
	for i, t := range types {
		if events[i], err = s.newEventJSON(t, after.OrgID, after.ID, at, data); err != nil {
			return nil, err
		}
	}
	if cap(data) <= maxViewScratch {
		*scratch = data
		s.viewScratch.Put(scratch)
	}
	return events, nil
}

// maxViewScratch bounds the buffers viewScratch keeps: a rare huge view is
// encoded into a buffer of its own and left to the garbage collector.
const maxViewScratch = 64 << 10

// Changes are what one change of an application writes beside its record,
// in the same transaction: activity entries, events, and the outcome of
// the request with an Idempotency-Key that made the change, if any.
type Changes struct {
	Log    []Activity
	Events []*Event
	// Idempotent, when set, is stored under its key (replacing what was
	// there) for IdempotencyTTL.
	Idempotent *IdempotentOutcome
}

// updateApplication applies change to the stored application and commits,
// in the same transaction, the activity entries it returns and the events
// the change emits (applicationEvents). Every change of an application goes
// through here, so no status move can forget its event.
func (s *Service) updateApplication(ctx context.Context, id string, change func(*Application) ([]Activity, error)) (*Application, error) {
	return updateAndEmit(ctx, s, id, s.store.UpdateApplication, change, s.applicationEvents, nil)
}

// updateApplicationFor is updateApplication for a request with an
// Idempotency-Key: done, when not nil, gives the request's outcome from
// the changed application, committed with it.
func (s *Service) updateApplicationFor(ctx context.Context, id string, done func(*Application) *IdempotentOutcome, change func(*Application) ([]Activity, error)) (*Application, error) {
	return updateAndEmit(ctx, s, id, s.store.UpdateApplication, change, s.applicationEvents, done)
}

// updateAndEmit applies change to the record id through update (a store's
// atomic read-modify-write, which may run its function more than once) and
// commits, in the same transaction, the activity entries change returns
// and the events emits finds between the record before and after it. A
// running delivery pool is told when events were committed. done, when
// not nil, gives the outcome of the request with an Idempotency-Key that
// makes the change, from the changed record, to commit with it.
func updateAndEmit[T any](ctx context.Context, s *Service, id string,
	update func(context.Context, string, func(*T) (Changes, error)) (*T, error),
	change func(*T) ([]Activity, error),
	emits func(before, after *T, at time.Time) ([]*Event, error),
	done func(*T) *IdempotentOutcome,
) (*T, error) {
	emitted := false
	r, err := update(ctx, id, func(r *T) (Changes, error) {
		before := *r
		log, err := change(r)
		if err != nil {
			return Changes{}, err
		}
		events, err := emits(&before, r, s.now().UTC())
		if err != nil {
			return Changes{}, err
		}
		emitted = len(events) > 0
		ch := Changes{Log: log, Events: events}
		if done != nil {
			ch.Idempotent = done(r)
		}
		return ch, nil
	})
	if err == nil && emitted {
		s.wakeWebhooks()
	}
	return r, err
}

// wakeWebhooks tells a running delivery pool that events were committed.
func (s *Service) wakeWebhooks() {
	select {
	case s.webhooksWake <- struct{}{}:
	default: // a wake-up is already waiting
	}
}

// WakeDeliveries tells a running delivery pool that deliveries were queued
// by another process sharing the store (an instance on the same database),
// so that it claims at once instead of at its next due time. It never
// blocks.
func (s *Service) WakeDeliveries() { s.wakeWebhooks() }
