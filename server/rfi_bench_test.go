package server

import (
	"bytes"
	"context"
	"testing"

	"onboard/onboarding"
)

// BenchmarkCreateRFIRequest: the body checks, the registry check of a GB
// company (fixtures), the record with its event in one durable commit, and
// the email with its activity entry.
func BenchmarkCreateRFIRequest(b *testing.B) {
	e := newEnv(b, envOptions{})
	benchRequest(b, e, "POST", "/api/external/rfi-requests", rfiBody)
}

// BenchmarkGetRFIRequest reads a request with two documents, each with a
// fresh signed download_url.
func BenchmarkGetRFIRequest(b *testing.B) {
	e := newEnv(b, envOptions{})
	w := e.do("POST", "/api/external/rfi-requests", "acme", `{"company_name":"Northwind Trading Ltd","country":"GB","company_number":"10000001","pre_authenticated":true,"primary_contact":{"name":"Jane Smith","email":"jane@northwind.example"}}`)
	created := decode(b, w)
	v := rfiVisitorOf(b, e, created)
	for _, f := range []string{"bank_statement", "proof_of_address"} {
		if _, err := e.svc.UploadRFIDocument(context.Background(), v, onboarding.Upload{FieldID: f, FileName: f + ".pdf", Type: "application/pdf", Body: bytes.NewReader(testPDF(b))}); err != nil {
			b.Fatal(err)
		}
	}
	benchRequest(b, e, "GET", "/api/external/rfi-requests/"+created["request_id"].(string), "")
}

// BenchmarkListRFIRequests lists 50 of 500 requests.
func BenchmarkListRFIRequests(b *testing.B) {
	e := newEnv(b, envOptions{})
	for range 500 {
		if w := e.do("POST", "/api/external/rfi-requests", "acme", `{"company_name":"Emerald","country":"IE","primary_contact":{"name":"C","email":"c@emerald.example"}}`); w.Code != 201 {
			b.Fatal(w.Body)
		}
	}
	benchRequest(b, e, "GET", "/api/external/rfi-requests?limit=50", "")
}
