package onboarding_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"onboard/onboarding"
)

// TestSaveStage checks the save of one page of the form: what is stored,
// what is refused and what the activity log says.
func TestSaveStage(t *testing.T) {
	tests := []struct {
		name        string
		collab      bool                            // save as a collaborator rather than the primary
		before      func(a *onboarding.Application) // the stored application before the page is read
		meanwhile   func(a *onboarding.Application) // a change made after the page was read
		stage       string
		values      map[string]json.RawMessage
		shown       map[string]string
		wantErr     error
		wantFields  map[string]json.RawMessage // the stored fields checked after the save
		wantSaved   []string                   // the activity's fields; nil: no activity
		wantNoEntry bool
	}{
		{
			name:  "saves the page and clears what was not posted",
			stage: "business",
			before: func(a *onboarding.Application) {
				a.Data.Fields["tax_id"] = raw("FR123")
			},
			values: map[string]json.RawMessage{
				"business_description":         raw("We sell software"),
				"high_risk_revenue_percentage": raw(5),
				"regulated_entity":             raw(false),
			},
			wantFields: map[string]json.RawMessage{
				"business_description":         raw("We sell software"),
				"high_risk_revenue_percentage": raw(5),
				"regulated_entity":             raw(false),
				"tax_id":                       nil,
			},
			// the fields it changed, tax_id cleared
			wantSaved: []string{"business_description", "high_risk_revenue_percentage", "regulated_entity", "tax_id"},
		},
		{
			name:  "refuses every invalid value in form order and saves nothing",
			stage: "business",
			values: map[string]json.RawMessage{
				"regulated_entity":             raw("yes"),
				"business_description":         raw(strings.Repeat("x", 2001)),
				"high_risk_revenue_percentage": raw(150),
			},
			wantErr: fieldErr("Invalid field values — business_description: must be at most 2000 characters long (it has 2001); high_risk_revenue_percentage: must be a number from 0 to 100; regulated_entity: must be a boolean",
				map[string]string{
					"business_description":         "must be at most 2000 characters long (it has 2001)",
					"high_risk_revenue_percentage": "must be a number from 0 to 100",
					"regulated_entity":             "must be a boolean",
				}),
			wantFields:  map[string]json.RawMessage{"business_description": nil, "regulated_entity": nil},
			wantNoEntry: true,
		},
		{
			name:  "keeps a value changed meanwhile that the page left as shown",
			stage: "business",
			before: func(a *onboarding.Application) {
				a.Data.Fields["business_description"] = raw("Old words")
				a.Data.Fields["tax_id"] = raw("FR1")
				a.Data.Fields["annual_turnover"] = raw(map[string]any{"amount": 10, "currency": "EUR"})
			},
			meanwhile: func(a *onboarding.Application) {
				a.Data.Fields["business_description"] = raw("The partner's words")
				a.Data.Fields["tax_id"] = raw("FR2")
			},
			values: map[string]json.RawMessage{
				"business_description": raw("Old words"), // left as shown
				"tax_id":               raw("FR3"),       // changed by the applicant: wins
			},
			shown: map[string]string{
				"business_description": onboarding.ValueFingerprint(raw("Old words")),
				"tax_id":               onboarding.ValueFingerprint(raw("FR1")),
				"regulated_entity":     "", // an unticked box that was shown unticked: stays unset
			},
			wantFields: map[string]json.RawMessage{
				"business_description": raw("The partner's words"),
				"tax_id":               raw("FR3"),
				// not on the page: left alone
				"annual_turnover": raw(map[string]any{"amount": 10, "currency": "EUR"}),
			},
			wantSaved: []string{"tax_id"}, // regulated_entity stays unset: not a change
		},
		{
			name:  "an unchanged page saves the stored value as it is, changing no field",
			stage: "business",
			before: func(a *onboarding.Application) {
				a.Data.Fields["tax_id"] = raw("FR1")
			},
			values:     map[string]json.RawMessage{"tax_id": raw("FR1")},
			shown:      map[string]string{"tax_id": onboarding.ValueFingerprint(raw("FR1"))},
			wantFields: map[string]json.RawMessage{"tax_id": raw("FR1")},
			wantSaved:  nil,
		},
		{
			name:  "the registry's company name and number stay as verified",
			stage: "company",
			before: func(a *onboarding.Application) {
				a.RegistryNumber = "123456789"
			},
			values: map[string]json.RawMessage{
				"company_name":       raw("Someone Else SAS"),
				"company_number":     raw("999"),
				"company_country":    raw("FR"),
				"registered_address": raw(frAddress),
				"industry":           raw("software"),
			},
			wantFields: map[string]json.RawMessage{
				"company_name":       raw("Acme SAS"),
				"company_number":     raw("123456789"),
				"industry":           raw("software"),
				"registered_address": raw(frAddress),
			},
			wantSaved: []string{"registered_address", "industry"}, // company_country is FR already
		},
		{
			name:       "the primary contact makes the declarations; an unticked one is none",
			stage:      "confirmation",
			values:     map[string]json.RawMessage{"confirm_accuracy": raw(true), "confirm_terms": raw(false)},
			wantFields: map[string]json.RawMessage{"confirm_accuracy": raw(true), "confirm_terms": nil},
			wantSaved:  []string{"confirm_accuracy"}, // confirm_terms stays unset
		},
		{
			name:        "a collaborator cannot make the declarations",
			collab:      true,
			stage:       "confirmation",
			values:      map[string]json.RawMessage{"confirm_accuracy": raw(true)},
			wantErr:     onboarding.ErrPrimaryOnly,
			wantFields:  map[string]json.RawMessage{"confirm_accuracy": nil},
			wantNoEntry: true,
		},
		{
			name:       "a collaborator saves the other pages",
			collab:     true,
			stage:      "business",
			values:     map[string]json.RawMessage{"tax_id": raw("FR9")},
			shown:      map[string]string{"tax_id": ""},
			wantFields: map[string]json.RawMessage{"tax_id": raw("FR9")},
			wantSaved:  []string{"tax_id"},
		},
		{name: "an unknown page", stage: "nope", wantErr: onboarding.ErrStageNotFound, wantNoEntry: true},
		{name: "the people page is not a stage save", stage: onboarding.StagePeople, wantErr: onboarding.ErrStageNotFound, wantNoEntry: true},
		{name: "the documents page is not a stage save", stage: onboarding.StageDocuments, wantErr: onboarding.ErrStageNotFound, wantNoEntry: true},
		{
			name:        "a participant removed meanwhile is signed out",
			collab:      true,
			stage:       "business",
			values:      map[string]json.RawMessage{"tax_id": raw("FR9")},
			meanwhile:   func(a *onboarding.Application) { a.Participants = a.Participants[:1] },
			wantErr:     onboarding.ErrNotSignedIn,
			wantFields:  map[string]json.RawMessage{"tax_id": nil},
			wantNoEntry: true,
		},
		{
			name:        "an application submitted meanwhile is frozen",
			stage:       "business",
			values:      map[string]json.RawMessage{"tax_id": raw("FR9")},
			meanwhile:   func(a *onboarding.Application) { a.Status = onboarding.StatusSubmitted },
			wantErr:     onboarding.ErrApplicationFrozen,
			wantFields:  map[string]json.RawMessage{"tax_id": nil},
			wantNoEntry: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.addCollaborator(id, "colleague@example.com")
			if tt.before != nil {
				e.seed(id, tt.before)
			}
			v := e.primary(id)
			if tt.collab {
				v = e.visitor(id, "colleague@example.com")
			}
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			before := len(e.activity(id))
			err := e.svc.SaveStage(context.Background(), v, tt.stage, tt.values, tt.shown)
			checkErr(t, err, tt.wantErr)
			stored := e.app(id).Data.Fields
			for fid, want := range tt.wantFields {
				checkJSON(t, "field "+fid, stored[fid], want)
			}
			var want []onboarding.Activity
			if !tt.wantNoEntry {
				want = []onboarding.Activity{did(v, onboarding.ActionFormSaved, tt.stage, tt.wantSaved...)}
			}
			e.checkActivity(id, before, want)
			if err == nil && string(v.App.Data.Fields["tax_id"]) != string(stored["tax_id"]) {
				t.Errorf("the visitor was not refreshed with the saved application")
			}
		})
	}
}

