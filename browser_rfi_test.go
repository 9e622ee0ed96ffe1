package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browserRFIConfig is browserConfig with an RFI agent for acme, asking for
// two documents.
const browserRFIConfig = browserConfig + `
  [[organizations.rfi_agents]]
  id = "0b6a3c1e-7d2f-4a5b-9c8e-1f2a3b4c5d6e"
  name = "KYC refresh"
  default = true
  active = true
  documents = ["certificate_of_incorporation", "proof_of_address"]
`

// rfiBody is create RFI request's body for Northwind, pre-authenticated.
const rfiBody = `{"company_name":"Northwind Trading Ltd","country":"GB","company_number":"10000001","primary_contact":{"name":"Jane Smith","email":"jane@northwind.example"},"pre_authenticated":true}`

// createRFI creates an RFI request through the API and returns create's
// answer.
func (s *browserServer) createRFI(t *testing.T) map[string]any {
	t.Helper()
	return decodeJSON(t, s.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/rfi-requests", s.key, rfiBody))
}

// rfiRequest returns get RFI request's answer.
func (s *browserServer) rfiRequest(t *testing.T, id string) map[string]any {
	t.Helper()
	return decodeJSON(t, s.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/rfi-requests/"+id, s.key, ""))
}

// TestBrowserRFI is an RFI request as its contact lives it on a computer.
func TestBrowserRFI(t *testing.T) { browserRFI(t, 1280, 900, false) }

// TestBrowserRFIPhone is the same on a 360 px wide phone: every page fits
// the screen without sideways scrolling.
func TestBrowserRFIPhone(t *testing.T) { browserRFI(t, 360, 740, true) }

// browserRFI drives an RFI request's page: the partner's pre-authenticated
// link, a refused upload, sending too early, the uploads, sending, and the
// confirmation; then another request's link after it expired.
func browserRFI(t *testing.T, width, height int, mobile bool) {
	b := newBrowser(t, width, height, mobile)
	s := startBrowserServerWith(t, browserRFIConfig)
	created := s.createRFI(t)
	id, link := created["request_id"].(string), created["link"].(string)
	base, _, _ := strings.Cut(link, "?")
	if !strings.HasPrefix(base, s.base+"/r/") || link != base+"?auth_code="+created["pre_auth_code"].(string) {
		t.Fatalf("link = %s", link)
	}
	if m := nthMailTo(t, s.data, "jane@northwind.example", 1); !strings.Contains(m.Body, base) {
		t.Errorf("the email to the contact does not carry the link %s:\n%s", base, m.Body)
	}
	later := s.createRFI(t) // expires below

	// The pre-authenticated link opens the page, and leaves the address bar.
	jane := b.tab(t)
	jane.open(link)
	if w := jane.eval(`String(window.innerWidth)`); w != strconv.Itoa(width) {
		t.Fatalf("viewport is %s px wide, want %d", w, width)
	}
	jane.wantHeading("Send your documents")
	jane.wantText("Acme Payments", "NORTHWIND TRADING LIMITED", "Certificate of incorporation", "Proof of business address", "0 of 2 documents uploaded.")
	if loc := jane.location(); loc != base {
		t.Errorf("address bar = %s, want %s (the code removed)", loc, base)
	}
	jane.wantFits()
	jane.wantLabelled()
	jane.shot("documents")
	if got := s.rfiRequest(t, id)["opened_at"]; got == nil {
		t.Error("opened_at is not set after the page opened")
	}

	// A text file dressed as a PDF is refused with its reason, in the error
	// summary and at the document, whose status takes the focus: the page
	// keeps its place.
	fake := filepath.Join(t.TempDir(), "statement.pdf")
	if err := os.WriteFile(fake, []byte("This is not a PDF, just some notes.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	jane.upload("proof_of_address", fake)
	jane.wantText("The document was not accepted. See the reason below.", "There is a problem",
		"Proof of business address: statement.pdf: The file is not a PDF that can be opened:", "Not accepted")
	if got := jane.focused(); got != "file-proof_of_address-status" {
		t.Errorf("focus after a refused upload is on %q, want the document's status", got)
	}
	jane.wantFits()
	jane.shot("rejected")

	// Sending now lists what is missing.
	jane.clickAndWait("send-documents")
	jane.wantText("Upload every requested document before you send them: 2 are missing.", "Upload the Certificate of incorporation")
	jane.wantFits()
	jane.shot("send-refused")

	// The real uploads; the own file can be viewed.
	pdf := fixturePDF(t)
	jane.upload("certificate_of_incorporation", pdf)
	jane.wantText("The document has been uploaded.", "NwIncDoc10000001.pdf", "1 of 2 documents uploaded.")
	jane.upload("proof_of_address", pdf)
	jane.wantText("The document has been uploaded.", "2 of 2 documents uploaded.")
	if strings.Contains(jane.text(), "There is a problem") {
		jane.fail("errors remain after replacing the refused file")
	}
	want, _ := os.ReadFile(pdf)
	view := jane.eval(`document.querySelector("#doc-certificate_of_incorporation a[target=_blank]").href`)
	if got := download(t, view); !bytes.Equal(got, want) {
		t.Errorf("the view link %s gives %d bytes, not the %d uploaded", view, len(got), len(want))
	}
	jane.wantFits()
	jane.shot("uploaded")

	jane.clickAndWait("send-documents")
	jane.wantHeading("Documents sent")
	jane.wantText("Acme Payments has received your documents", "Certificate of incorporation", "Proof of business address")
	jane.wantFits()
	jane.shot("sent")
	got := s.rfiRequest(t, id)
	if got["status"] != "completed" || got["completed_at"] == nil || len(got["documents"].([]any)) != 2 {
		t.Errorf("after sending: status %v, completed_at %v, documents %v", got["status"], got["completed_at"], got["documents"])
	}

	// The other request's page, open until the partner's sandbox test
	// helper expires the request: then the link says so (410 Gone) and
	// takes nothing.
	laterLink := later["link"].(string)
	laterBase, _, _ := strings.Cut(laterLink, "?")
	jane.open(laterLink)
	jane.wantHeading("Send your documents")
	laterID := later["request_id"].(string)
	today := time.Now().UTC().Format("2 January 2006")
	s.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/rfi-requests/"+laterID+"/expire", s.key, "")
	jane.open(laterBase)
	jane.wantHeading("This link has expired")
	jane.wantText("The request from Acme Payments for documents about NORTHWIND TRADING LIMITED closed on", "contact Acme Payments and ask for a new link")
	if text := jane.text(); !strings.Contains(text, "closed on "+today) && !strings.Contains(text, "closed on "+time.Now().UTC().Format("2 January 2006")) {
		jane.fail("the expiry page does not say the request closed today")
	}
	if n := jane.eval(`String(document.querySelectorAll("input[type=file], button").length)`); n != "0" {
		t.Errorf("the expiry page has %s controls", n)
	}
	jane.wantFits()
	jane.shot("expired")
	resp, err := client.Get(laterBase)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Errorf("the expired link answers %d, want 410", resp.StatusCode)
	}
	if got := s.rfiRequest(t, laterID)["status"]; got != "expired" {
		t.Errorf("status after expiry = %v", got)
	}
}
