package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"onboard/onboarding"
	"onboard/server/form"
)

// TestFormChangeCompany: the applicant who chose their company on the
// register changes it from the overview, after confirming, and chooses
// another; a company the partner gave, or a submitted application, offers
// no change.
func TestFormChangeCompany(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", `{"primary_contact":{"email":"sam@example.com"},"country":"GB","config_id":"acme-select"}`)
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()

	// Nothing to change before a company is chosen.
	wantRedirect(t, a.get("/company/change"), a.base)
	a.get("/company")
	wantRedirect(t, a.post("/company/change", nil), a.base+"/company")
	if n := e.activity(t, id, onboarding.ActionCompanyChanged); n != 0 {
		t.Errorf("%d company.changed entries before a company was chosen", n)
	}

	a.get("/company/confirm?number=10000001")
	wantRedirect(t, a.post("/company", url.Values{"number": {"10000001"}, "name": {"NORTHWIND TRADING LIMITED"}}), a.base+"?done=company")
	wantPage(t, a.get(""), http.StatusOK, "<h2>Your company</h2>", `<dd id="chosen-name">NORTHWIND TRADING LIMITED</dd>`,
		`<a href="`+a.base+`/company/change" id="change-company">Change company</a>`, `<dd class="wide" id="chosen-number">10000001</dd>`)

	// "Change company?" says what goes, and offers to keep the company.
	w := a.get("/company/change")
	wantPage(t, w, http.StatusOK, "<title>Change company? – ", "<h1>Change company?</h1>",
		"the people, related companies and documents that came from the register are removed",
		"NORTHWIND TRADING LIMITED", "10000001", "16 April 2018", "Private limited company",
		`<form method="post" action="`+a.base+`/company/change" class="actions">`,
		`id="change-company-yes">Yes, change company</button>`,
		`<a class="button secondary" href="`+a.base+`" id="keep-company">No, keep NORTHWIND TRADING LIMITED</a>`,
		`<a href="`+a.base+`">Back to the overview</a>`)
	if strings.Contains(w.Body.String(), "<dt>Status</dt>") {
		t.Error("Change company? shows a status the application does not record")
	}

	// The change is a form post like any other: without the page's token,
	// nothing changes.
	wantPage(t, a.post("/company/change", url.Values{"csrf": {"forged"}}), http.StatusForbidden, onboarding.ErrCSRF.Message)
	a.get("/company/change") // the page's token again
	if fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); fields["company_number"] != "10000001" {
		t.Fatalf("a forged post changed the company: fields %v", fields)
	}

	wantRedirect(t, a.post("/company/change", nil), a.base+"/company?done=changed")
	wantPage(t, a.get("/company?done=changed"), http.StatusOK, "<h1>Find your company</h1>", form.NoticeText("changed"))
	app := e.apiApp(t, id)
	data := app["data"].(map[string]any)
	fields := data["fields"].(map[string]any)
	for _, f := range []string{"company_number", "company_name", "company_type", "incorporation_date", "registered_address"} {
		if fields[f] != nil {
			t.Errorf("%s = %v after the change", f, fields[f])
		}
	}
	if fields["company_country"] != "GB" || len(data["people"].([]any)) != 0 || len(data["entities"].([]any)) != 0 || len(data["ownership"].([]any)) != 0 {
		t.Errorf("after the change: fields %v, people %v, entities %v, ownership %v", fields, data["people"], data["entities"], data["ownership"])
	}
	if sources := data["meta"].(map[string]any)["registry_sources"]; sources != nil && len(sources.([]any)) != 0 {
		t.Errorf("registry_sources = %v after the change", sources)
	}
	if app["registry_documents_status"] != nil {
		t.Errorf("registry_documents_status = %v after the change", app["registry_documents_status"])
	}
	if n := e.activity(t, id, onboarding.ActionCompanyChanged); n != 1 {
		t.Errorf("%d company.changed entries, want 1", n)
	}
	// Back at the search: the overview leads there, and there is nothing
	// left to change; a second click of "Yes" lands on the search too.
	wantRedirect(t, a.get(""), a.base+"/company")
	wantRedirect(t, a.get("/company/change"), a.base)
	a.get("/company")
	wantRedirect(t, a.post("/company/change", nil), a.base+"/company")

	a.get("/company/confirm?number=10000002")
	wantRedirect(t, a.post("/company", url.Values{"number": {"10000002"}, "name": {"BLUEBELL HOLDINGS PLC"}}), a.base+"?done=company")
	wantPage(t, a.get(""), http.StatusOK, "Onboarding for BLUEBELL HOLDINGS PLC", `<dd id="chosen-name">BLUEBELL HOLDINGS PLC</dd>`, `id="change-company">Change company</a>`)
	if fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); fields["company_number"] != "10000002" {
		t.Errorf("company_number = %v after choosing again", fields["company_number"])
	}

	t.Run("the partner gave the company", func(t *testing.T) {
		id := e.create(t, "acme", "")
		a := e.applicantAt(t, e.primaryLink(t, id))
		a.signIn()
		if w := a.get(""); strings.Contains(w.Body.String(), "Change company") {
			t.Errorf("the overview offers to change a company the partner gave:\n%s", pageText(w.Body.String()))
		}
		wantRedirect(t, a.get("/company/change"), a.base)
		a.get("")
		wantPage(t, a.post("/company/change", nil), http.StatusConflict, onboarding.ErrCompanyNotChangeable.Message)
	})

	t.Run("submitted", func(t *testing.T) {
		id := e.create(t, "acme", `{"primary_contact":{"email":"sam@example.com"},"country":"GB","config_id":"acme-select"}`)
		a := e.applicantAt(t, e.primaryLink(t, id))
		a.signIn()
		a.get("/company")
		csrf := a.csrf
		if w := e.do("POST", submitPath(id), "acme", ""); w.Code != http.StatusOK {
			t.Fatalf("submit = %d %s", w.Code, w.Body)
		}
		if w := a.get(""); strings.Contains(w.Body.String(), "Change company") {
			t.Errorf("the overview of a submitted application offers to change the company:\n%s", pageText(w.Body.String()))
		}
		wantRedirect(t, a.get("/company/change"), a.base)
		wantPage(t, a.post("/company/change", url.Values{"csrf": {csrf}}), http.StatusConflict, onboarding.ErrApplicationFrozen.Message)
	})
}
