package onboarding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sandbox test helpers (docs/sandbox.md): the partner's integration tests
// drive an application through its life without a browser. The helper acts
// as the application's primary participant through the form's own code
// (sign-in, stage saves, people, uploads, submission), so it obeys exactly
// the rules an applicant does. The server offers it in sandbox only.
//
// The activity log records the calling API key as the actor of every step,
// after a test_helper.submit entry: the applicant did none of it.

// ActionTestHelperSubmit is the activity log's entry for a call of the
// submit test helper; the steps it takes follow it, with the same actor.
const ActionTestHelperSubmit = "test_helper.submit"

// ErrCannotSubmit is the 400 for submitting, through the test helper, an
// application that is no longer open.
func ErrCannotSubmit(st Status) *Error {
	return Errorf(KindInvalid, "Cannot submit application in %s status", st)
}

// ErrSampleRejected is the 400 for a document field whose validation
// refuses every sample file (a strict accept list of HEIC only, say).
func ErrSampleRejected(f *Field, reason string) *Error {
	return Errorf(KindInvalid, "The sample document for %s was not accepted: %s", f.Label, reason)
}

// ErrSamplesIncomplete is the 400 for an application that sample values
// could not complete (a required text field whose pattern no sample
// matches, say); it lists what is still missing.
func ErrSamplesIncomplete(missing []Missing) *Error {
	items := make([]string, len(missing))
	for i, m := range missing {
		items[i] = m.Message
	}
	e := Errorf(KindInvalid, "The test helper could not complete the application: %s", strings.Join(items, "; "))
	e.Items = items
	return e
}

// SubmitForTest submits an application of k's organization as its
// primary participant would: it opens the form (application.opened, when
// not yet opened), chooses the sandbox company when the configuration has
// the applicant choose one, adds a sample director when there is none,
// fills every missing required field with a sample value, attaches a
// sample file to every missing required document (company and per
// person), ticks the declarations and submits (application.submitted). It
// answers the submitted application. idem, when not nil, is the request's
// Idempotency-Key: its outcome is committed with the submission, so that
// a retry after a crash before it does the rest of the work and one after
// it does nothing again.
func (s *Service) SubmitForTest(ctx context.Context, k *APIKey, id string, idem *Idempotency) (*Application, error) {
	if err := Authorize(k, ScopeApplicationsWrite); err != nil {
		return nil, err
	}
	if _, err := s.application(ctx, k, id); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	app, err := s.updateOwnApplication(ctx, k, id, func(a *Application) ([]Activity, error) {
		if !a.Status.Writable() {
			return nil, ErrCannotSubmit(a.Status)
		}
		return []Activity{{At: now, Action: ActionTestHelperSubmit, Actor: keyActor(k)}}, nil
	})
	if err != nil {
		return nil, err
	}
	org, cfg, p := s.orgs[app.OrgID], s.configs[app.ConfigID], app.Primary()
	if org == nil || cfg == nil || p == nil {
		return nil, fmt.Errorf("application %s: unknown organization or configuration, or no primary participant", app.ID)
	}
	actor := keyActor(k)
	v := &Visitor{App: app, Participant: p, Org: org, Config: cfg, acting: &actor, idem: idem}
	err = s.completeAsApplicant(ctx, v)
	if errors.Is(err, ErrApplicationFrozen) {
		// Submitted (by the applicant, or another call) meanwhile.
		if cur, lerr := s.application(ctx, k, id); lerr == nil {
			return nil, ErrCannotSubmit(cur.Status)
		}
	}
	if err != nil {
		return nil, err
	}
	return v.App, nil
}

// completeAsApplicant takes the form's steps for v, in the order an
// applicant would, each through the form's own code, and submits.
func (s *Service) completeAsApplicant(ctx context.Context, v *Visitor) error {
	if err := s.signIn(ctx, v, s.now().UTC(), ""); err != nil {
		return err
	}
	if v.NeedsCompany() {
		number, name := sampleCompany(v.Form(), v.App.Country, s.registry.Supports(v.App.Country, FeatureVerify), s.now())
		if err := s.SelectCompany(ctx, v, number, name); err != nil {
			return err
		}
	}
	if err := s.addSampleDirector(ctx, v); err != nil {
		return err
	}
	if err := s.fillSampleValues(ctx, v); err != nil {
		return err
	}
	if err := s.attachSampleDocuments(ctx, v); err != nil {
		return err
	}
	if missing := v.Missing(); len(missing) > 0 {
		return ErrSamplesIncomplete(missing)
	}
	return s.Submit(ctx, v)
}

