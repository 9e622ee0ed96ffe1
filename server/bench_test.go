package server

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"onboard/onboarding"
)

// Benchmarks drive the real router, middleware, Service and Badger (with
// synchronous writes), so write endpoints include an fsync per request.

func benchRequest(b *testing.B, e *env, method, path, body string) {
	b.Helper()
	auth := "Bearer " + e.keys["acme"]
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var r *http.Request
		if body != "" {
			r = httptest.NewRequest(method, path, strings.NewReader(body))
		} else {
			r = httptest.NewRequest(method, path, nil)
		}
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code >= 300 {
			b.Fatalf("%s %s = %d %s", method, path, w.Code, w.Body)
		}
	}
}

func BenchmarkCreateApplication(b *testing.B) {
	e := newEnv(b, envOptions{})
	benchRequest(b, e, "POST", "/api/external/applications",
		`{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`)
}

func BenchmarkGetApplication(b *testing.B) {
	e := newEnv(b, envOptions{})
	id := e.create(b, "acme", "")
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software","business_description":"Coffee roasting and wholesale.","annual_turnover":{"amount":1250000,"currency":"GBP"}}}`); w.Code != http.StatusOK {
		b.Fatal(w.Body)
	}
	benchRequest(b, e, "GET", "/api/external/applications/"+id, "")
}

func BenchmarkListApplications(b *testing.B) {
	for _, n := range []int{100, 2000} {
		b.Run(fmt.Sprintf("%d_applications", n), func(b *testing.B) {
			e := newEnv(b, envOptions{})
			body := `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`
			for i := 0; i < n; i++ {
				e.create(b, "acme", body)
			}
			benchRequest(b, e, "GET", "/api/external/applications?limit=50", "")
		})
	}
}

func BenchmarkPatchApplication(b *testing.B) {
	e := newEnv(b, envOptions{})
	id := e.create(b, "acme", "")
	benchRequest(b, e, "PATCH", "/api/external/applications/"+id,
		`{"fields":{"industry":"software","website":"https://northwind.example","phone":"+44 20 7946 0958","annual_turnover":{"amount":1250000,"currency":"GBP"}}}`)
}

func BenchmarkFieldCatalog(b *testing.B) {
	e := newEnv(b, envOptions{})
	id := e.create(b, "acme", "")
	benchRequest(b, e, "GET", "/api/external/applications/"+id+"/fields", "")
}

func BenchmarkRefreshPreAuth(b *testing.B) {
	e := newEnv(b, envOptions{})
	id := e.create(b, "acme", "")
	benchRequest(b, e, "POST", "/api/external/applications/"+id+"/pre-auth", "")
}

