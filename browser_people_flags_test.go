package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// detailsForm is a form file that requires each person's date of birth,
// home address and email address: more than a company register gives.
const detailsForm = `
id = "people-details"

[[fields]]
id = "company_name"
label = "Registered company name"
type = "text"
category = "company"
required = true

[[fields]]
id = "company_number"
label = "Company registration number"
type = "text"
category = "company"

[[fields]]
id = "registered_address"
label = "Registered office address"
type = "address"
category = "company"
required = true

[[fields]]
id = "person_full_name"
label = "Full legal name"
type = "text"
category = "people"
person_scoped = true

[[fields]]
id = "person_date_of_birth"
label = "Date of birth"
type = "date"
category = "people"
person_scoped = true
required = true
rule = "not_future"

[[fields]]
id = "person_nationality"
label = "Nationality"
type = "text"
category = "people"
person_scoped = true
pattern = '^[A-Z]{2}$'

[[fields]]
id = "person_home_address"
label = "Home address"
type = "address"
category = "people"
person_scoped = true
required = true

[[fields]]
id = "person_email"
label = "Email address"
type = "text"
category = "people"
person_scoped = true
required = true

[[fields]]
id = "confirm_accuracy"
label = "I confirm that the information I have given is accurate and complete"
type = "boolean"
category = "confirmation"
required = true
confirmation = true
`

// detailsConfig serves GB companies on the form file at formPath.
func detailsConfig(formPath string) string {
	return fmt.Sprintf(`
[[organizations]]
id = "acme"
name = "Acme Payments"
default_config = "acme-details"

  [[organizations.configs]]
  id = "acme-details"
  form = %q
  countries = ["GB"]
`, formPath)
}

// TestBrowserPeopleFlags: on a form that needs more about each person
// than the company register gives, the people page flags every registry
// person with "Details needed" and what to add, and the review lists each
// missing detail; completing a person through their card's Edit link
// takes their flag away. At a phone's size and a desktop's.
func TestBrowserPeopleFlags(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			formPath := filepath.Join(t.TempDir(), "people-details.toml")
			if err := os.WriteFile(formPath, []byte(detailsForm), 0o600); err != nil {
				t.Fatal(err)
			}
			s := startBrowserServerWith(t, detailsConfig(formPath))
			created := s.createApplication(t, `{"primary_contact":{"email":"jo@northwind.example","name":"Jo Reed"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
			id := created["application_id"].(string)
			link := created["link"].(string)
			type person struct{ id, name string }
			var registry []person
			for _, p := range s.application(t, id)["data"].(map[string]any)["people"].([]any) {
				if p := p.(map[string]any); p["source"] == "registry" {
					registry = append(registry, person{p["id"].(string), p["full_name"].(string)})
				}
			}
			if len(registry) < 2 {
				t.Fatalf("the register gave %d people, want at least two", len(registry))
			}
			first := registry[0]
			cardText := func(tb *tab, p person) string {
				return strings.Join(strings.Fields(tb.eval(fmt.Sprintf(`document.getElementById(%q).innerText`, "person-"+p.id))), " ")
			}

			jo := b.tab(t)
			jo.open(link + "?auth_code=" + created["pre_auth_code"].(string))
			jo.open(link + "/s/people")
			jo.wantHeading("People and owners")
			for _, p := range registry {
				if got := cardText(jo, p); !strings.Contains(got, "Details needed") || !strings.Contains(got, "Add "+p.name+"'s full date of birth, home address and email address") {
					jo.fail("%s's card reads %q, want it to ask for their full date of birth, home address and email address", p.name, got)
				}
			}
			edit := fmt.Sprintf(`document.querySelector("#person-%s .card-actions a")`, first.id)
			if h, _ := strconv.ParseFloat(jo.eval(`String(`+edit+`.getBoundingClientRect().height)`), 64); h < 44 {
				jo.fail("%s's Edit link is %.1f px high, want at least 44", first.name, h)
			}
			jo.wantFits()
			jo.shot("people-details-needed")

			jo.open(link + "/review")
			jo.wantText("Home address: Not provided — required", "Email address: Not provided — required", "— full date required")
			jo.wantFits()
			jo.shot("review-details-needed")

			// Completing the first person through their card's Edit link.
			jo.open(link + "/s/people")
			jo.open(jo.eval(edit + `.href`))
			jo.wantHeading(first.name)
			if jo.value("person_date_of_birth.day") != "" || jo.value("person_date_of_birth.year") == "" {
				jo.fail("the register's date of birth shows as day %q, year %q: want the year without the day", jo.value("person_date_of_birth.day"), jo.value("person_date_of_birth.year"))
			}
			jo.typeInto("person_date_of_birth.day", "14")
			jo.typeInto("person_home_address.line1", "1 High Street")
			jo.typeInto("person_home_address.city", "Leeds")
			jo.typeInto("person_home_address.postcode", "LS1 4AB")
			jo.typeInto("person_home_address.country", "GB")
			jo.typeInto("person_email", "eleanor@northwind.example")
			jo.clickAndWait("save-person")
			jo.wantText(first.name + " has been saved.")
			if got := cardText(jo, first); strings.Contains(got, "Details needed") || strings.Contains(got, "Add ") {
				jo.fail("%s's card still reads %q once complete", first.name, got)
			}
			if got := cardText(jo, registry[1]); !strings.Contains(got, "Details needed") {
				jo.fail("%s's card lost its flag: %q", registry[1].name, got)
			}
			jo.wantFits()
			jo.shot("people-one-complete")
		})
	}
}
