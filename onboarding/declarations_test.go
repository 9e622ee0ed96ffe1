package onboarding_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestDeclarationsAsked(t *testing.T) {
	for _, tt := range []struct {
		name    string
		noTerms bool
		want    []string
	}{
		{name: "an organization with terms", want: []string{"confirm_accuracy", "confirm_terms"}},
		{name: "an organization without terms", noTerms: true, want: []string{"confirm_accuracy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t, formOptions{noTerms: tt.noTerms})
			id := e.create()
			var got []string
			for _, f := range e.primary(id).Declarations() {
				got = append(got, f.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("declarations (-want +got):\n%s", diff)
			}
			// Without terms, an application without confirm_terms lacks
			// nothing.
			e.seed(id, func(a *onboarding.Application) {
				complete(a)
				delete(a.Data.Fields, "confirm_terms")
			})
			missing := e.primary(id).Missing()
			if tt.noTerms != (len(missing) == 0) {
				t.Errorf("Missing = %v", missing)
			}
		})
	}
}

func TestAcceptAndSubmit(t *testing.T) {
	both := map[string]bool{"confirm_accuracy": true, "confirm_terms": true}
	tests := []struct {
		name      string
		noTerms   bool
		collab    bool
		before    func(a *onboarding.Application)
		accepted  map[string]bool
		wantErr   error
		wantItems []string
		// wantFields are the declarations stored after a success.
		wantFields map[string]json.RawMessage
	}{
		{name: "records the declarations and submits", before: withoutDeclarations, accepted: both,
			wantFields: map[string]json.RawMessage{"confirm_accuracy": raw(true), "confirm_terms": raw(true)}},
		{name: "without terms, only accuracy is asked", noTerms: true, before: withoutDeclarations,
			accepted:   map[string]bool{"confirm_accuracy": true},
			wantFields: map[string]json.RawMessage{"confirm_accuracy": raw(true)}},
		{name: "without terms, a posted terms box is not stored", noTerms: true, before: withoutDeclarations, accepted: both,
			wantFields: map[string]json.RawMessage{"confirm_accuracy": raw(true)}},
		{name: "an unticked declaration", before: withoutDeclarations, accepted: map[string]bool{"confirm_terms": true},
			wantErr: onboarding.ErrInvalidFieldValues([]string{"confirm_accuracy"}, map[string]string{"confirm_accuracy": onboarding.ErrDeclarationNotMade})},
		{name: "ticked, but something else is missing",
			before: func(a *onboarding.Application) {
				withoutDeclarations(a)
				delete(a.Data.Fields, "industry")
			},
			accepted:  both,
			wantErr:   &onboarding.Error{Kind: onboarding.KindInvalid, Message: "The application cannot be submitted yet: 1 thing is missing."},
			wantItems: []string{"Industry is missing"}},
		{name: "only the primary contact sends", collab: true, before: withoutDeclarations, accepted: both, wantErr: onboarding.ErrPrimaryOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t, formOptions{noTerms: tt.noTerms})
			id := e.create()
			e.addCollaborator(id, "colleague@example.com")
			e.seed(id, tt.before)
			v := e.primary(id)
			if tt.collab {
				v = e.visitor(id, "colleague@example.com")
			}
			before := len(e.activity(id))
			err := e.svc.AcceptAndSubmit(context.Background(), v, tt.accepted)
			checkErr(t, err, tt.wantErr)
			app := e.app(id)
			if err != nil {
				if diff := cmp.Diff(tt.wantItems, onboarding.AsError(err).Items, cmpEmpty); diff != "" {
					t.Errorf("missing items (-want +got):\n%s", diff)
				}
				e.checkActivity(id, before, nil)
				if app.Status != onboarding.StatusInProgress || app.Data.Fields["confirm_accuracy"] != nil || app.Data.Fields["confirm_terms"] != nil {
					t.Errorf("a refused send changed the application: %s %v", app.Status, app.Data.Fields)
				}
				return
			}
			if app.Status != onboarding.StatusSubmitted || app.SubmittedAt == nil {
				t.Errorf("status %s, submitted_at %v", app.Status, app.SubmittedAt)
			}
			got := map[string]json.RawMessage{}
			for _, k := range []string{"confirm_accuracy", "confirm_terms"} {
				if v, ok := app.Data.Fields[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.wantFields, got); diff != "" {
				t.Errorf("declarations stored (-want +got):\n%s", diff)
			}
			var declared []string
			for k := range tt.wantFields {
				declared = append(declared, k)
			}
			log := e.activity(id)[before:]
			if len(log) != 2 || log[0].Action != onboarding.ActionFormSaved || log[0].Detail != onboarding.StageConfirmation ||
				len(log[0].Fields) != len(declared) || log[1].Action != onboarding.ActionSubmitted {
				t.Errorf("activity after the send: %+v", log)
			}
		})
	}
}

func TestReference(t *testing.T) {
	for id, want := range map[string]string{
		"3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13": "3F1C-2A4E",
		"0123":                                 "0123",
	} {
		if got := onboarding.Reference(id); got != want {
			t.Errorf("Reference(%q) = %q, want %q", id, got, want)
		}
	}
}

// withoutDeclarations completes an application but for its declarations.
func withoutDeclarations(a *onboarding.Application) {
	complete(a)
	delete(a.Data.Fields, "confirm_accuracy")
	delete(a.Data.Fields, "confirm_terms")
}
