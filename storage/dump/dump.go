// Package dump is the backend-neutral form of a store's records, which
// backups carry: one Line per stored row. Either Store backend writes the
// lines of one consistent snapshot (Dump) and loads lines into an empty
// store (Load), so that a backup of one backend restores into the other.
// Records travel as the bytes of package record, which both backends
// store, so nothing is re-derived and API answers stay byte for byte the
// same; what a backend derives from a record (its indexes, its columns)
// it derives again as it loads.
package dump

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// The kinds of lines, in the order Kinds lists them.
const (
	// Application: Record is an onboarding.Application.
	Application = "application"
	// RFIRequest: Record is an onboarding.RFIRequest; Owner and
	// LeaseUntil are the claim that holds its expiry, if one does.
	RFIRequest = "rfi_request"
	// Activity: one entry of the log of Subject (an application's or
	// RFI request's id), at Seq; Record is an ActivityRecord.
	Activity = "activity"
	// ActivityHead: the head of Subject's log: its last entry's Seq and
	// Hash (hex).
	ActivityHead = "activity_head"
	// APIKey: Record is an onboarding.APIKey.
	APIKey = "api_key"
	// Idempotency: what is kept for the Idempotency-Key Key of the API
	// key ClientID until ExpiresAt: Record is the JSON of the saved
	// answer, or the onboarding.IdempotentOutcome the write committed
	// before the answer was saved.
	Idempotency = "idempotency"
	// Endpoint: Record is an onboarding.Endpoint.
	Endpoint = "endpoint"
	// Event: Record is an onboarding.Event; it expires
	// onboarding.EventRetention after its At.
	Event = "event"
	// Delivery: the delivery of event EventID (of EventType, about
	// Subject) to endpoint EndpointID, after Attempts attempts, due at
	// NextAt; Owner and LeaseUntil are the claim that holds it, if one
	// does. Head marks the one delivery of its (endpoint, subject) queue
	// that may be attempted now.
	Delivery = "delivery"
	// DeliveryAttempt: a delivery log line, Seq its place in the log;
	// Record is an onboarding.DeliveryAttempt. It expires
	// onboarding.DeliveryLogRetention after its At.
	DeliveryAttempt = "delivery_attempt"
)

// Kinds returns every kind of line in the order a dump writes them: a
// line refers only to rows of its own kind or of kinds before it.
func Kinds() []string {
	return []string{
		Application, RFIRequest, Activity, ActivityHead, APIKey, Idempotency,
		Endpoint, Event, Delivery, DeliveryAttempt,
	}
}

// Line is one stored row. Which members a kind uses is said at the kind;
// the others are empty.
type Line struct {
	Kind string `json:"kind"`
	// Record is the row's record, as package record encodes it (base64
	// in JSON).
	Record []byte `json:"record,omitempty"`

	Subject string    `json:"subject,omitempty"`
	Seq     ulid.ULID `json:"seq,omitzero"`
	Hash    string    `json:"hash,omitempty"`

	ClientID  string    `json:"client_id,omitempty"`
	Key       string    `json:"key,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`

	EventID    string               `json:"event_id,omitempty"`
	EventType  onboarding.EventType `json:"event_type,omitempty"`
	EndpointID string               `json:"endpoint_id,omitempty"`
	Attempts   int                  `json:"attempts,omitempty"`
	NextAt     time.Time            `json:"next_at,omitzero"`
	Head       bool                 `json:"head,omitempty"`

	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
}

// ActivityRecord is the record of an Activity line: the entry and its
// link in its log's hash chain (onboarding.LoggedActivity without the
// Seq, which the line carries).
type ActivityRecord struct {
	onboarding.Activity
	Prev string // hex
	Hash string // hex
}

// ErrNotEmpty is what Load answers when the store already holds records.
var ErrNotEmpty = errors.New("the store already holds records; load into an empty one")

// Check says what is wrong with the shape of l, or nil: a known kind with
// the members it needs. It does not decode the record; the store that
// loads the line does.
func (l *Line) Check() error {
	record := member{"record", len(l.Record) > 0}
	lease := member{"lease_until", l.Owner == "" || !l.LeaseUntil.IsZero()}
	subject := member{"subject", l.Subject != ""}
	seq := member{"seq", l.Seq != ulid.ULID{}}
	var missing string
	switch l.Kind {
	case Application, APIKey, Endpoint, Event:
		missing = firstMissing(record)
	case RFIRequest:
		missing = firstMissing(record, lease)
	case Activity:
		missing = firstMissing(record, subject, seq)
	case ActivityHead:
		missing = firstMissing(subject, seq, member{"hash", l.Hash != ""})
	case Idempotency:
		missing = firstMissing(record, member{"client_id", l.ClientID != ""}, member{"key", l.Key != ""},
			member{"expires_at", !l.ExpiresAt.IsZero()})
	case Delivery:
		missing = firstMissing(member{"event_id", l.EventID != ""}, member{"endpoint_id", l.EndpointID != ""}, subject, lease)
	case DeliveryAttempt:
		missing = firstMissing(record, seq)
	default:
		return fmt.Errorf("unknown kind %q", l.Kind)
	}
	if missing != "" {
		return fmt.Errorf("%s without %s", l.Kind, missing)
	}
	return nil
}

// member is whether a line has the member of that JSON name.
type member struct {
	name    string
	present bool
}

// firstMissing is the name of the first member not present, or "".
func firstMissing(ms ...member) string {
	for _, m := range ms {
		if !m.present {
			return m.name
		}
	}
	return ""
}

// Known reports whether kind is a kind of line.
func Known(kind string) bool { return slices.Contains(Kinds(), kind) }

// LineError is a line a store could not load for what the line holds
// (not for a failure of the store itself): Line counts from 1.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }
