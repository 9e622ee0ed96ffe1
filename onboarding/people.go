package onboarding

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// PersonInput is the applicant's answers about one person: roles, and the
// values of the form's person-scoped fields by field id.
type PersonInput struct {
	Roles  []PersonRole
	Values map[string]json.RawMessage
	// Shown maps a field id, and "roles", to the ValueFingerprint of what
	// the page showed (see SaveStage); nil when unknown.
	Shown map[string]string
}

// RolesValue is a person's roles as the JSON value ValueFingerprint takes.
func RolesValue(roles []PersonRole) json.RawMessage {
	if len(roles) == 0 {
		return nil
	}
	b, _ := json.Marshal(roles)
	return b
}

// FieldPersonFullName is the person-scoped field of a person's full name:
// every person has one, and the register decides it for registry people.
const FieldPersonFullName = "person_full_name"

// Person-scoped fields of the built-in form that map onto Person members.
const (
	personFullName    = FieldPersonFullName
	personDateOfBirth = "person_date_of_birth"
	personNationality = "person_nationality"
	personHomeAddress = "person_home_address"
	personEmail       = "person_email"
	personPhone       = "person_phone"
)

// PersonFieldValue returns the value person p has for person-scoped field
// id, as JSON, or nil.
func PersonFieldValue(p *Person, id string) json.RawMessage {
	str := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		b, _ := json.Marshal(s)
		return b
	}
	switch id {
	case personFullName:
		return str(p.FullName)
	case personDateOfBirth:
		return str(p.DateOfBirth)
	case personNationality:
		return str(p.Nationality)
	case personEmail:
		return str(p.Email)
	case personPhone:
		return str(p.PhoneNumber)
	case personHomeAddress:
		if p.HomeAddress == nil {
			return nil
		}
		b, _ := json.Marshal(p.HomeAddress)
		return b
	}
	return p.Fields[id]
}

// setPersonField stores a normalized value (nil clears) on p.
func setPersonField(p *Person, id string, v json.RawMessage) {
	var s string
	if v != nil && v[0] == '"' {
		_ = json.Unmarshal(v, &s)
	}
	switch id {
	case personFullName:
		s = strings.Join(strings.Fields(s), " ")
		p.FullName = s
		p.FirstName, p.LastName = splitName(s)
	case personDateOfBirth:
		p.DateOfBirth = s
	case personNationality:
		p.Nationality = s
	case personEmail:
		p.Email = s
	case personPhone:
		p.PhoneNumber = s
	case personHomeAddress:
		p.HomeAddress = nil
		if v != nil {
			var a Address
			if json.Unmarshal(v, &a) == nil {
				p.HomeAddress = &a
			}
		}
	default:
		if v == nil {
			delete(p.Fields, id)
			return
		}
		if p.Fields == nil {
			p.Fields = map[string]json.RawMessage{}
		}
		p.Fields[id] = v
	}
}

// splitName splits a full name into first names and the last name.
func splitName(full string) (first, last string) {
	parts := strings.Fields(full)
	switch len(parts) {
	case 0:
		return "", ""
	case 1:
		return "", parts[0]
	}
	return strings.Join(parts[:len(parts)-1], " "), parts[len(parts)-1]
}

// Locked reports whether p's field id comes from the register and stays
// as it is: the full name of a registry person.
func (p *Person) Locked(id string) bool {
	return p.Source == SourceRegistry && id == personFullName
}

