package onboarding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Decisions (docs/api.md): the provider records its approval,
// rejection or referral of a submitted application. The status moves with
// it, and the status move emits the decision's event.

// DecisionType is what the provider decided.
type DecisionType string

// The decision types.
const (
	DecisionApproved DecisionType = "application.approved"
	DecisionRejected DecisionType = "application.rejected"
	DecisionReferred DecisionType = "application.referred"
)

// MaxDecisionData bounds a decision's data object, in bytes.
const MaxDecisionData = 16 << 10

// ActionDecisionRecorded is the activity log's entry for a decision.
const ActionDecisionRecorded = "decision.recorded"

// Decision errors, in the order they are checked.
var (
	ErrInvalidDecisionType = &Error{Kind: KindInvalid, Message: "Invalid decision type: must be one of application.approved, application.rejected, application.referred"}
	ErrDecisionAppMismatch = &Error{Kind: KindInvalid, Message: "application_id does not match the path"}
	ErrInvalidTimestamp    = &Error{Kind: KindInvalid, Message: "Invalid timestamp"}
	ErrDecisionData        = &Error{Kind: KindInvalid, Message: "data must be an object of at most 16 KiB"}
)

// errUnchanged aborts an update that has nothing to write.
var errUnchanged = errors.New("nothing to change")

// ErrCannotDecide is the 400 for a decision on an application that is not
// submitted or in review.
func ErrCannotDecide(st Status) *Error {
	return Errorf(KindInvalid, "Cannot record a decision for application in %s status", st)
}

// Decision is a recorded decision, listed in get-application.
type Decision struct {
	ID         string
	Type       DecisionType
	Timestamp  time.Time // when the provider decided
	RecordedAt time.Time
	Data       json.RawMessage // the request's data object, verbatim; nil without one
	APIKeyID   string
	APIKeyName string
}

// status is where a decision of type t moves an application.
func (t DecisionType) status() Status {
	switch t {
	case DecisionApproved:
		return StatusApproved
	case DecisionRejected:
		return StatusRejected
	default:
		return StatusReview
	}
}

// DecisionRecord is what recording a decision answers.
type DecisionRecord struct {
	Decision        Decision
	Application     *Application
	AlreadyRecorded bool // the same type as the latest decision: nothing changed
}

// DecisionInput is a decision as the provider sent it.
type DecisionInput struct {
	Type DecisionType
	// Timestamp is when the provider decided; nil: when it is recorded.
	Timestamp *time.Time
	// Data is the provider's own object, kept with the decision; nil when
	// none was sent.
	Data json.RawMessage
	// Idempotency, when set, is the request's Idempotency-Key: its
	// outcome is committed with the decision.
	Idempotency *Idempotency
}

// Valid reports whether t is one of the decision types.
func (t DecisionType) Valid() bool {
	return t == DecisionApproved || t == DecisionRejected || t == DecisionReferred
}

// RecordDecision records a decision on an application of k's organization
// (docs/api.md). The same type as the latest decision changes nothing and
// answers AlreadyRecorded; otherwise the application must be submitted or
// in review, and moves to review (referred) or to its terminal status,
// with completed_at.
func (s *Service) RecordDecision(ctx context.Context, k *APIKey, appID string, in DecisionInput) (*DecisionRecord, error) {
	if err := Authorize(k, ScopeApplicationsWrite); err != nil {
		return nil, err
	}
	if !in.Type.Valid() {
		return nil, ErrInvalidDecisionType
	}
	now := s.now().UTC()
	t, at, data := in.Type, now, in.Data
	if in.Timestamp != nil {
		at = *in.Timestamp
	}
	// The application is read once, in the update's transaction, which
	// checks its organization (updateOwnApplication).
	if u, err := uuid.Parse(appID); err != nil || u.String() != appID {
		return nil, ErrApplicationNotFound
	}
	id, err := newUUID(s.random)
	if err != nil {
		return nil, err
	}
	var rec DecisionRecord
	done := func(a *Application) *IdempotentOutcome {
		o := in.Idempotency.outcome(a.ID)
		if o != nil {
			o.DecisionID = id
		}
		return o
	}
	app, err := s.updateOwnApplicationFor(ctx, k, appID, done, func(a *Application) ([]Activity, error) {
		rec = DecisionRecord{}
		if n := len(a.Decisions); n > 0 && a.Decisions[n-1].Type == t {
			// The answer is the application as it stood with this decision
			// latest: nothing is written.
			rec.Decision, rec.Application, rec.AlreadyRecorded = a.Decisions[n-1], a, true
			return nil, errUnchanged
		}
		if a.Status != StatusSubmitted && a.Status != StatusReview {
			return nil, ErrCannotDecide(a.Status)
		}
		rec.Decision = Decision{ID: id, Type: t, Timestamp: at, RecordedAt: now, Data: data, APIKeyID: k.ClientID, APIKeyName: k.Name}
		a.Decisions = append(a.Decisions, rec.Decision)
		a.Status = t.status()
		if a.Status.Terminal() {
			a.CompletedAt = &now
		}
		a.UpdatedAt = now
		return []Activity{{At: now, Action: ActionDecisionRecorded, Actor: keyActor(k), Detail: string(t)}}, nil
	})
	if rec.AlreadyRecorded {
		return &rec, nil
	}
	if err != nil {
		return nil, err
	}
	rec.Application = app
	return &rec, nil
}

// ReplayDecision rebuilds the answer of the decision request whose outcome
// is o: the decision it recorded, and the status that decision gave.
func (s *Service) ReplayDecision(ctx context.Context, k *APIKey, o *IdempotentOutcome) (*DecisionRecord, error) {
	app, err := s.application(ctx, k, o.ID)
	if err != nil {
		return nil, err
	}
	for _, d := range app.Decisions {
		if d.ID == o.DecisionID {
			app.Status = d.Type.status()
			return &DecisionRecord{Decision: d, Application: app}, nil
		}
	}
	return nil, fmt.Errorf("replay decision %s: not on application %s", o.DecisionID, app.ID)
}
