package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"onboard/onboarding"
)

// TestBrowserSendPhone is the end of the form on a 360 px phone (the
// journey covers it at 1280 px): the declarations at the bottom of the
// check-answers page with the terms link, the errors of unticked ones and
// the summary's focus, a collaborator's read-only declarations, the
// confirmation panel after sending, and signing out.
func TestBrowserSendPhone(t *testing.T) {
	b := newBrowser(t, 360, 740, true)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"jo@northwind.example","name":"Jo Reed"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
	id := created["application_id"].(string)
	link := created["link"].(string)
	jo := b.tab(t)
	jo.open(link + "?auth_code=" + created["pre_auth_code"].(string))

	// Incomplete, the check-answers page says what is missing and offers
	// no declarations.
	jo.clickAndWait("task-send")
	jo.wantText("Still to do", "You cannot send your application yet.")
	jo.wantFits()
	jo.shot("cannot-send")

	// The partner pre-fills the business; the applicant uploads the
	// documents the register did not supply.
	s.wantStatus(t, http.StatusOK, http.MethodPatch, "/api/external/applications/"+id, s.key,
		`{"fields":{"industry":"software","business_description":"Wholesale of tea and coffee"}}`)
	for deadline := time.Now().Add(30 * time.Second); s.application(t, id)["registry_documents_status"] == "pending"; {
		if time.Now().After(deadline) {
			t.Fatal("registry documents still pending after 30 s")
		}
		time.Sleep(100 * time.Millisecond) // polling for the fetch to finish, not proving an absence
	}
	jo.open(link + "/s/documents")
	pdf := fixturePDF(t)
	for _, key := range strings.Fields(jo.eval(`[...document.querySelectorAll("section.doc .req")].map(r => r.closest("section").id.slice(4)).join(" ")`)) {
		jo.upload(key, pdf)
	}

	// The declarations come last, after the answers and their Change links.
	jo.open(link)
	jo.clickAndWait("task-send")
	jo.wantHeading("Check your answers before sending your application")
	jo.wantText("Now send your application", "I accept the terms and conditions of Acme Payments", "Change")
	if order := jo.eval(`String(document.querySelector(".summary").compareDocumentPosition(document.getElementById("confirm_accuracy")) & Node.DOCUMENT_POSITION_FOLLOWING)`); order == "0" {
		jo.fail("the declarations come before the answers")
	}
	jo.wantFits()
	jo.shot("check-answers")
	jo.clickAndWait("submit-application")
	jo.wantText("Confirm that the information you have given is accurate and complete", "Confirm that you accept the terms and conditions")
	jo.wantFits()
	jo.shot("declarations-refused")
	jo.do("follow the summary link", chromedp.Click(`#error-summary a[href="#confirm_terms"]`, chromedp.NodeVisible))
	if got := jo.focused(); got != "confirm_terms" {
		jo.fail("the summary link focused %q, want the terms checkbox", got)
	}

	// A colleague sees who will make the declarations, as text.
	jo.open(link + "/collaborators")
	jo.typeInto("email", "sam@northwind.example")
	jo.typeInto("name", "Sam Hale")
	jo.clickAndWait("invite")
	sam := b.privateTab(t, "sam")
	sam.open(linkIn(t, nthMailTo(t, s.data, "sam@northwind.example", 1)))
	sam.signIn(s, "sam@northwind.example", 2)
	sam.wantText("Declarations and sending", "Jo Reed, the primary contact, will make the declarations and send the application")
	if href := sam.eval(`String(document.getElementById("task-send").getAttribute("href"))`); href != "null" {
		sam.fail("the collaborator's last task is a link to %s", href)
	}
	sam.wantFits()
	sam.shot("collaborator-overview")

	// Sent (through the sandbox helper): the confirmation panel and the
	// reference, no invitations.
	s.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/applications/"+id+"/submit", s.key, "")
	jo.open(link)
	jo.wantText("Application sent", "Your reference", onboarding.Reference(id), "What happens next")
	if strings.Contains(jo.text(), "Invite colleagues") {
		jo.fail("the sent application still offers invitations")
	}
	jo.wantFits()
	jo.shot("sent")

	jo.clickAndWait("sign-out")
	jo.wantHeading("You have signed out")
	jo.wantFits()
	jo.shot("signed-out")
}