// SavePerson adds a person (personID "") or changes one, and returns the
// person's id. Registry people keep their name and roles; the applicant
// completes their other details.
func (s *Service) SavePerson(ctx context.Context, v *Visitor, personID string, in PersonInput) (string, error) {
	if err := editable(v); err != nil {
		return "", err
	}
	now := s.now().UTC()
	var existing *Person
	if personID != "" {
		if existing = v.App.Data.Person(personID); existing == nil {
			return "", ErrPersonNotFound
		}
	}
	var problems Problems
	roles := normalizeRoles(in.Roles)
	if existing == nil || existing.Source != SourceRegistry {
		if len(roles) == 0 {
			problems.Add("roles", Problem{Code: ProblemNoRole})
		}
	}
	ids, values := personValues(v.Form(), existing, in, now, &problems)
	if err := problems.FieldErr(); err != nil {
		return "", err
	}
	id := personID
	if id == "" {
		var err error
		if id, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err := s.changeForm(ctx, v, now, func(a *Application) (Activity, error) {
		p := a.Data.Person(id)
		if p == nil {
			if personID != "" {
				return Activity{}, ErrPersonNotFound
			}
			a.Data.People = append(a.Data.People, Person{ID: id, Source: SourceUserAdded})
			p = &a.Data.People[len(a.Data.People)-1]
		}
		if p.Source != SourceRegistry && !keepStored(in.Shown, "roles", RolesValue(roles), RolesValue(p.Roles)) {
			p.Roles = roles
		}
		var saved []string
		for _, fid := range ids {
			if keepStored(in.Shown, fid, values[fid], PersonFieldValue(p, fid)) {
				continue
			}
			setPersonField(p, fid, values[fid])
			saved = append(saved, fid)
		}
		return Activity{Action: ActionPersonSaved, Detail: id, Fields: saved}, nil
	})
	return id, err
}

// personValues checks the person-scoped values of in that the page had,
// except the ones the register decides for existing (nil for a new
// person), and returns their ids in form order with the normalized values;
// each failing value is added to problems.
func personValues(form *Form, existing *Person, in PersonInput, now time.Time, problems *Problems) ([]string, map[string]json.RawMessage) {
	values := map[string]json.RawMessage{}
	var ids []string
	for _, f := range form.Fields() {
		if !f.PersonScoped || f.Type == TypeDocument || existing != nil && existing.Locked(f.ID) || !onPage(in.Values, in.Shown, f.ID) {
			continue
		}
		raw, given := in.Values[f.ID]
		if !given {
			raw = json.RawMessage("null")
		}
		norm, err := f.Normalize(raw, now)
		if err != nil && existing != nil && ValueFingerprint(raw) == ValueFingerprint(PersonFieldValue(existing, f.ID)) {
			// Left as stored, though the form could not take it as new (a
			// registry's partial date of birth, YYYY-MM): kept as it is.
			continue
		}
		switch {
		case err != nil:
			problems.AddError(f.ID, err)
			continue
		case f.ID == personFullName && norm == nil:
			problems.Add(f.ID, Problem{Code: ProblemRequired, Text: "enter the person's full name"})
			continue
		case f.ID == personEmail && norm != nil:
			var e string
			_ = json.Unmarshal(norm, &e)
			if !validEmail(e) {
				problems.Add(f.ID, Problem{Code: ProblemNotEmail})
				continue
			}
		}
		ids = append(ids, f.ID)
		values[f.ID] = norm
	}
	return ids, values
}

// normalizeRoles keeps the known roles of in, once each, in display order.
func normalizeRoles(in []PersonRole) []PersonRole {
	var out []PersonRole
	for _, r := range PersonRoles() {
		if slices.Contains(in, r) {
			out = append(out, r)
		}
	}
	return out
}

// RemovePerson removes a person the applicant added, with their ownership
// rows and documents.
func (s *Service) RemovePerson(ctx context.Context, v *Visitor, personID string) error {
	return s.removeParty(ctx, v, OwnerPerson, personID, func(d *Data) *addedParty {
		i := slices.IndexFunc(d.People, func(p Person) bool { return p.ID == personID })
		if i < 0 {
			return nil
		}
		p := &d.People[i]
		return &addedParty{source: p.Source, documents: p.Documents, drop: func() { d.People = slices.Delete(d.People, i, i+1) }}
	})
}
