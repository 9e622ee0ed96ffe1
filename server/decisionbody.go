package server

import (
	"bytes"
	"encoding/json"
	"time"

	"onboard/onboarding"
	"onboard/server/web"
)

// decisionRequest is the body of record decision, each member kept raw so
// that each check gives its own message. The members the contract lets be
// null are tagged nullable:"true" (web.DecodeJSON).
type decisionRequest struct {
	Type          json.RawMessage `json:"type"`
	Timestamp     json.RawMessage `json:"timestamp" nullable:"true"`
	ApplicationID json.RawMessage `json:"application_id" nullable:"true"`
	Data          json.RawMessage `json:"data" nullable:"true"`
}

// parseDecision reads a record-decision body for the application appID,
// checking in the order of the decision errors (docs/api.md): the body,
// the type, the application id, the timestamp, the data.
func parseDecision(body []byte, appID string) (onboarding.DecisionInput, error) {
	var req decisionRequest
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 {
		if trimmed[0] != '{' {
			return onboarding.DecisionInput{}, onboarding.ErrInvalidJSON
		}
		// Member names exactly, each key once: ErrInvalidJSON, or the
		// duplicate key named (every member is raw, so no type errors).
		if err := web.DecodeJSON(body, &req); err != nil {
			return onboarding.DecisionInput{}, err
		}
	}
	var in onboarding.DecisionInput
	var typ string
	if json.Unmarshal(req.Type, &typ) != nil {
		return in, onboarding.ErrInvalidDecisionType
	}
	in.Type = onboarding.DecisionType(typ)
	if !in.Type.Valid() {
		return onboarding.DecisionInput{}, onboarding.ErrInvalidDecisionType
	}
	if present(req.ApplicationID) {
		var id string
		if json.Unmarshal(req.ApplicationID, &id) != nil || id != appID {
			return onboarding.DecisionInput{}, onboarding.ErrDecisionAppMismatch
		}
	}
	if present(req.Timestamp) {
		var raw string
		if json.Unmarshal(req.Timestamp, &raw) != nil {
			return onboarding.DecisionInput{}, onboarding.ErrInvalidTimestamp
		}
		parsed, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return onboarding.DecisionInput{}, onboarding.ErrInvalidTimestamp
		}
		at := parsed.UTC()
		// An offset can carry the time past the years RFC 3339 (and the
		// stored record's encoding) can write: "9999-12-31T23:59:59-01:00".
		if at.Year() < 0 || at.Year() > 9999 {
			return onboarding.DecisionInput{}, onboarding.ErrInvalidTimestamp
		}
		in.Timestamp = &at
	}
	if present(req.Data) {
		if req.Data[0] != '{' || len(req.Data) > onboarding.MaxDecisionData {
			return onboarding.DecisionInput{}, onboarding.ErrDecisionData
		}
		in.Data = bytes.Clone(req.Data)
	}
	return in, nil
}

// present reports whether a raw member was sent with a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}