// TestSaveStageCompanySelection checks that, with company selection, the
// applicant cannot type the company's name and number before choosing it.
func TestSaveStageCompanySelection(t *testing.T) {
	e := newFormEnv(t)
	id := e.create()
	e.seed(id, func(a *onboarding.Application) {
		a.ConfigID = configSelect
		delete(a.Data.Fields, "company_name")
		delete(a.Data.Fields, "company_number")
	})
	v := e.primary(id)
	err := e.svc.SaveStage(context.Background(), v, "company", map[string]json.RawMessage{
		"company_name": raw("Typed SAS"), "company_number": raw("42"), "industry": raw("retail"),
	}, nil)
	checkErr(t, err, nil)
	got := e.app(id).Data.Fields
	if got["company_name"] != nil || got["company_number"] != nil || string(got["industry"]) != `"retail"` {
		t.Errorf("stored company fields = name %s, number %s, industry %s; want only the industry", got["company_name"], got["company_number"], got["industry"])
	}
}

func TestValueFingerprint(t *testing.T) {
	tests := []struct {
		a, b json.RawMessage
		same bool
	}{
		{raw(map[string]any{"a": 1, "b": 2}), json.RawMessage(`{"b":2,"a":1}`), true},
		{raw("x"), raw("y"), false},
		{nil, json.RawMessage("null"), true},
		{json.RawMessage(`1.0`), json.RawMessage(`1.00`), false},
	}
	for _, tt := range tests {
		if got := onboarding.ValueFingerprint(tt.a) == onboarding.ValueFingerprint(tt.b); got != tt.same {
			t.Errorf("ValueFingerprint(%s) == ValueFingerprint(%s) is %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
	if got := onboarding.ValueFingerprint(nil); got != "" {
		t.Errorf("ValueFingerprint(nil) = %q, want empty", got)
	}
}
