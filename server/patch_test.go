package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/storetest"
)

func TestPatchErrors(t *testing.T) {
	e := newEnv(t, envOptions{maxJSON: 2048})
	id := e.create(t, "acme", "")
	submitted := e.create(t, "acme", "")
	for _, st := range []struct {
		id     string
		status onboarding.Status
	}{{submitted, onboarding.StatusSubmitted}} {
		if _, err := e.store.UpdateApplication(context.Background(), st.id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = st.status
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	bodyErr := `Invalid request body. Only "fields" can be updated via this endpoint.`
	tests := []struct {
		name   string
		id     string
		body   string
		status int
		want   map[string]any
	}{
		{"invalid JSON", id, `{"fields":`, 400, errBody("Invalid JSON body")},
		{"empty body", id, ``, 400, errBody("Invalid JSON body")},
		{"not an object", id, `["fields"]`, 400, map[string]any{"error": bodyErr, "details": map[string]any{"body": "must be a JSON object"}}},
		{"fields missing", id, `{}`, 400, map[string]any{"error": bodyErr, "details": map[string]any{"fields": "is required: an object of field ids to values"}}},
		{"fields empty", id, `{"fields":{}}`, 400, map[string]any{"error": bodyErr, "details": map[string]any{"fields": "must contain at least one field id"}}},
		{"fields not an object", id, `{"fields":["industry"]}`, 400, map[string]any{"error": bodyErr, "details": map[string]any{"fields": "must be an object of field ids to values"}}},
		{"other top-level keys", id, `{"fields":{"industry":"software"},"people":[],"ownership":[]}`, 400, map[string]any{"error": bodyErr, "details": map[string]any{
			"people":    `only "fields" can be updated; people, ownership and documents are managed by the applicant`,
			"ownership": `only "fields" can be updated; people, ownership and documents are managed by the applicant`,
		}}},
		{"unknown and non-writable ids", id, `{"fields":{"nope":1,"certificate_of_incorporation":"x","industry":"software","person_full_name":"Jane","confirm_terms":true}}`, 400,
			errBody("Unknown or non-writable field ids: nope, certificate_of_incorporation, person_full_name, confirm_terms")},
		{"invalid values", id, `{"fields":{"industry":"mining","website":"northwind.example","high_risk_revenue_percentage":101}}`, 400, map[string]any{
			"error": "Invalid field values — industry: must be one of software, financial_services, retail, e_commerce, professional_services, manufacturing, hospitality, healthcare, construction, transport, other; website: must start with https:// or http://, for example https://example.com; high_risk_revenue_percentage: must be a number from 0 to 100",
			"details": map[string]any{
				"industry":                     "must be one of software, financial_services, retail, e_commerce, professional_services, manufacturing, hospitality, healthcare, construction, transport, other",
				"website":                      "must start with https:// or http://, for example https://example.com",
				"high_risk_revenue_percentage": "must be a number from 0 to 100",
			},
		}},
		{"submitted", submitted, `{"fields":{"industry":"software"}}`, 400, errBody("Cannot update application in submitted status")},
		{"unknown application", uuid.NewString(), `{"fields":{"industry":"software"}}`, 404, errBody("Application not found")},
		{"too large", id, `{"fields":{"business_description":"` + string(make([]byte, 3000)) + `"}}`, 413, errBody("Request body too large")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("PATCH", "/api/external/applications/"+tt.id, "acme", tt.body), tt.status, tt.want)
		})
	}
	// Nothing above changed the application.
	app, _ := e.store.Application(context.Background(), id)
	if _, ok := app.Data.Fields["industry"]; ok {
		t.Errorf("a refused PATCH stored industry")
	}
}

