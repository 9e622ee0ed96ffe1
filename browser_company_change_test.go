package main

import (
	"strconv"
	"testing"
)

// TestBrowserCompanyChange: on a configuration with company selection, the
// applicant who chose a company changes it from the overview, at a
// phone's size and a desktop's: "Change company?" says what goes, "No"
// keeps the company, "Yes" returns to the search, and the company chosen
// next fills the form.
func TestBrowserCompanyChange(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			s := startBrowserServer(t)
			created := s.createApplication(t, `{"primary_contact":{"email":"sam@example.com"},"country":"GB","config_id":"acme-select","pre_auth":true}`)
			id := created["application_id"].(string)

			sam := b.tab(t)
			sam.open(created["link"].(string) + "?auth_code=" + created["pre_auth_code"].(string))
			sam.wantHeading("Find your company")
			sam.typeInto("q", "north")
			sam.clickAndWait("search")
			sam.clickAndWait("choose-10000001")
			sam.wantHeading("Is this your company?")
			sam.clickAndWait("confirm-company")
			sam.wantHeading("Onboarding for NORTHWIND TRADING LIMITED")
			sam.wantText("Your company", "NORTHWIND TRADING LIMITED", "10000001", "Change company")
			if h, _ := strconv.ParseFloat(sam.eval(`String(document.getElementById("change-company").getBoundingClientRect().height)`), 64); h < 44 {
				t.Errorf("the Change company link is %.0f px high, want a 44 px touch target", h)
			}
			sam.wantFits()
			sam.shot("chosen")

			// "Change company?": what goes; "No" keeps the company.
			sam.clickAndWait("change-company")
			sam.wantHeading("Change company?")
			sam.wantText("people, related companies and documents that came from the register are removed",
				"NORTHWIND TRADING LIMITED", "Yes, change company", "No, keep NORTHWIND TRADING LIMITED")
			sam.wantFits()
			sam.shot("change-company")
			sam.clickAndWait("keep-company")
			sam.wantHeading("Onboarding for NORTHWIND TRADING LIMITED")

			// "Yes": back at the search, with a notice.
			sam.clickAndWait("change-company")
			sam.clickAndWait("change-company-yes")
			sam.wantHeading("Find your company")
			sam.wantText("The company you chose has been removed")
			if got := sam.value("q"); got != "" {
				t.Errorf("the search box holds %q after the change, want it empty", got)
			}
			sam.wantFits()
			sam.shot("changed")

			// Another company, and its details in the form.
			sam.typeInto("q", "bluebell")
			sam.clickAndWait("search")
			sam.clickAndWait("choose-10000002")
			sam.wantHeading("Is this your company?")
			sam.wantText("BLUEBELL HOLDINGS PLC")
			sam.clickAndWait("confirm-company")
			sam.wantHeading("Onboarding for BLUEBELL HOLDINGS PLC")
			sam.wantText("Your company has been found on the register.", "BLUEBELL HOLDINGS PLC", "10000002")
			sam.shot("chosen-again")
			sam.clickAndWait("task-company")
			if got := sam.value("company_number"); got != "10000002" {
				t.Errorf("company_number shows %q, want 10000002", got)
			}
			if got := sam.value("company_name"); got != "BLUEBELL HOLDINGS PLC" {
				t.Errorf("company_name shows %q, want BLUEBELL HOLDINGS PLC", got)
			}
			sam.shot("company")

			data := s.application(t, id)["data"].(map[string]any)
			if number := data["fields"].(map[string]any)["company_number"]; number != "10000002" {
				t.Errorf("company_number = %v, want 10000002", number)
			}
			var entities []string
			for _, e := range data["entities"].([]any) {
				entities = append(entities, e.(map[string]any)["name"].(string))
			}
			if len(entities) != 1 || entities[0] != "BLUEBELL GROUP LIMITED" {
				t.Errorf("related companies %v, want Bluebell's corporate owner only", entities)
			}
		})
	}
}