// addSampleDirector adds a director with a name and every required person
// field when Missing asks for one.
func (s *Service) addSampleDirector(ctx context.Context, v *Visitor) error {
	wanted := false
	for _, m := range v.Missing() {
		if m.Stage == StagePeople && m.FieldID == "" && m.PersonID == "" {
			wanted = true
		}
	}
	if !wanted {
		return nil
	}
	now := s.now().UTC()
	values := map[string]json.RawMessage{}
	for i := range v.Form().Fields() {
		f := &v.Form().Fields()[i]
		if !f.PersonScoped || f.Type == TypeDocument || !f.Required && f.ID != FieldPersonFullName {
			continue
		}
		if val := sampleValue(f, v.App.Country, now); val != nil {
			values[f.ID] = val
		}
	}
	_, err := s.SavePerson(ctx, v, "", PersonInput{Roles: []PersonRole{PersonDirector}, Values: values, Shown: map[string]string{}})
	return err
}

// fillSampleValues saves a sample value for every missing required field,
// stage by stage and person by person, and ticks every declaration.
// Only the fields it sets are posted (Shown is empty, not nil), so every
// other answer stays as it is.
func (s *Service) fillSampleValues(ctx context.Context, v *Visitor) error {
	now := s.now().UTC()
	form := v.Form()
	stages := map[string]map[string]json.RawMessage{}
	people := map[string]map[string]json.RawMessage{}
	var order []string // person ids, in the order Missing names them
	for _, m := range v.Missing() {
		f, ok := form.Field(m.FieldID)
		if !ok || f.Type == TypeDocument {
			continue
		}
		val := sampleValue(f, v.App.Country, now)
		if val == nil {
			continue // still missing: reported before submission
		}
		if m.PersonID != "" {
			if people[m.PersonID] == nil {
				people[m.PersonID] = map[string]json.RawMessage{}
				order = append(order, m.PersonID)
			}
			people[m.PersonID][f.ID] = val
			continue
		}
		if stages[m.Stage] == nil {
			stages[m.Stage] = map[string]json.RawMessage{}
		}
		stages[m.Stage][f.ID] = val
	}
	for _, st := range form.Stages() {
		for _, f := range st.Fields {
			if f.Confirmation && v.Asked(f) && !bytes.Equal(v.App.Data.Fields[f.ID], []byte("true")) {
				if stages[st.ID] == nil {
					stages[st.ID] = map[string]json.RawMessage{}
				}
				stages[st.ID][f.ID] = json.RawMessage("true")
			}
		}
	}
	for _, st := range form.Stages() {
		if values := stages[st.ID]; len(values) > 0 {
			if err := s.SaveStage(ctx, v, st.ID, values, map[string]string{}); err != nil {
				return err
			}
		}
	}
	for _, id := range order {
		p := v.App.Data.Person(id)
		if p == nil {
			return ErrPersonNotFound
		}
		roles := p.Roles
		if len(roles) == 0 {
			roles = []PersonRole{PersonDirector}
		}
		if _, err := s.SavePerson(ctx, v, id, PersonInput{Roles: roles, Values: people[id], Shown: map[string]string{}}); err != nil {
			return err
		}
	}
	return nil
}

// attachSampleDocuments uploads a sample file for every document Missing
// lists, company-scoped and per person, through the form's upload; a
// sample the field's validation rejects is an error.
func (s *Service) attachSampleDocuments(ctx context.Context, v *Visitor) error {
	for _, m := range v.Missing() {
		f, ok := v.Form().Field(m.FieldID)
		if !ok || f.Type != TypeDocument {
			continue
		}
		file, err := sampleDocument(f)
		if err != nil {
			return err
		}
		doc, err := s.UploadDocument(ctx, v, Upload{
			FieldID: f.ID, PersonID: m.PersonID, FileName: file.Name, Type: file.Type, Body: bytes.NewReader(file.Body),
		})
		if err != nil {
			return err
		}
		if doc.Status == DocumentRejected {
			return ErrSampleRejected(f, doc.RejectReason)
		}
	}
	return nil
}
