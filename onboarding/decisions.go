package onboarding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Decisions (spec 4.8, DESIGN §5.2): the provider records its approval,
// rejection or referral of a submitted application. The status moves with
// it (DESIGN §5.1), and the status move emits the decision's event.

// DecisionType is what the provider decided.
type DecisionType string

// The decision types.
const (
	DecisionApproved DecisionType = "application.approved"
	DecisionRejected DecisionType = "application.rejected"
	DecisionReferred DecisionType = "application.referred"
)

// maxDecisionData bounds a decision's data object, in bytes.
const maxDecisionData = 16 << 10

// ActionDecisionRecorded is the activity log's entry for a decision.
const ActionDecisionRecorded = "decision.recorded"

// Decision errors (DESIGN §5.2), in the order they are checked.
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

// decisionRequest is the body of record decision, each member kept raw so
// that each check gives its own message.
type decisionRequest struct {
	Type          json.RawMessage `json:"type"`
	Timestamp     json.RawMessage `json:"timestamp"`
	ApplicationID json.RawMessage `json:"application_id"`
	Data          json.RawMessage `json:"data"`
}

// parseDecision checks a decision body in the order of DESIGN §5.2.
func parseDecision(body []byte, appID string, now time.Time) (DecisionType, time.Time, json.RawMessage, error) {
	var req decisionRequest
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 {
		if trimmed[0] != '{' {
			return "", time.Time{}, nil, ErrInvalidJSON
		}
		// Member names exactly, each key once: ErrInvalidJSON, or the
		// duplicate key named (every member is raw, so no type errors).
		if err := DecodeJSON(body, &req); err != nil {
			return "", time.Time{}, nil, err
		}
	}
	var typ string
	if json.Unmarshal(req.Type, &typ) != nil {
		return "", time.Time{}, nil, ErrInvalidDecisionType
	}
	t := DecisionType(typ)
	if t != DecisionApproved && t != DecisionRejected && t != DecisionReferred {
		return "", time.Time{}, nil, ErrInvalidDecisionType
	}
	if present(req.ApplicationID) {
		var id string
		if json.Unmarshal(req.ApplicationID, &id) != nil || id != appID {
			return "", time.Time{}, nil, ErrDecisionAppMismatch
		}
	}
	at := now
	if present(req.Timestamp) {
		var raw string
		if json.Unmarshal(req.Timestamp, &raw) != nil {
			return "", time.Time{}, nil, ErrInvalidTimestamp
		}
		parsed, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return "", time.Time{}, nil, ErrInvalidTimestamp
		}
		at = parsed.UTC()
		// An offset can carry the time past the years RFC 3339 (and the
		// stored record's encoding) can write: "9999-12-31T23:59:59-01:00".
		if at.Year() < 0 || at.Year() > 9999 {
			return "", time.Time{}, nil, ErrInvalidTimestamp
		}
	}
	var data json.RawMessage
	if present(req.Data) {
		if req.Data[0] != '{' || len(req.Data) > maxDecisionData {
			return "", time.Time{}, nil, ErrDecisionData
		}
		data = bytes.Clone(req.Data)
	}
	return t, at, data, nil
}

// present reports whether a raw member was sent with a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// RecordDecision records a decision on an application of k's organization
// (spec 4.8). The same type as the latest decision changes nothing and
// answers AlreadyRecorded; otherwise the application must be submitted or
// in review, and moves to review (referred) or to its terminal status,
// with completed_at.
func (s *Service) RecordDecision(ctx context.Context, k *APIKey, appID string, body []byte) (*DecisionRecord, error) {
	if err := Authorize(k, ScopeApplicationsWrite); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	t, at, data, err := parseDecision(body, appID, now)
	if err != nil {
		return nil, err
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
	app, err := s.updateOwnApplication(ctx, k, appID, func(a *Application) ([]Activity, error) {
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