// TestPatchValues checks one accepted and one refused value of every field
// type through the API; the value rules themselves are tested in onboarding.
func TestPatchValues(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	tests := []struct {
		field   string
		value   string
		stored  any    // want in GET after an accepted value
		refusal string // want in details after a refused value; "" means accepted
	}{
		{"industry", `"retail"`, "retail", ""},
		{"industry", `"Retail"`, nil, "must be one of software, financial_services, retail, e_commerce, professional_services, manufacturing, hospitality, healthcare, construction, transport, other"},
		{"countries_of_operation", `["GB","FR"]`, []any{"GB", "FR"}, ""},
		{"countries_of_operation", `"GB"`, nil, "must be an array of option values"},
		{"regulated_entity", `true`, true, ""},
		{"regulated_entity", `"yes"`, nil, "must be a boolean"},
		{"website", `"https://northwind.example"`, "https://northwind.example", ""},
		{"company_country", `"gb"`, nil, "must be a two-letter country code in capitals, such as GB or IE"},
		{"business_description", `"We sell coffee."`, "We sell coffee.", ""},
		{"incorporation_date", `"2018-04-16"`, "2018-04-16", ""},
		{"incorporation_date", `"2027-01-01"`, nil, "must not be in the future"},
		{"incorporation_date", `"2023-02-30"`, nil, "must be a real calendar date; 2023-02-30 does not exist"},
		{"phone", `"+44 20 7946 0958"`, "+442079460958", ""},
		{"phone", `"+44 (0)20 7946 0958"`, "+442079460958", ""},
		{"phone", `"020 7946 0958"`, nil, "must be a phone number in international E.164 form, for example +442079460958"},
		{"trading_address", `{"line1":"1 Quay St","city":"Dublin","country":"ie"}`, map[string]any{"line1": "1 Quay St", "city": "Dublin", "country": "IE"}, ""},
		{"trading_address", `{"line1":"1 High St","city":"Leeds","country":"GB"}`, nil, "postcode is required when country is GB"},
		{"annual_turnover", `{"amount":100.5,"currency":"EUR"}`, map[string]any{"amount": 100.5, "currency": "EUR"}, ""},
		{"annual_turnover", `{"amount":-1,"currency":"EUR"}`, nil, "amount must be a number, 0 or more"},
		{"high_risk_revenue_percentage", `12.5`, 12.5, ""},
		{"high_risk_revenue_percentage", `"12"`, nil, "must be a number from 0 to 100"},
		{"bank_account_iban", `"GB82 WEST 1234 5698 7654 32"`, "GB82WEST12345698765432", ""},
		{"bank_account_iban", `"GB82WEST12345698765433"`, nil, "is not a valid IBAN: the check digits do not match; check it for typing errors"},
		{"tax_id", `"GB123456789"`, "GB123456789", ""},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"`+tt.field+`":`+tt.value+`}}`)
			if tt.refusal != "" {
				if w.Code != http.StatusBadRequest {
					t.Fatalf("status = %d, want 400: %s", w.Code, w.Body)
				}
				res := decode(t, w)
				if diff := cmp.Diff(map[string]any{tt.field: tt.refusal}, res["details"]); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
				if want := "Invalid field values — " + tt.field + ": " + tt.refusal; res["error"] != want {
					t.Errorf("error = %q, want %q", res["error"], want)
				}
				return
			}
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d: %s", w.Code, w.Body)
			}
			fields := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["data"].(map[string]any)["fields"].(map[string]any)
			if diff := cmp.Diff(tt.stored, fields[tt.field]); diff != "" {
				t.Errorf("stored value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatch(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	w := e.do("PATCH", "/api/external/applications/"+id, "acme-write", `{"fields":{"industry":"software","website":"https://a.example","phone":"+353 1 234 5678"}}`)
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d: %s", w.Code, w.Body)
	}
	want := map[string]any{"success": true, "application_id": id, "updated_fields": []any{"industry", "website", "phone"}}
	if diff := cmp.Diff(want, decode(t, w)); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	// null and "" clear; omitted fields stay.
	w = e.do("PATCH", "/api/external/applications/"+id, "acme-write", `{"fields":{"website":null,"phone":""}}`)
	if w.Code != http.StatusOK {
		t.Fatalf("clear: status = %d: %s", w.Code, w.Body)
	}
	got := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))
	fields := got["data"].(map[string]any)["fields"].(map[string]any)
	if _, ok := fields["website"]; ok {
		t.Errorf("website not cleared by null")
	}
	if _, ok := fields["phone"]; ok {
		t.Errorf("phone not cleared by \"\"")
	}
	if fields["industry"] != "software" || fields["company_name"] != "NORTHWIND TRADING LIMITED" {
		t.Errorf("untouched fields changed: %v", fields)
	}
	// PATCH never changes status: a pre-filled application stays out of in_progress.
	if got["status"] != "sent" {
		t.Errorf("status = %v, want sent", got["status"])
	}
	// Each update is in the activity log, attributed to the key.
	log, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		t.Fatal(err)
	}
	var updates []onboarding.Activity
	for _, a := range log {
		if a.Action == onboarding.ActionFieldsUpdated {
			updates = append(updates, a)
		}
	}
	if len(updates) != 2 {
		t.Fatalf("fields.updated entries = %d, want 2", len(updates))
	}
	k, err := e.svc.Authenticate(context.Background(), e.keys["acme-write"])
	if err != nil {
		t.Fatal(err)
	}
	wantActor := onboarding.Actor{Type: onboarding.ActorAPIKey, ID: k.ClientID, Name: "acme write"}
	if diff := cmp.Diff(wantActor, updates[0].Actor); diff != "" {
		t.Errorf("actor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"website", "phone"}, updates[1].Fields); diff != "" {
		t.Errorf("logged fields (-want +got):\n%s", diff)
	}
	// A repeated id is refused (badinput_test.go has the other duplicate
	// keys) and changes nothing.
	w = e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"retail","website":"https://b.example","industry":"healthcare"}}`)
	wantError(t, w, http.StatusBadRequest, errBody(`Invalid JSON body: duplicate key "fields.industry"`))
	fields = decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["data"].(map[string]any)["fields"].(map[string]any)
	if fields["industry"] != "software" {
		t.Errorf("industry = %v, want software unchanged", fields["industry"])
	}
}

func TestPatchAllowedStatuses(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, st := range onboarding.Statuses() {
		id := e.create(t, "acme", "")
		if _, err := e.store.UpdateApplication(context.Background(), id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = st
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software"}}`)
		if st.Writable() {
			if w.Code != http.StatusOK {
				t.Errorf("%s: status = %d, want 200", st, w.Code)
			}
			continue
		}
		wantError(t, w, http.StatusBadRequest, errBody("Cannot update application in "+string(st)+" status"))
	}
}
