package server

import (
	stdhtml "html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"onboard/onboarding"
	"onboard/server/form"
)

// detailsOrganizations are the test organizations plus acme-details: the
// standard form with each person's date of birth, home address and email
// address required, for GB companies given at create.
func detailsOrganizations(t *testing.T) []*onboarding.Organization {
	t.Helper()
	fields := slices.Clone(onboarding.StandardForm().Fields())
	for i := range fields {
		switch fields[i].ID {
		case "person_date_of_birth", "person_home_address", "person_email":
			fields[i].Required = true
		}
	}
	form, err := onboarding.NewForm("details", fields)
	if err != nil {
		t.Fatal(err)
	}
	orgs := testOrganizations(t)
	orgs[0].Configs = append(orgs[0].Configs, &onboarding.Configuration{ID: "acme-details", OrgID: "acme", Form: form, Countries: []string{"GB"}})
	return orgs
}

// card is the HTML of the people page's card of person id.
func card(t *testing.T, body, id string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `id="person-`+id+`"`)
	if !ok {
		t.Fatalf("no card of person %s:\n%s", id, pageText(body))
	}
	c, _, _ := strings.Cut(rest, "</li>")
	return c
}

// reviewRow is the HTML of the review page's row labelled label.
func reviewRow(t *testing.T, body, label string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, "<dt>"+label+"</dt>")
	if !ok {
		t.Fatalf("no review row %q:\n%s", label, pageText(body))
	}
	r, _, _ := strings.Cut(rest, "</div>")
	return r
}

// wantIn asserts that html (unescaped) contains each of want, and none of
// not.
func wantIn(t *testing.T, what, html string, want, not []string) {
	t.Helper()
	html = stdhtml.UnescapeString(html)
	for _, w := range want {
		if !strings.Contains(html, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, html)
		}
	}
	for _, n := range not {
		if strings.Contains(html, n) {
			t.Errorf("%s contains %q:\n%s", what, n, html)
		}
	}
}

// TestFormPeopleDetailsNeeded: on a form that requires people's dates of
// birth, home addresses and email addresses, a registry director (whose
// register gives only the month and year of birth) is flagged on the
// people page and in the review until the applicant completes them; a
// complete person is not; the people task is not "Completed" meanwhile.
func TestFormPeopleDetailsNeeded(t *testing.T) {
	e := newEnv(t, envOptions{orgs: detailsOrganizations(t)})
	id := e.create(t, "acme", `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd","config_id":"acme-details"}`)
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()

	// Samuel Lee, added with everything the form needs.
	wantSaved(t, a.post("/people/new", url.Values{
		"roles": {"shareholder"}, "person_full_name": {"Samuel Lee"},
		"person_date_of_birth.day": {"2"}, "person_date_of_birth.month": {"1"}, "person_date_of_birth.year": {"1990"},
		"person_email":              {"samuel@example.com"},
		"person_home_address.line1": {"2 Low Road"}, "person_home_address.city": {"York"}, "person_home_address.postcode": {"YO1 7HH"}, "person_home_address.country": {"GB"},
	}), a.base, "person")
	app := e.apiApp(t, id)
	samuel := personID(t, app, "Samuel Lee")
	var registry []map[string]any
	for _, p := range app["data"].(map[string]any)["people"].([]any) {
		if p := p.(map[string]any); p["source"] == "registry" {
			registry = append(registry, p)
		}
	}
	if len(registry) == 0 {
		t.Fatal("the register gave no people")
	}
	first := registry[0]
	did, name := first["id"].(string), first["full_name"].(string)
	if dob, _ := first["date_of_birth"].(string); len(dob) != len("1979-03") {
		t.Fatalf("the register's date of birth of %s is %q, want YYYY-MM", name, dob)
	}

	// The person's page marks what the form requires as required.
	w := a.get("/people/" + did)
	wantPage(t, w, http.StatusOK, `Date of birth <span class="req">(required)</span>`, `Email address <span class="req">(required)</span>`)

	// The people page: the registry person needs details, Samuel does not.
	w = a.get("/s/people")
	wantPage(t, w, http.StatusOK)
	body := w.Body.String()
	wantIn(t, name+"'s card", card(t, body, did),
		[]string{`<span class="tag warn">Details needed</span>`, "Add " + name + "'s full date of birth, home address and email address", `href="` + a.base + "/people/" + did + `"`}, nil)
	wantIn(t, "Samuel Lee's card", card(t, body, samuel), []string{"Samuel Lee"}, []string{"Details needed", "Add "})
	state := func() string {
		t.Helper()
		_, rest, ok := strings.Cut(a.get("").Body.String(), `id="task-people"`)
		if !ok {
			t.Fatal("no people task")
		}
		_, rest, _ = strings.Cut(rest, `<strong class="tag `)
		_, rest, _ = strings.Cut(rest, `">`)
		s, _, _ := strings.Cut(rest, "<")
		return s
	}
	if got := state(); got != "In progress" {
		t.Errorf("people task = %q while %s needs details, want In progress", got, name)
	}

	// The review: the missing details, each said, with a Change link to
	// the person's page; Samuel's row asks for nothing.
	body = a.get("/review").Body.String()
	wantIn(t, name+"'s review row", reviewRow(t, body, name), []string{
		"Date of birth: " + form.DateText(first["date_of_birth"].(string)) + " — full date required",
		"Home address: Not provided — required",
		"Email address: Not provided — required",
		`<a href="` + a.base + "/people/" + did + `">Change`,
	}, nil)
	wantIn(t, "Samuel Lee's review row", reviewRow(t, body, "Samuel Lee"), []string{"Email address: samuel@example.com", "Date of birth: 2 January 1990"}, []string{"required"})
	wantIn(t, "the still-to-do panel", body, []string{
		`<a href="` + a.base + "/people/" + did + `#person_home_address">Home address of ` + name + " is missing</a>",
		`<a href="` + a.base + "/people/" + did + `#person_date_of_birth">Date of birth of ` + name + " is incomplete: give the full date</a>",
	}, nil)

	// Completing every registry person clears the flags.
	for _, p := range registry {
		pid := p["id"].(string)
		wantSaved(t, a.post("/people/"+pid, url.Values{
			"person_date_of_birth.day": {"14"}, "person_date_of_birth.month": {"3"}, "person_date_of_birth.year": {"1979"},
			"person_email":              {"someone@northwind.example"},
			"person_home_address.line1": {"1 High Street"}, "person_home_address.city": {"Leeds"}, "person_home_address.postcode": {"LS1 4AB"}, "person_home_address.country": {"GB"},
		}), a.base, "person")
	}
	body = a.get("/s/people").Body.String()
	wantIn(t, name+"'s card once complete", card(t, body, did), []string{name}, []string{"Details needed", "Add "})
	if got := state(); got != "Completed" {
		t.Errorf("people task = %q once everyone is complete, want Completed", got)
	}
	body = a.get("/review").Body.String()
	wantIn(t, name+"'s review row once complete", reviewRow(t, body, name), []string{"Date of birth: 14 March 1979", "Home address: 1 High Street"}, []string{"required"})
	wantIn(t, "the review once complete", body, nil, []string{"/people/" + did + "#"})
}
