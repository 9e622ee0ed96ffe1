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
// valid for its field (else the values' problems, all of them). A
// company_number also passes number (companyNumberRule), which may change
// it. It returns the normalized values, nil for a field to clear.
func normalizeUpdates(form *Form, updates []FieldUpdate, now time.Time, number func(string) (string, error)) ([]json.RawMessage, error) {
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
		if err == nil && u.ID == companyNumberField && v != nil && number != nil {
			v, err = normalizeNumber(v, number)
		}
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
		values, err := normalizeUpdates(form, updates, now, s.companyNumberRule(a.Country))
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

// companyNumberField is the field that holds the company's registry number.
const companyNumberField = "company_number"

// companyNumberRule is the rule create applies to a company number of
// country, for PATCH to apply it too: where the country's registry
// verifies companies, a number must be well formed for it, and is kept in
// the form the registry files it under ("sc 311560" becomes "SC311560").
// It is nil where numbers are taken as given. A PATCH does not look the
// company up again: the number's format is checked, not the company.
func (s *Service) companyNumberRule(country string) func(string) (string, error) {
	if !s.registry.Supports(country, FeatureVerify) {
		return nil
	}
	return func(number string) (string, error) { return s.registry.NormalizeNumber(country, number) }
}

// normalizeNumber applies number to v, a normalized text value (a JSON
// string). The registry's refusal (ErrCompanyNumberMalformed) becomes the
// field's problem in the same words as create's error.
func normalizeNumber(v json.RawMessage, number func(string) (string, error)) (json.RawMessage, error) {
	var text string
	if err := json.Unmarshal(v, &text); err != nil {
		return nil, err
	}
	n, err := number(text)
	if err != nil {
		if e := AsError(err); e != nil && e.Kind == KindInvalid {
			return nil, Problem{Code: ProblemOther, Text: e.Message}
		}
		return nil, err
	}
	return json.Marshal(n)
}
