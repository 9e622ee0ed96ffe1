package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestFormReviewGaps: the check-answers page tells what is still needed
// from what may stay empty: a required answer or document that is
// missing says so in bold, an optional one is plainly "Not answered" or
// "Not uploaded", and a document the register supplied is shown as
// provided rather than missing.
func TestFormReviewGaps(t *testing.T) {
	e := newEnv(t, envOptions{jobs: true})
	id := e.create(t, "acme", `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`)
	e.waitRegistryDocuments(t, id)
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	w := a.get("/review")
	wantPage(t, w, http.StatusOK,
		`<dt>Industry</dt><dd><strong>Not answered — required</strong></dd>`,
		`<dt>Website</dt><dd><span class="empty">Not answered</span></dd>`,
		`<dt>Certificate of incorporation</dt><dd>Provided by Companies House: 10000001-newinc-2018-04-16.pdf</dd>`,
		`<dt>Proof of business address</dt><dd><strong>Not uploaded — required</strong></dd>`,
		`<dt>Business bank statement</dt><dd><span class="empty">Not uploaded</span></dd>`)
	if strings.Contains(w.Body.String(), `Certificate of incorporation</dt><dd><strong>`) {
		t.Error("the register's certificate is reported missing")
	}
	// The register's holdings say where they come from; their pages refuse
	// changes, so there is no Change link to them.
	wantPage(t, w, http.StatusOK, "owns between 75% and 100% of NORTHWIND TRADING LIMITED, directly\nFrom the company register</dd>")
	if strings.Contains(w.Body.String(), a.base+"/ownership/") {
		t.Error("a register holding offers a Change link")
	}
}
