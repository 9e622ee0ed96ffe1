package onboarding

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// FieldUpdate is one entry of a PATCH body's fields object.
type FieldUpdate struct {
	ID    string
	Value json.RawMessage
}

// ParsePatch reads a PATCH body (spec 4.5): an object whose only member is
// "fields", a non-empty object of field ids to values. Entries keep the order
// of the body. A body that is not JSON, or that names a member twice at any
// depth (CheckJSON), is refused before anything else; member names match
// exactly.
func ParsePatch(body []byte) ([]FieldUpdate, error) {
	if err := CheckJSON(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, _ := dec.Token()
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, ErrPatchBodyDetails(map[string]string{"body": "must be a JSON object"})
	}
	details := map[string]string{}
	var fieldsRaw json.RawMessage
	seenFields := false
	for dec.More() {
		keyTok, _ := dec.Token()
		key := keyTok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, ErrInvalidJSON
		}
		if key == "fields" {
			fieldsRaw, seenFields = v, true
			continue
		}
		if len(details) < maxListedIDs {
			details[ClipInput(key)] = `only "fields" can be updated; people, ownership and documents are managed by the applicant`
		}
	}
	if !seenFields {
		details["fields"] = "is required: an object of field ids to values"
	}
	if len(details) > 0 {
		return nil, ErrPatchBodyDetails(details)
	}
	updates, err := parseFieldsObject(fieldsRaw)
	if err != nil {
		return nil, err
	}
	if len(updates) == 0 {
		return nil, ErrPatchBodyDetails(map[string]string{"fields": "must contain at least one field id"})
	}
	return updates, nil
}

func parseFieldsObject(raw json.RawMessage) ([]FieldUpdate, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, _ := dec.Token()
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, ErrPatchBodyDetails(map[string]string{"fields": "must be an object of field ids to values"})
	}
	var out []FieldUpdate
	for dec.More() { // CheckJSON has refused repeated ids
		keyTok, _ := dec.Token()
		id := keyTok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, ErrInvalidJSON
		}
		out = append(out, FieldUpdate{ID: id, Value: v})
	}
	return out, nil
}

// normalizeUpdates checks each update against form: every id a field the
// partner may set (else ErrUnknownFields naming them all), every value
// valid for its field (else the values' problems, all of them). It returns
// the normalized values, nil for a field to clear.
func normalizeUpdates(form *Form, updates []FieldUpdate, now time.Time) ([]json.RawMessage, error) {
	values := make([]json.RawMessage, len(updates))
	var unknown []string
	var problems Problems
	for i, u := range updates {
		f, ok := form.Field(u.ID)
		if !ok || !f.Patchable() {
			unknown = append(unknown, u.ID)
			continue
		}
		v, err := f.Normalize(u.Value, now)
		if err != nil {
			problems.AddError(u.ID, err)
			continue
		}
		values[i] = v
	}
	if len(unknown) > 0 {
		return nil, ErrUnknownFields(unknown)
	}
	if err := problems.FieldErr(); err != nil {
		return nil, err
	}
	return values, nil
}

// UpdateFields applies a PATCH body (spec 4.5) to an application of k's
// organization and returns the ids it set or cleared, in body order. It never
// changes the status and emits no event; it is recorded in the activity log.
func (s *Service) UpdateFields(ctx context.Context, k *APIKey, id string, body []byte) ([]string, *Application, error) {
	if err := Authorize(k, ScopeApplicationsWrite); err != nil {
		return nil, nil, err
	}
	updates, err := ParsePatch(body)
	if err != nil {
		return nil, nil, err
	}
	// The application is read once, in the update's transaction: its
	// organization, status and form are checked there, in that order,
	// before the values (a change that fails writes nothing).
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return nil, nil, ErrApplicationNotFound
	}
	now := s.now().UTC()
	ids := make([]string, len(updates))
	for i, u := range updates {
		ids[i] = u.ID
	}
	updated, err := s.updateOwnApplication(ctx, k, id, func(a *Application) ([]Activity, error) {
		if !a.Status.Writable() {
			return nil, ErrCannotUpdate(a.Status)
		}
		form, err := s.formOf(a)
		if err != nil {
			return nil, err
		}
		values, err := normalizeUpdates(form, updates, now)
		if err != nil {
			return nil, err
		}
		if a.Data.Fields == nil {
			a.Data.Fields = make(map[string]json.RawMessage, len(ids))
		}
		for i, fid := range ids {
			if values[i] == nil {
				delete(a.Data.Fields, fid)
			} else {
				a.Data.Fields[fid] = values[i]
			}
		}
		a.UpdatedAt = now
		return []Activity{{At: now, Action: ActionFieldsUpdated, Actor: keyActor(k), Fields: ids}}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ids, updated, nil
}