// BenchmarkDownload serves a registry document (about 1 KiB) through a
// signed link: signature check, blob open and streaming.
func BenchmarkDownload(b *testing.B) {
	e := newEnv(b, envOptions{})
	id, _, err := e.blobs.Put(context.Background(), bytes.NewReader(bytes.Repeat([]byte("%PDF-1.4 "), 128)), 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	link := e.svc.RegistryDocumentURL(onboarding.RegistryDocument{BlobID: id, FileName: "10000001-aa-2025-12-18.pdf"})
	path := strings.TrimPrefix(link, "https://onboard.test")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			b.Fatalf("download = %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkGetApplicationWithRegistryDocuments reads an application whose
// three registry documents are fetched: each get signs three fresh links.
func BenchmarkGetApplicationWithRegistryDocuments(b *testing.B) {
	e := newEnv(b, envOptions{jobs: true})
	id := e.create(b, "acme", "")
	e.waitRegistryDocuments(b, id)
	benchRequest(b, e, "GET", "/api/external/applications/"+id, "")
}

// benchDocuments are three company documents and two of the first person's
// (one skipped, so four links are signed per read).
func benchDocuments() []seedDoc {
	pdf := bytes.Repeat([]byte("%PDF-1.4 "), 128)
	return []seedDoc{
		{owner: ownerCompany, field: "certificate_of_incorporation", content: pdf, doc: onboarding.Document{
			FileName: "certificate.pdf", FileType: "application/pdf", UploadedAt: testNow,
			Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonBaselinePassed}},
		{owner: ownerCompany, field: "proof_of_address", content: pdf, doc: onboarding.Document{
			FileName: "utility bill.pdf", FileType: "application/pdf", UploadedAt: testNow,
			Status: onboarding.DocumentForced, UserOverrideReason: "Checked by phone", OverriddenAt: &testNow}},
		{owner: ownerCompany, field: "bank_statement", content: pdf, doc: onboarding.Document{
			FileName: "statement.pdf", FileType: "application/pdf", UploadedAt: testNow,
			Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonValidationPassed}},
		{owner: ownerPerson, index: 0, field: "person_id_document", content: pdf, doc: onboarding.Document{
			FileName: "passport.pdf", FileType: "application/pdf", UploadedAt: testNow,
			Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonBaselinePassed}},
		{owner: ownerPerson, index: 0, field: "person_proof_of_address", doc: onboarding.Document{
			UploadedAt: testNow, Status: onboarding.DocumentSkipped, UserOverrideReason: "Not required", OverriddenAt: &testNow}},
	}
}

// BenchmarkGetApplicationWithDocuments reads an application with three
// company documents and two person documents: each get signs four links.
func BenchmarkGetApplicationWithDocuments(b *testing.B) {
	e := newEnv(b, envOptions{})
	id := e.create(b, "acme", "")
	e.seedDocuments(b, id, benchDocuments())
	benchRequest(b, e, "GET", "/api/external/applications/"+id, "")
}

// BenchmarkListApplicationsWithDocuments lists 50 applications with the
// documents of BenchmarkGetApplicationWithDocuments each.
func BenchmarkListApplicationsWithDocuments(b *testing.B) {
	e := newEnv(b, envOptions{})
	for i := 0; i < 50; i++ {
		e.seedDocuments(b, e.create(b, "acme", ""), benchDocuments())
	}
	benchRequest(b, e, "GET", "/api/external/applications?limit=50", "")
}

// BenchmarkGetDocument signs a one-hour link to a person's document (the
// search runs through the company documents first).
func BenchmarkGetDocument(b *testing.B) {
	e := newEnv(b, envOptions{})
	id := e.create(b, "acme", "")
	docs := e.seedDocuments(b, id, benchDocuments())
	benchRequest(b, e, "GET", "/api/external/applications/"+id+"/documents/"+docs[3].doc.FileID, "")
}

// benchApplicant is a signed-in applicant at a Northwind application whose
// business stage is filled in.
func benchApplicant(b *testing.B) *applicant {
	e := newEnv(b, envOptions{})
	a := e.applicantAt(b, e.primaryLink(b, e.create(b, "acme", "")))
	a.signIn()
	if w := a.post("/s/business", benchBusiness()); w.Code != http.StatusSeeOther {
		b.Fatalf("save business = %d %s", w.Code, w.Body)
	}
	return a
}

func benchBusiness() url.Values {
	return url.Values{
		"business_description":     {"We sell accounting software to small firms."},
		"countries_of_operation":   {"GB", "IE"},
		"annual_turnover.amount":   {"250000"},
		"annual_turnover.currency": {"GBP"},
		"regulated_entity":         {"false"},
		"bank_account_iban":        {"GB82WEST12345698765432"},
	}
}

// benchForm sends the same form request in a loop and checks its status.
func benchForm(b *testing.B, a *applicant, status int, req func() *http.Request) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if w := a.send(req()); w.Code != status {
			b.Fatalf("%d, want %d: %s", w.Code, status, w.Body)
		}
	}
}

// BenchmarkFormOverview renders the overview: session check, what is
// missing per stage, the page.
func BenchmarkFormOverview(b *testing.B) {
	a := benchApplicant(b)
	benchForm(b, a, http.StatusOK, func() *http.Request { return httptest.NewRequest("GET", a.base, nil) })
}

// BenchmarkFormStagePage renders a stage with every kind of control.
func BenchmarkFormStagePage(b *testing.B) {
	a := benchApplicant(b)
	benchForm(b, a, http.StatusOK, func() *http.Request { return httptest.NewRequest("GET", a.base+"/s/business", nil) })
}

// BenchmarkFormStageSave saves a stage: CSRF, binding, PATCH's validation
// and a synchronous write.
func BenchmarkFormStageSave(b *testing.B) {
	a := benchApplicant(b)
	form := benchBusiness()
	form.Set("csrf", a.csrf)
	form.Set("action", "save")
	body := form.Encode()
	benchForm(b, a, http.StatusSeeOther, func() *http.Request {
		r := httptest.NewRequest("POST", a.base+"/s/business", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	})
}

// BenchmarkFormReview renders the review page: every answer and what is
// missing.
func BenchmarkFormReview(b *testing.B) {
	a := benchApplicant(b)
	benchForm(b, a, http.StatusOK, func() *http.Request { return httptest.NewRequest("GET", a.base+"/review", nil) })
}

// BenchmarkFormUpload uploads a 256 KiB PDF: streamed into the blob store
// (fsync), sniffed, recorded (fsync), the replaced file deleted.
func BenchmarkFormUpload(b *testing.B) {
	a := benchApplicant(b)
	pdf := append(testPDF(b), bytes.Repeat([]byte("\n% padding\n"), 256<<10/11)...)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", a.csrf)
	_ = mw.WriteField("field", "certificate_of_incorporation")
	fw, _ := mw.CreateFormFile("file", "cert.pdf")
	_, _ = fw.Write(pdf)
	_ = mw.Close()
	raw, ctype := body.Bytes(), mw.FormDataContentType()
	b.SetBytes(int64(len(pdf)))
	benchForm(b, a, http.StatusSeeOther, func() *http.Request {
		r := httptest.NewRequest("POST", a.base+"/documents", bytes.NewReader(raw))
		r.Header.Set("Content-Type", ctype)
		return r
	})
}
