package onboarding

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// FieldUpdate is one entry of a PATCH body's fields object: a field id and
// the value to set (JSON null clears the field).
type FieldUpdate struct {
	ID    string
	Value json.RawMessage
}

// MaxListedIDs bounds how many ids or members an error's message or
// details list, so that a body of a hundred thousand bogus ids cannot make
// a megabyte-long answer.
const MaxListedIDs = maxListedIDs

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

// UpdateFields applies the updates of a PATCH body (docs/api.md), at least
// one, each id once, to an application of k's organization and returns the
// ids it set or cleared, in the updates' order. It never changes the status
// and emits no event; it is recorded in the activity log.
func (s *Service) UpdateFields(ctx context.Context, k *APIKey, id string, updates []FieldUpdate) ([]string, *Application, error) {
	if err := Authorize(k, ScopeApplicationsWrite); err != nil {
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
