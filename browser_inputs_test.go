package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserInputs: countries are chosen by name with a type-ahead,
// dates are GOV.UK day, month and year inputs, and the review reads them
// back in words; a date missing its month says so, marks the month only,
// and the summary's link puts the focus there. At a phone's size and a
// desktop's.
func TestBrowserInputs(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			s := startBrowserServer(t)
			created := s.createApplication(t, `{"primary_contact":{"email":"jo@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
			link := created["link"].(string)
			jo := b.tab(t)
			jo.open(link + "?auth_code=" + created["pre_auth_code"].(string))
			jo.open(link + "/people/new")
			jo.check("role-director")
			jo.typeInto("person_full_name", "Aoife Murphy")

			// The type-ahead: "ire" offers Ireland first; Enter takes it.
			jo.typeInto("person_home_address.country", "ire")
			jo.do("wait for suggestions", chromedp.WaitVisible(byID("person_home_address.country-listbox")))
			if got := jo.eval(`document.querySelector("[id='person_home_address.country-listbox'] [role=option]").innerText`); got != "Ireland" {
				jo.fail("first suggestion %q, want Ireland", got)
			}
			if got := jo.eval(`document.getElementById("person_home_address.country").getAttribute("aria-expanded")`); got != "true" {
				jo.fail("aria-expanded = %q while suggestions show", got)
			}
			jo.do("choose with Enter", chromedp.KeyEvent(kb.Enter))
			if got := jo.value("person_home_address.country") + " " + jo.value("person_home_address.country-select"); got != "Ireland IE" {
				jo.fail("after Enter the country reads %q, want Ireland and IE posted", got)
			}
			jo.shot("country-chosen") // (a screenshot takes the focus away, which closes the list)
			jo.typeInto("person_home_address.line1", "3 Harbour Row")
			jo.typeInto("person_home_address.city", "Cobh")
			jo.typeInto("person_nationality", "ie") // a code works too

			// A date of birth without its month.
			jo.typeInto("person_date_of_birth.day", "16")
			jo.typeInto("person_date_of_birth.year", "1980")
			jo.clickAndWait("save-person")
			jo.wantText("There is a problem", "Date of birth must include a month")
			marked := jo.eval(`[...document.querySelectorAll("[id^='person_date_of_birth.'][aria-invalid=true]")].map(e => e.id).join(" ")`)
			if marked != "person_date_of_birth.month" {
				jo.fail("marked %q, want only the month", marked)
			}
			if got := jo.value("person_home_address.country"); got != "Ireland" {
				jo.fail("the country after the error reads %q, want Ireland", got)
			}
			jo.shot("date-error")
			jo.do("follow the summary link", chromedp.Click(`#error-summary a`, chromedp.NodeVisible))
			if got := jo.focused(); got != "person_date_of_birth.month" {
				jo.fail("the summary link focused %q, want the month", got)
			}
			jo.typeInto("person_date_of_birth.month", "4")
			jo.clickAndWait("save-person")
			jo.wantText("Aoife Murphy")

			// The review reads dates and countries in words.
			jo.open(link + "/review")
			jo.wantText("Date of birth: 16 April 1980", "Nationality: Ireland", "Cobh\nIreland")
			jo.wantFits()
			jo.shot("review")

			// Other names people type: "UK" is the United Kingdom (not
			// Ukraine, which "uk" also starts); a name that is no country
			// stays as typed, marked, and stops the save.
			jo.open(link + "/people/new")
			jo.check("role-director")
			jo.typeInto("person_full_name", "Sam Lee")
			jo.typeInto("person_nationality", "UK")
			jo.do("leave the field", chromedp.KeyEvent("\t"))
			if got := jo.value("person_nationality") + " " + jo.value("person_nationality-select"); got != "United Kingdom GB" {
				jo.fail("UK reads %q, want United Kingdom and GB posted", got)
			}
			jo.typeInto("person_home_address.country", "Narnia")
			jo.do("leave the field", chromedp.KeyEvent("\t"))
			jo.wantText("Choose a country from the list")
			if got := jo.value("person_home_address.country"); got != "Narnia" {
				jo.fail("the unknown country reads %q, want it kept as typed", got)
			}
			jo.do("save", chromedp.Click(byID("save-person"), chromedp.NodeVisible))
			if got := jo.focused(); got != "person_home_address.country" {
				jo.fail("saving with an unknown country focused %q, want the country", got)
			}
			if loc := jo.location(); !strings.HasSuffix(loc, "/people/new") {
				jo.fail("saving with an unknown country left the page for %s", loc)
			}
			jo.shot("unknown-country")
		})
	}
}
