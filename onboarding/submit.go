package onboarding

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
)

// Missing is one thing an application lacks before it can be submitted.
type Missing struct {
	Stage    string // the stage where the applicant fixes it
	FieldID  string // the field, when it is about one
	PersonID string // the person, when it is about one
	Message  string
}

// ErrIncomplete is the error for a submission that lacks something; Details
// lists each missing item's message, in form order.
func ErrIncomplete(missing []Missing) *Error {
	e := Errorf(KindInvalid, "The application cannot be submitted yet: %d %s missing.", len(missing), plural(len(missing), "thing is", "things are"))
	for _, m := range missing {
		e.Items = append(e.Items, m.Message)
	}
	return e
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// NeedsCompany reports whether the applicant still has to choose their
// company from the registry (company selection).
func (v *Visitor) NeedsCompany() bool {
	return v.Config.CompanySelection && v.App.RegistryNumber == "" && len(v.App.Data.Fields["company_number"]) == 0
}

// Missing lists what the application lacks before it can be submitted:
// every required field, at least one director, each person's details
// (Form.MissingDetails: a partial date counts as missing), every required
// document (company ones, and person ones for each person whose role
// needs them) accepted or waived, and every declaration. A rejected
// upload counts as missing. People's details are listed field by field,
// in form order, as MissingDetails decides them.
func (v *Visitor) Missing() []Missing {
	var out []Missing
	app := &v.App.Data
	if v.NeedsCompany() {
		out = append(out, Missing{Stage: "company", Message: "Choose your company from the register"})
	}
	people := app.People
	for _, st := range v.Form().Stages() {
		if st.ID == StagePeople {
			if !slices.ContainsFunc(people, func(p Person) bool { return slices.Contains(p.Roles, PersonDirector) }) {
				out = append(out, Missing{Stage: StagePeople, Message: "Add at least one director"})
			}
			for _, f := range st.Fields {
				for i := range people {
					if d, ok := missingDetail(f, &people[i]); ok {
						out = append(out, Missing{Stage: StagePeople, FieldID: f.ID, PersonID: people[i].ID, Message: d.message(PersonName(&people[i]))})
					}
				}
			}
			continue
		}
		for _, f := range st.Fields {
			switch {
			case f.Type == TypeDocument && f.PersonScoped:
				for i := range people {
					if !PersonNeedsDocument(f, &people[i]) {
						continue
					}
					if m, ok := documentMissing(f, people[i].Documents, " for "+PersonName(&people[i])); ok {
						m.Stage, m.PersonID = StageDocuments, people[i].ID
						out = append(out, m)
					}
				}
			case f.Type == TypeDocument:
				if _, ok := app.Documents[f.ID]; !ok && v.App.RegistrySupplied(f.ID) != nil {
					continue // the registry supplied it
				}
				if !f.Required {
					if d, ok := app.Documents[f.ID]; ok && d.Status == DocumentRejected {
						out = append(out, Missing{Stage: StageDocuments, FieldID: f.ID, Message: f.Label + " was not accepted: upload it again or remove it"})
					}
					continue
				}
				if m, ok := documentMissing(f, app.Documents, ""); ok {
					m.Stage = StageDocuments
					out = append(out, m)
				}
			case f.Confirmation && !v.Asked(f):
				// not asked of this organization's applicants
			case f.Required && len(app.Fields[f.ID]) == 0:
				msg := f.Label + " is missing"
				if f.Confirmation {
					msg = "Confirm: " + f.Label
				}
				out = append(out, Missing{Stage: st.ID, FieldID: f.ID, Message: msg})
			}
		}
	}
	return out
}

// PersonNeedsDocument reports whether person p must provide document field f.
func PersonNeedsDocument(f *Field, p *Person) bool {
	if len(f.RequiredFor) == 0 {
		return f.Required
	}
	for _, r := range f.RequiredFor {
		if slices.Contains(p.Roles, r) {
			return true
		}
	}
	return false
}

func documentMissing(f *Field, docs map[string]Document, whose string) (Missing, bool) {
	d, ok := docs[f.ID]
	switch {
	case !ok:
		return Missing{FieldID: f.ID, Message: f.Label + whose + " is missing"}, true
	case d.Status == DocumentRejected:
		return Missing{FieldID: f.ID, Message: f.Label + whose + " was not accepted: upload it again"}, true
	case !d.Satisfied():
		return Missing{FieldID: f.ID, Message: f.Label + whose + " is missing"}, true
	}
	return Missing{}, false
}

// PersonName names a person for the applicant.
func PersonName(p *Person) string {
	if p.FullName != "" {
		return p.FullName
	}
	return "an unnamed person"
}

// Submit submits the application: only the primary participant may, and
// only when nothing is missing. The application moves to submitted, gets
// its submitted_at and its data is frozen.
func (s *Service) Submit(ctx context.Context, v *Visitor) error {
	if err := editable(v); err != nil {
		return err
	}
	if !v.Primary() {
		return ErrPrimaryOnly
	}
	return s.submit(ctx, v, nil)
}

// submit records the declarations ticked (field ids, stored as true) and
// submits, in one transaction that checks again that the participant may
// and that nothing is missing.
func (s *Service) submit(ctx context.Context, v *Visitor, ticked []string) error {
	now := s.now().UTC()
	pid := v.Participant.ID
	app, err := s.updateApplicationFor(ctx, v.App.ID, v.idem.appOutcome(), func(a *Application) ([]Activity, error) {
		p := a.participant(pid)
		if p == nil {
			return nil, ErrNotSignedIn
		}
		if a.Status != StatusInProgress {
			return nil, ErrApplicationFrozen
		}
		var changed []string
		if len(ticked) > 0 {
			fields := make(map[string]json.RawMessage, len(a.Data.Fields)+len(ticked))
			maps.Copy(fields, a.Data.Fields)
			for _, id := range ticked {
				if string(fields[id]) != "true" {
					changed = append(changed, id)
				}
				fields[id] = json.RawMessage("true")
			}
			a.Data.Fields = fields
		}
		check := &Visitor{App: a, Participant: p, Org: v.Org, Config: v.Config}
		if missing := check.Missing(); len(missing) > 0 {
			return nil, ErrIncomplete(missing)
		}
		a.Status = StatusSubmitted
		a.SubmittedAt = &now
		a.UpdatedAt = now
		actor := v.actor(p)
		var log []Activity
		if len(changed) > 0 {
			log = append(log, Activity{At: now, Action: ActionFormSaved, Fields: changed, Detail: StageConfirmation, Actor: actor})
		}
		return append(log, Activity{At: now, Action: ActionSubmitted, Actor: actor}), nil
	})
	if err != nil {
		return s.formError("submit", err)
	}
	v.refresh(app)
	s.sendReceipts(ctx, v)
	return nil
}
