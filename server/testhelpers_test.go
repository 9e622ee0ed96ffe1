package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/config"
	"onboard/onboarding"
	"onboard/storage/storetest"
)

// loadFormFile reads a form file (testdata/forms/*.toml) with the
// configuration's own decoder.
func loadFormFile(t testing.TB, path string) *onboarding.Form {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	form, err := config.DecodeForm(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// customForm is a form of every field type and rule, all required, with
// strict documents: the samples must pass whatever a form file asks.
func customForm(t testing.TB) *onboarding.Form {
	t.Helper()
	opts := []onboarding.Option{{Value: "b2b", Label: "B2B"}, {Value: "b2c", Label: "B2C"}}
	req := func(f onboarding.Field) onboarding.Field { f.Required = true; return f }
	form, err := onboarding.NewForm("everything", []onboarding.Field{
		req(onboarding.Field{ID: "company_name", Label: "Name", Type: onboarding.TypeText, Category: "company"}),
		req(onboarding.Field{ID: "trading_name", Label: "Trading name", Type: onboarding.TypeText, Category: "company", MaxLength: 4}),
		req(onboarding.Field{ID: "vat_number", Label: "VAT number", Type: onboarding.TypeText, Category: "company", Pattern: `^(GB|IE)[0-9]{9}(?:[A-Z]{2})?$`}),
		req(onboarding.Field{ID: "lei", Label: "LEI", Type: onboarding.TypeText, Category: "company", Pattern: `^[0-9A-Z]{18}\d{2}$`}),
		req(onboarding.Field{ID: "short_code", Label: "Code", Type: onboarding.TypeText, Category: "company", Pattern: `^[a-z]{3}-\d+$`, MaxLength: 5}),
		req(onboarding.Field{ID: "payout_iban", Label: "IBAN", Type: onboarding.TypeText, Category: "company", Rule: "iban"}),
		req(onboarding.Field{ID: "market", Label: "Market", Type: onboarding.TypeSelect, Category: "business", Options: opts}),
		req(onboarding.Field{ID: "markets", Label: "Markets", Type: onboarding.TypeMultiSelect, Category: "business", Options: opts}),
		req(onboarding.Field{ID: "founded", Label: "Founded", Type: onboarding.TypeDate, Category: "business", Rule: "not_future"}),
		req(onboarding.Field{ID: "hotline", Label: "Hotline", Type: onboarding.TypePhone, Category: "business"}),
		req(onboarding.Field{ID: "office", Label: "Office", Type: onboarding.TypeAddress, Category: "business"}),
		req(onboarding.Field{ID: "revenue", Label: "Revenue", Type: onboarding.TypeCurrency, Category: "business"}),
		req(onboarding.Field{ID: "online_share", Label: "Online share", Type: onboarding.TypePercentage, Category: "business"}),
		req(onboarding.Field{ID: "listed", Label: "Listed", Type: onboarding.TypeBoolean, Category: "business"}),
		{ID: "person_full_name", Label: "Full name", Type: onboarding.TypeText, Category: "people", PersonScoped: true},
		req(onboarding.Field{ID: "person_date_of_birth", Label: "Born", Type: onboarding.TypeDate, Category: "people", PersonScoped: true, Rule: "not_future"}),
		req(onboarding.Field{ID: "person_nationality", Label: "Nationality", Type: onboarding.TypeText, Category: "people", PersonScoped: true, Pattern: `^[A-Z]{2}$`}),
		req(onboarding.Field{ID: "person_home_address", Label: "Home", Type: onboarding.TypeAddress, Category: "people", PersonScoped: true}),
		req(onboarding.Field{ID: "person_email", Label: "Email", Type: onboarding.TypeText, Category: "people", PersonScoped: true}),
		req(onboarding.Field{ID: "person_phone", Label: "Phone", Type: onboarding.TypePhone, Category: "people", PersonScoped: true}),
		req(onboarding.Field{ID: "person_tax_number", Label: "Tax number", Type: onboarding.TypeText, Category: "people", PersonScoped: true, Pattern: `^\d{3}-\d{2}-\d{4}$`}),
		req(onboarding.Field{ID: "licence", Label: "Licence", Type: onboarding.TypeDocument, Category: "documents",
			Validation: "strict", Accept: []string{"application/pdf"}, MaxSize: 4096, MaxPages: 1}),
		req(onboarding.Field{ID: "logo", Label: "Logo", Type: onboarding.TypeDocument, Category: "documents",
			Validation: "strict", Accept: []string{"image/png"}}),
		req(onboarding.Field{ID: "photo", Label: "Photo", Type: onboarding.TypeDocument, Category: "documents",
			Validation: "strict", Accept: []string{"image/jpeg", "image/heic"}}),
		req(onboarding.Field{ID: "anything", Label: "Anything", Type: onboarding.TypeDocument, Category: "documents", Validation: "none"}),
		req(onboarding.Field{ID: "passport", Label: "Passport", Type: onboarding.TypeDocument, Category: "documents", PersonScoped: true,
			RequiredFor: []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonShareholder}, Validation: "strict", MaxPages: 2}),
		req(onboarding.Field{ID: "agree", Label: "I agree", Type: onboarding.TypeBoolean, Category: "confirmation", Confirmation: true}),
		{ID: "agree_marketing", Label: "I also agree", Type: onboarding.TypeBoolean, Category: "confirmation", Confirmation: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// helperOrganizations are the test organizations plus acme configurations
// on the kyb-lite form file, on a form of every field type, and on forms
// no sample can complete.
func helperOrganizations(t testing.TB) []*onboarding.Organization {
	t.Helper()
	orgs := testOrganizations(t)
	one := func(f onboarding.Field) *onboarding.Form {
		form, err := onboarding.NewForm("one", []onboarding.Field{
			{ID: "company_name", Label: "Name", Type: onboarding.TypeText, Category: "company", Required: true}, f,
		})
		if err != nil {
			t.Fatal(err)
		}
		return form
	}
	orgs[0].Configs = append(orgs[0].Configs,
		&onboarding.Configuration{ID: "acme-lite", OrgID: "acme", Form: loadFormFile(t, "../testdata/forms/kyb-lite.toml"), Countries: []string{"GB", "IE"}},
		&onboarding.Configuration{ID: "acme-everything", OrgID: "acme", Form: customForm(t), Countries: []string{"GB", "IE", "FR"}, CompanySelection: true},
		&onboarding.Configuration{ID: "acme-heic", OrgID: "acme", Countries: []string{"FR"}, Form: one(onboarding.Field{
			ID: "selfie", Label: "Selfie", Type: onboarding.TypeDocument, Category: "documents", Required: true, Validation: "strict", Accept: []string{"image/heic"}})},
		&onboarding.Configuration{ID: "acme-impossible", OrgID: "acme", Countries: []string{"FR"}, Form: one(onboarding.Field{
			ID: "code", Label: "Code", Type: onboarding.TypeText, Category: "company", Required: true, Pattern: `^a\bb$`})},
	)
	return orgs
}

// submitPath is the submit test helper's path for application id.
func submitPath(id string) string {
	return "/api/external/test-helpers/applications/" + id + "/submit"
}

// appEvents returns the types of application id's events, oldest first.
func (e *env) appEvents(t *testing.T, id string) []string {
	t.Helper()
	var types []string
	for _, ev := range e.events(t, "acme", "?limit=100").Events {
		var data struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data.ID == id {
			types = append(types, ev.Type)
		}
	}
	slices.Reverse(types)
	return types
}

// wantComplete checks a submitted application against its form: every
// required field answered and every declaration ticked, a director, every
// required document accepted (company ones and per person, as the form's
// roles say).
func wantComplete(t *testing.T, app map[string]any, form *onboarding.Form) {
	t.Helper()
	data := app["data"].(map[string]any)
	fields := data["fields"].(map[string]any)
	docs := data["documents"].(map[string]any)
	people, _ := data["people"].([]any)
	accepted := func(docs map[string]any, id, whose string) {
		d, ok := docs[id].(map[string]any)
		if !ok || d["status"] != "accepted" || d["file_name"] == "" {
			t.Errorf("document %s%s = %v, want an accepted file", id, whose, docs[id])
		}
	}
	hasPeopleStage := false
	for _, st := range form.Stages() {
		hasPeopleStage = hasPeopleStage || st.ID == onboarding.StagePeople
	}
	directors := 0
	for _, p := range people {
		if slices.Contains(p.(map[string]any)["roles"].([]any), any("director")) {
			directors++
		}
	}
	if hasPeopleStage && directors == 0 {
		t.Errorf("no director among %v", people)
	}
	for _, f := range form.Fields() {
		switch {
		case f.Confirmation:
			if fields[f.ID] != true {
				t.Errorf("declaration %s = %v, want true", f.ID, fields[f.ID])
			}
		case f.Type == onboarding.TypeDocument && f.PersonScoped:
			for _, p := range people {
				p := p.(map[string]any)
				roles := p["roles"].([]any)
				if slices.ContainsFunc(f.RequiredFor, func(r onboarding.PersonRole) bool { return slices.Contains(roles, any(string(r))) }) {
					accepted(p["documents"].(map[string]any), f.ID, " of "+p["full_name"].(string))
				}
			}
		case f.Type == onboarding.TypeDocument:
			if f.Required {
				accepted(docs, f.ID, "")
			}
		case f.PersonScoped:
			// Checked per form by the cases.
		case f.Required && fields[f.ID] == nil:
			t.Errorf("required field %s is missing", f.ID)
		}
	}
}

// TestTestHelperSubmit drives applications of several forms and
// configurations to submitted with the test helper (docs/sandbox.md): the
// response is get-application's, the events are opened then submitted,
// and every step is the API key's in the activity log.
func TestTestHelperSubmit(t *testing.T) {
	e := newEnv(t, envOptions{orgs: helperOrganizations(t)})
	std := onboarding.StandardForm()
	ireland := `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"`
	tests := []struct {
		name, body, config string
		form               *onboarding.Form
		// check looks at what the samples gave.
		check func(t *testing.T, app map[string]any)
	}{
		{name: "standard form, registry people", body: "", form: std, check: func(t *testing.T, app map[string]any) {
			people := app["data"].(map[string]any)["people"].([]any)
			if len(people) != 2 {
				t.Errorf("%d people, want Northwind's two officers and no sample director", len(people))
			}
		}},
		{name: "standard form, no people", body: ireland, form: std, check: func(t *testing.T, app map[string]any) {
			data := app["data"].(map[string]any)
			people := data["people"].([]any)
			if len(people) != 1 {
				t.Fatalf("people = %v, want the sample director", people)
			}
			director := people[0].(map[string]any)
			doc := director["documents"].(map[string]any)["person_id_document"].(map[string]any)
			for _, k := range []string{"file_id", "download_url", "uploaded_at"} {
				if s, _ := doc[k].(string); s == "" {
					t.Errorf("identity document has no %s: %v", k, doc)
				}
				delete(doc, k)
			}
			pdf := map[string]any{"file_name": "sample.pdf", "file_type": "application/pdf", "status": "accepted", "acceptance_reason": "baseline_passed"}
			if diff := cmp.Diff(map[string]any{
				"id": director["id"], "source": "user_added", "roles": []any{"director"}, "full_name": "Sam Sample", "first_name": "Sam", "last_name": "Sample",
				"documents": map[string]any{"person_id_document": pdf},
			}, director); diff != "" {
				t.Errorf("sample director (-want +got):\n%s", diff)
			}
			fields := data["fields"].(map[string]any)
			for id, want := range map[string]any{
				"industry": "software", "business_description": "A sample answer from the sandbox test helper.",
				"confirm_accuracy": true, "confirm_terms": true,
				// The partner's and the registry's answers stay.
				"company_name": "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "company_number": "100001",
			} {
				if fields[id] != want {
					t.Errorf("field %s = %v, want %v", id, fields[id], want)
				}
			}
			if fields["website"] != nil || fields["bank_account_iban"] != nil {
				t.Errorf("optional fields were filled: %v", fields)
			}
		}},
		{name: "company selection, sandbox company", body: `{"primary_contact":{"email":"sam@example.com"},"country":"GB"`, config: "acme-select", form: std,
			check: func(t *testing.T, app map[string]any) {
				fields := app["data"].(map[string]any)["fields"].(map[string]any)
				if fields["company_number"] != "10000001" || fields["company_name"] != "NORTHWIND TRADING LIMITED" {
					t.Errorf("company = %v %v, want the sandbox registry's Northwind", fields["company_number"], fields["company_name"])
				}
			}},
		{name: "kyb-lite form file", body: `{"primary_contact":{"email":"sam@example.com"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"`, config: "acme-lite",
			form: loadFormFile(t, "../testdata/forms/kyb-lite.toml"), check: func(t *testing.T, app map[string]any) {
				doc := app["data"].(map[string]any)["documents"].(map[string]any)["certificate_of_incorporation"].(map[string]any)
				if doc["acceptance_reason"] != "validation_passed" {
					t.Errorf("strict certificate = %v, want validation_passed", doc)
				}
			}},
		{name: "every field type", body: `{"primary_contact":{"email":"sam@example.com"},"country":"IE"`, config: "acme-everything", form: customForm(t),
			check: func(t *testing.T, app map[string]any) {
				data := app["data"].(map[string]any)
				docs := data["documents"].(map[string]any)
				for id, typ := range map[string]string{"licence": "application/pdf", "logo": "image/png", "photo": "image/jpeg", "anything": "application/pdf"} {
					if got := docs[id].(map[string]any)["file_type"]; got != typ {
						t.Errorf("document %s is %v, want %s", id, got, typ)
					}
				}
				fields := data["fields"].(map[string]any)
				for id, want := range map[string]any{
					"company_name": "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "trading_name": "Samp",
					"vat_number": "GB000000000", "lei": "AAAAAAAAAAAAAAAAAA00", "short_code": "aaa-0",
					"payout_iban": "GB82WEST12345698765432", "market": "b2b", "markets": []any{"b2b"}, "founded": "2020-01-15",
					"hotline": "+442079460958", "online_share": float64(0), "listed": true, "agree": true, "agree_marketing": true,
					"revenue": map[string]any{"amount": float64(100000), "currency": "EUR"},
					"office":  map[string]any{"line1": "1 Sample Street", "city": "Dublin", "postcode": "D02 X285", "country": "IE"},
				} {
					if diff := cmp.Diff(want, fields[id]); diff != "" {
						t.Errorf("field %s (-want +got):\n%s", id, diff)
					}
				}
				sam := data["people"].([]any)
				if len(sam) != 1 {
					t.Fatalf("people = %v", sam)
				}
				p := sam[0].(map[string]any)
				if p["nationality"] != "IE" || p["email"] != "sample@example.com" || p["date_of_birth"] != "1985-06-15" || p["phone_number"] != "+442079460958" ||
					p["home_address"].(map[string]any)["city"] != "Dublin" {
					t.Errorf("sample director = %v", p)
				}
				// A form's own person fields are kept, not shown.
				stored, err := e.store.Application(context.Background(), app["id"].(string))
				if err != nil {
					t.Fatal(err)
				}
				if got := string(stored.Data.People[0].Fields["person_tax_number"]); got != `"000-00-0000"` {
					t.Errorf("person_tax_number = %s", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body
			if body != "" {
				if tt.config != "" {
					body += `,"config_id":"` + tt.config + `"`
				}
				body += "}"
			}
			id := e.create(t, "acme", body)
			w := e.do("POST", submitPath(id), "acme", "")
			if w.Code != http.StatusOK {
				t.Fatalf("submit = %d %s", w.Code, w.Body)
			}
			got := decode(t, w)
			if diff := cmp.Diff(e.apiApp(t, id), got); diff != "" {
				t.Errorf("response is not get-application's (-get +submit):\n%s", diff)
			}
			if got["status"] != "submitted" || got["submitted_at"] != "2026-11-21T09:30:00.000Z" {
				t.Errorf("status %v, submitted_at %v; want submitted now", got["status"], got["submitted_at"])
			}
			wantComplete(t, got, tt.form)
			tt.check(t, got)
			if diff := cmp.Diff([]string{"application.created", "application.sent", "application.opened", "application.submitted"}, e.appEvents(t, id)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			e.wantHelperActivity(t, id, onboarding.ActionOpened)
		})
	}
}

// wantHelperActivity checks the activity log of an application the test
// helper submitted: its entry, then every step with the acme key as the
// actor, among them the actions named.
func (e *env) wantHelperActivity(t *testing.T, id string, also ...string) {
	t.Helper()
	acts, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		t.Fatal(err)
	}
	k, err := e.svc.Authenticate(context.Background(), e.keys["acme"])
	if err != nil {
		t.Fatal(err)
	}
	key := onboarding.Actor{Type: onboarding.ActorAPIKey, ID: k.ClientID, Name: "acme all"}
	i := slices.IndexFunc(acts, func(a onboarding.Activity) bool { return a.Action == onboarding.ActionTestHelperSubmit })
	if i < 0 {
		t.Fatalf("no %s entry in %+v", onboarding.ActionTestHelperSubmit, acts)
	}
	var actions []string
	for _, a := range acts[i:] {
		if a.Actor != key {
			t.Errorf("entry %s by %+v, want the API key", a.Action, a.Actor)
		}
		actions = append(actions, a.Action)
	}
	for _, want := range append(also, onboarding.ActionFormSaved, onboarding.ActionDocumentUploaded, onboarding.ActionSubmitted) {
		if !slices.Contains(actions, want) {
			t.Errorf("actions %v lack %s", actions, want)
		}
	}
	if actions[len(actions)-1] != onboarding.ActionSubmitted {
		t.Errorf("last action %s, want %s", actions[len(actions)-1], onboarding.ActionSubmitted)
	}
}

// TestTestHelperSubmitOpened: an application the applicant already opened
// and partly answered keeps its answers and is not opened again.
func TestTestHelperSubmitOpened(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	a.post("/s/company", url.Values{"industry": {"retail"}, "action": {"save"}})
	w := e.do("POST", submitPath(id), "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("submit = %d %s", w.Code, w.Body)
	}
	app := decode(t, w)
	if fields := app["data"].(map[string]any)["fields"].(map[string]any); fields["industry"] != "retail" {
		t.Errorf("industry = %v, want the applicant's retail", fields["industry"])
	}
	if diff := cmp.Diff([]string{"application.created", "application.sent", "application.opened", "application.submitted"}, e.appEvents(t, id)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := e.activity(t, id, onboarding.ActionOpened); n != 1 {
		t.Errorf("%d opened entries, want the applicant's only", n)
	}
	e.wantHelperActivity(t, id)
}

// TestTestHelperSubmitErrors checks every error of the submit helper with
// its status and body.
func TestTestHelperSubmitErrors(t *testing.T) {
	e := newEnv(t, envOptions{orgs: helperOrganizations(t)})
	open := e.create(t, "acme", "")
	statuses := map[onboarding.Status]string{}
	for _, st := range []onboarding.Status{onboarding.StatusSubmitted, onboarding.StatusReview, onboarding.StatusApproved, onboarding.StatusRejected} {
		statuses[st] = e.create(t, "acme", "")
		e.setStatus(t, statuses[st], st)
	}
	france := func(config string) string {
		return e.create(t, "acme", `{"primary_contact":{"email":"sam@example.com"},"country":"FR","company_number":"1","company_name":"Sample SARL","config_id":"`+config+`"}`)
	}
	tests := []struct {
		name, key, path string
		status          int
		msg             string
	}{
		{"submitted", "acme", submitPath(statuses[onboarding.StatusSubmitted]), 400, "Cannot submit application in submitted status"},
		{"review", "acme", submitPath(statuses[onboarding.StatusReview]), 400, "Cannot submit application in review status"},
		{"approved", "acme", submitPath(statuses[onboarding.StatusApproved]), 400, "Cannot submit application in approved status"},
		{"rejected", "acme", submitPath(statuses[onboarding.StatusRejected]), 400, "Cannot submit application in rejected status"},
		{"unknown", "acme", submitPath("00000000-0000-4000-8000-000000000000"), 404, "Application not found"},
		{"not an id", "acme", submitPath("nope"), 404, "Application not found"},
		{"another organization's", "globex", submitPath(open), 404, "Application not found"},
		{"no key", "", submitPath(open), 401, "Missing API key"},
		{"read scope only", "acme-read", submitPath(open), 401, "API key missing required scopes: applications:write"},
		{"create scope only", "acme-create", submitPath(open), 401, "API key missing required scopes: applications:write"},
		{"no sample fits a document", "acme", submitPath(france("acme-heic")), 400,
			"The sample document for Selfie was not accepted: This type of file cannot be accepted here. Upload a HEIC file."},
		{"no sample fits a field", "acme", submitPath(france("acme-impossible")), 400,
			"The test helper could not complete the application: Code is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", tt.path, tt.key, ""), tt.status, errBody(tt.msg))
		})
	}
	if st := e.apiApp(t, open)["status"]; st != "sent" {
		t.Errorf("the refused calls moved the application to %v", st)
	}
	// A key with applications:write alone is enough.
	if w := e.do("POST", submitPath(open), "acme-write", ""); w.Code != http.StatusOK {
		t.Errorf("submit with applications:write = %d %s", w.Code, w.Body)
	}
	wantError(t, e.do("GET", submitPath(open), "acme", ""), http.StatusMethodNotAllowed, errBody("Method not allowed"))
}

// TestTestHelperIdempotency: the Idempotency-Key rules of every POST
// cover the helper; a replay answers the first response and submits
// nothing again.
func TestTestHelperIdempotency(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	first := e.doWithKey("POST", submitPath(id), "acme", "ci-run-7", "")
	if first.Code != http.StatusOK {
		t.Fatalf("first = %d %s", first.Code, first.Body)
	}
	again := e.doWithKey("POST", submitPath(id), "acme", "ci-run-7", "")
	if again.Code != http.StatusOK || again.Body.String() != first.Body.String() || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %d %q %s, want the first response replayed", again.Code, again.Header().Get("Idempotent-Replayed"), again.Body)
	}
	if n := e.activity(t, id, onboarding.ActionTestHelperSubmit); n != 1 {
		t.Errorf("%d test helper entries, want 1", n)
	}
	wantError(t, e.doWithKey("POST", submitPath(id), "acme", "ci-run-8", ""), http.StatusBadRequest, errBody("Cannot submit application in submitted status"))
}

// TestTestHelpersProduction: production has no test helpers; every path
// under /api/external/test-helpers/ is an unknown path.
func TestTestHelpersProduction(t *testing.T) {
	e := newEnv(t, envOptions{production: true})
	id := e.create(t, "acme", "")
	for _, tt := range []struct{ method, path, key string }{
		{"POST", submitPath(id), "acme"},
		{"POST", submitPath(id), ""},
		{"GET", submitPath(id), "acme"},
		{"POST", "/api/external/test-helpers/rfi-requests/" + id + "/complete", "acme"},
		{"POST", "/api/external/test-helpers/rfi-requests/" + id + "/expire", "acme"},
		{"GET", "/api/external/test-helpers/", ""},
	} {
		t.Run(tt.method+" "+tt.path+" "+tt.key, func(t *testing.T) {
			wantError(t, e.do(tt.method, tt.path, tt.key, ""), http.StatusNotFound, errBody("Not found"))
		})
	}
	if st := e.apiApp(t, id)["status"]; st != "sent" {
		t.Errorf("status = %v, want sent", st)
	}
}

// BenchmarkTestHelperSubmit measures the submit helper on a fresh Irish
// application (no registry people: a sample director, two company
// documents and one identity document), each iteration creating its own.
func BenchmarkTestHelperSubmit(b *testing.B) {
	e := newEnv(b, envOptions{})
	body := `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`
	auth := "Bearer " + e.keys["acme"]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := e.create(b, "acme", body)
		r := httptest.NewRequest("POST", submitPath(id), nil)
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		b.StartTimer()
		e.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("submit = %d %s", w.Code, w.Body)
		}
	}
}
