package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

// The hosts of the Companies House Document API chain.
const (
	frontendDocHost = "frontend-doc-api.company-information.service.gov.uk"
	documentAPIHost = "document-api.company-information.service.gov.uk"
	s3Host          = "document-api-images-prod.s3.eu-west-2.amazonaws.com"
	// s3Query is the frozen, redacted pre-signed query of the recordings.
	s3Query = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=REDACTED"
)

func metadataLink(docID string) string { return "https://" + frontendDocHost + "/document/" + docID }

// sandboxFilings are the filings of the sandbox companies, as their
// filing-history recordings list them (newest first).
func sandboxFilings() map[string][]onboarding.Filing {
	return map[string][]onboarding.Filing{
		"10000001": {
			{Ref: "CtRVUk2gUl6TrEOIDPEt8bRj", DocumentType: "confirmation_statement", FilingDate: "2026-04-20",
				FileName: "10000001-cs01-2026-04-20.pdf", Document: metadataLink("NwCs01Doc10000001")},
			{Ref: "mNR3eUesilOefXG8DsVMW6Wi", DocumentType: "annual_accounts", FilingDate: "2025-12-18",
				FileName: "10000001-aa-2025-12-18.pdf", Document: metadataLink("NwAaDoc10000001")},
			{Ref: "PncEEesZ8cMYlm7PdWlDKAuq", DocumentType: "certificate_of_incorporation", FilingDate: "2018-04-16",
				FileName: "10000001-newinc-2018-04-16.pdf", Document: metadataLink("NwIncDoc10000001")},
		},
		"10000002": {
			{Ref: "Mygx7ofdJ1wrUyeAtlVb1yCc", DocumentType: "annual_accounts", FilingDate: "2025-09-24",
				FileName: "10000002-aa-2025-09-24.pdf", Document: metadataLink("BbAaDoc10000002")},
			{Ref: "AL1UFkOQWYDMdyisHla3mxMO", DocumentType: "confirmation_statement", FilingDate: "2025-09-10",
				FileName: "10000002-cs01-2025-09-10.pdf", Document: metadataLink("BbCs01Doc10000002")},
			{Ref: "nkmw78SKGJZU7pBuziphY5KR", DocumentType: "certificate_of_incorporation", FilingDate: "2012-09-03",
				FileName: "10000002-newinc-2012-09-03.pdf", Document: metadataLink("BbIncDoc10000002")},
		},
	}
}

func TestFilingsFixtures(t *testing.T) {
	t.Parallel()
	filings := sandboxFilings()
	tests := []struct {
		country, number string
		want            outcome[[]onboarding.Filing]
		requests        int
	}{
		{"GB", "10000001", outcome[[]onboarding.Filing]{Value: filings["10000001"]}, 1},
		{"GB", "1000 0001", outcome[[]onboarding.Filing]{Value: filings["10000001"]}, 1},
		{"GB", "10000002", outcome[[]onboarding.Filing]{Value: filings["10000002"]}, 1},
		{"GB", "SC100007", outcome[[]onboarding.Filing]{Err: onboarding.ErrRegistryFailed}, 1},
		{"GB", "10000008", outcome[[]onboarding.Filing]{}, 1},
		{"IE", "100001", outcome[[]onboarding.Filing]{}, 0},
		{"GB", "SC-1", outcome[[]onboarding.Filing]{Err: onboarding.ErrCompanyNumberMalformed("SC-1", ukRegistry)}, 0},
		{"FR", "552100554", outcome[[]onboarding.Filing]{Other: `registry: no company registry for country "FR"`}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.country+"_"+tt.number, func(t *testing.T) {
			t.Parallel()
			r, log := newLoggedRegistry(t, sandbox(), Options{})
			got, err := r.Filings(context.Background(), tt.country, tt.number)
			if diff := cmp.Diff(outcomeOf(got, err), tt.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Filings(%q, %q) mismatch (-got +want):\n%s", tt.country, tt.number, diff)
			}
			if n := len(log.sent()); n != tt.requests {
				t.Errorf("Filings(%q, %q) sent %d requests, want %d", tt.country, tt.number, n, tt.requests)
			}
		})
	}

	r := newFixtureRegistry(t, sandbox())
	if got, err := r.Filings(context.Background(), "IE", "100001"); got != nil || err != nil {
		t.Errorf("Filings(IE 100001) = %#v, %v; want nil, nil", got, err)
	}
	_, err := r.Filings(context.Background(), "GB", "SC100007")
	if !errors.Is(err, onboarding.ErrRegistryFailed) || !strings.Contains(err.Error(), "status 500") {
		t.Errorf("Filings(GB SC100007) = %v; want ErrRegistryFailed with the status for the logs", err)
	}
}

// filingItem is a filing-history item for recordings built by the tests.
func filingItem(id, category, formType, date, metadata string) map[string]any {
	item := map[string]any{"transaction_id": id, "category": category, "type": formType, "date": date,
		"description": "some-description", "links": map[string]any{"self": "/company/10000001/filing-history/" + id}}
	if metadata != "" {
		item["links"].(map[string]any)["document_metadata"] = metadata
	}
	return item
}

func filingHistory(t *testing.T, start, total int, items ...map[string]any) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{"kind": "filing-history", "items_per_page": 100, "start_index": start,
		"total_count": total, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return recordingJSON(t, "GET", chHost, "/company/10000001/filing-history",
		fmt.Sprintf("items_per_page=100&start_index=%d", start), recordedResponse{Status: 200, Body: body})
}

func TestFilingsAnswers(t *testing.T) {
	t.Parallel()
	// Page one: 100 items, of which only some have a document; page two: one more.
	page1 := make([]map[string]any, 0, 100)
	page1 = append(page1,
		filingItem("T1", "confirmation-statement", "CS01", "2026-04-20T00:00:00Z", metadataLink("D1")),
		filingItem("T2", "officers", "AP01", "2026-01-02", ""), // no image
		filingItem("", "accounts", "AA", "2025-12-18", metadataLink("D3")),
		filingItem("T4", "persons-with-significant-control", "PSC01", "", metadataLink("D4")),
		filingItem("T5", "change-of-name", "NM01", "not a date", metadataLink("D5")),
	)
	for len(page1) < 100 {
		page1 = append(page1, filingItem(fmt.Sprintf("X%d", len(page1)), "address", "AD01", "2020-01-01", ""))
	}
	fsys := fstest.MapFS{
		"p1.json": {Data: filingHistory(t, 0, 101, page1...)},
		"p2.json": {Data: filingHistory(t, 100, 101, filingItem("T101", "incorporation", "NEWINC", "2018-04-16", metadataLink("D101")))},
	}
	r, log := newLoggedRegistry(t, fsys, Options{})
	got, err := r.Filings(context.Background(), "GB", "10000001")
	if err != nil {
		t.Fatal(err)
	}
	want := []onboarding.Filing{
		{Ref: "T1", DocumentType: "confirmation_statement", FilingDate: "2026-04-20", FileName: "10000001-cs01-2026-04-20.pdf", Document: metadataLink("D1")},
		{Ref: "T4", DocumentType: "psc_notice", FileName: "10000001-psc01.pdf", Document: metadataLink("D4")},
		{Ref: "T5", DocumentType: "change_of_name", FileName: "10000001-nm01.pdf", Document: metadataLink("D5")},
		{Ref: "T101", DocumentType: "certificate_of_incorporation", FilingDate: "2018-04-16", FileName: "10000001-newinc-2018-04-16.pdf", Document: metadataLink("D101")},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Filings mismatch (-got +want):\n%s", diff)
	}
	if n := len(log.sent()); n != 2 {
		t.Errorf("Filings sent %d requests, want 2 pages", n)
	}

	for name, resp := range map[string]recordedResponse{
		"404":        {Status: 404, Body: json.RawMessage(`{"errors":[{"error":"filing-history-not-found"}]}`)},
		"empty list": {Status: 200, Body: json.RawMessage(`{"items":[],"total_count":0}`)},
		"no items":   {Status: 200, Body: json.RawMessage(`{"filing_history_status":"filing-history-not-available-limited-partnership-from-2014"}`)},
	} {
		r := newFixtureRegistry(t, fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", chHost, "/company/10000001/filing-history",
			"items_per_page=100&start_index=0", resp)}})
		if got, err := r.Filings(context.Background(), "GB", "10000001"); len(got) != 0 || err != nil {
			t.Errorf("%s: Filings = %+v, %v; want none, no error", name, got, err)
		}
	}
	for name, tc := range map[string]struct {
		resp recordedResponse
		want *onboarding.Error
	}{
		"invalid JSON": {recordedResponse{Status: 200, BodyText: ptr("{")}, onboarding.ErrRegistryFailed},
		"wrong shape":  {recordedResponse{Status: 200, Body: json.RawMessage(`{"items":[{"transaction_id":7}]}`)}, onboarding.ErrRegistryFailed},
		"503":          {recordedResponse{Status: 503}, onboarding.ErrRegistryUnavailable(ukRegistry)},
		"401":          {recordedResponse{Status: 401, Body: json.RawMessage(`{"error":"Invalid Authorization"}`)}, onboarding.ErrRegistryFailed},
	} {
		r := newFixtureRegistry(t, fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", chHost, "/company/10000001/filing-history",
			"items_per_page=100&start_index=0", tc.resp)}})
		_, err := r.Filings(context.Background(), "GB", "10000001")
		if diff := cmp.Diff(onboarding.AsError(err), tc.want); diff != "" {
			t.Errorf("%s: Filings error mismatch (-got +want):\n%s", name, diff)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestDocumentType(t *testing.T) {
	t.Parallel()
	tests := []struct{ category, formType, want string }{
		{"incorporation", "NEWINC", "certificate_of_incorporation"},
		{"", "NEWINC", "certificate_of_incorporation"},
		{"incorporation", "IN01", "certificate_of_incorporation"},
		{"incorporation", "LLIN01", "certificate_of_incorporation"},
		{"incorporation", "", "certificate_of_incorporation"},
		{"accounts", "AA", "annual_accounts"},
		{"", "aa", "annual_accounts"},
		{"confirmation-statement", "CS01", "confirmation_statement"},
		{"annual-return", "AR01", "confirmation_statement"},
		{"annual-return", "363a", "confirmation_statement"},
		{"persons-with-significant-control", "PSC01", "psc_notice"},
		{" Persons-With-Significant-Control ", "PSC07", "psc_notice"},
		{"change-of-name", "NM01", "change_of_name"},
		{"change-of-constitution", "CC04", "change_of_constitution"},
		{"officers", "AP01", "officers"},
		{"gazette", "GAZ1", "gazette"},
		{"", "", "other"},
		{"  ", "XX99", "other"},
	}
	for _, tt := range tests {
		if got := documentType(tt.category, tt.formType); got != tt.want {
			t.Errorf("documentType(%q, %q) = %q, want %q", tt.category, tt.formType, got, tt.want)
		}
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	tests := []struct{ number, formType, date, want string }{
		{"10000001", "CS01", "2026-04-20", "10000001-cs01-2026-04-20.pdf"},
		{"SC100007", "NEWINC", "2015-06-22", "SC100007-newinc-2015-06-22.pdf"},
		{"10000001", "AA", "", "10000001-aa.pdf"},
		{"10000001", "", "2026-04-20", "10000001-2026-04-20.pdf"},
		{"10000001", "", "", "10000001.pdf"},
		{"10000001", "../../etc/passwd", "2026-04-20", "10000001-etcpasswd-2026-04-20.pdf"},
		{"10000001", `AA"; filename=x.exe`, "", "10000001-aafilenamexexe.pdf"},
		{"10000001", "CS01\r\nX-Evil: 1", "2026/04/20", "10000001-cs01x-evil1-20260420.pdf"},
		{"10000001", "ÀÉ", "", "10000001.pdf"},
		{"10000001", "SH 01", "2026-04-20", "10000001-sh01-2026-04-20.pdf"},
	}
	for _, tt := range tests {
		got := fileName(tt.number, tt.formType, tt.date)
		if got != tt.want {
			t.Errorf("fileName(%q, %q, %q) = %q, want %q", tt.number, tt.formType, tt.date, got, tt.want)
		}
		if strings.ContainsAny(got, "/\\\"\r\n ;") || !strings.HasSuffix(got, ".pdf") {
			t.Errorf("fileName(%q, %q, %q) = %q is not a safe PDF file name", tt.number, tt.formType, tt.date, got)
		}
	}
}

// readFiling opens f and reads it all.
func readFiling(ctx context.Context, r *Registry, f onboarding.Filing) (data []byte, openErr, readErr error) {
	rc, err := r.OpenFiling(ctx, "GB", f)
	if err != nil {
		return nil, err, nil
	}
	defer rc.Close()
	data, err = io.ReadAll(rc)
	return data, nil, err
}

func TestOpenFilingFixtures(t *testing.T) {
	t.Parallel()
	r := newFixtureRegistry(t, sandbox())
	filings := sandboxFilings()
	for _, f := range append(filings["10000001"], filings["10000002"][:2]...) {
		t.Run(f.FileName, func(t *testing.T) {
			t.Parallel()
			docID := f.Document[strings.LastIndex(f.Document, "/")+1:]
			want, err := os.ReadFile("../testdata/registry/companies-house/documents/" + docID + ".pdf")
			if err != nil {
				t.Fatal(err)
			}
			got, openErr, readErr := readFiling(context.Background(), r, f)
			if openErr != nil || readErr != nil {
				t.Fatalf("OpenFiling(%s): open %v, read %v", docID, openErr, readErr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("OpenFiling(%s) read %d bytes that differ from %s.pdf (%d bytes)", docID, len(got), docID, len(want))
			}
		})
	}

	// S3 refuses BbIncDoc10000002 with 403 AccessDenied.
	_, openErr, _ := readFiling(context.Background(), r, filings["10000002"][2])
	if diff := cmp.Diff(onboarding.AsError(openErr), onboarding.ErrRegistryFailed); diff != "" {
		t.Errorf("OpenFiling(BbIncDoc10000002) error mismatch (-got +want):\n%s", diff)
	}
	if openErr == nil || !strings.Contains(openErr.Error(), "status 403") || !strings.Contains(openErr.Error(), s3Host) {
		t.Errorf("OpenFiling(BbIncDoc10000002) error %q; want the status and the host for the logs", openErr)
	}
	if openErr != nil && strings.Contains(openErr.Error(), "X-Amz") {
		t.Errorf("OpenFiling(BbIncDoc10000002) error %q shows the pre-signed query", openErr)
	}
}

// TestOpenFilingRequests checks the Document API chain: credentials and
// JSON for the metadata, credentials and PDF for the content, and the
// pre-signed storage address fetched without credentials.
func TestOpenFilingRequests(t *testing.T) {
	t.Parallel()
	r, log := newLoggedRegistry(t, sandbox(), Options{CompaniesHouseAPIKey: "my_api_key"})
	if _, openErr, readErr := readFiling(context.Background(), r, sandboxFilings()["10000001"][0]); openErr != nil || readErr != nil {
		t.Fatalf("OpenFiling: open %v, read %v", openErr, readErr)
	}
	auth := []string{"Basic bXlfYXBpX2tleTo="}
	want := []sentRequest{
		{Host: frontendDocHost, Path: "/document/NwCs01Doc10000001", Accept: "application/json", Auth: auth},
		{Host: documentAPIHost, Path: "/document/NwCs01Doc10000001/content", Accept: "application/pdf", Auth: auth},
		{Host: s3Host, Path: "/docs/NwCs01Doc10000001/application-pdf", Query: s3Query, Accept: "application/pdf"},
	}
	if diff := cmp.Diff(log.sent(), want); diff != "" {
		t.Errorf("requests mismatch (-got +want):\n%s", diff)
	}
}

// TestOpenFilingUsesTheLimit checks that the metadata and content requests
// take the credential's slots and the storage request, which carries no
// credentials, does not.
func TestOpenFilingUsesTheLimit(t *testing.T) {
	t.Parallel()
	r, log := newLoggedRegistry(t, sandbox(), Options{CompaniesHouseLimit: Limit{Requests: 2, Per: time.Minute}})
	f := sandboxFilings()["10000001"][1]
	if _, openErr, readErr := readFiling(context.Background(), r, f); openErr != nil || readErr != nil {
		t.Fatalf("OpenFiling: open %v, read %v", openErr, readErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, openErr, _ := readFiling(ctx, r, f)
	if diff := cmp.Diff(onboarding.AsError(openErr), onboarding.ErrRegistryUnavailable(ukRegistry)); diff != "" {
		t.Errorf("second OpenFiling error mismatch (-got +want):\n%s", diff)
	}
	if elapsed := time.Since(start); elapsed > 100*time.Millisecond {
		t.Errorf("second OpenFiling gave up after %v; want at once", elapsed)
	}
	if n := len(log.sent()); n != 3 {
		t.Errorf("sent %d requests, want the 3 of the first download", n)
	}
}

func TestOpenFilingRefusesForeignLinks(t *testing.T) {
	t.Parallel()
	links := []string{
		"https://evil.example/document/x",
		"https://company-information.service.gov.uk.evil.example/document/x",
		"https://evilcompany-information.service.gov.uk/document/x",
		"https://frontend-doc-api.company-information.service.gov.uk@evil.example/document/x",
		"https://user:pw@frontend-doc-api.company-information.service.gov.uk/document/x",
		"ftp://frontend-doc-api.company-information.service.gov.uk/document/x",
		"//frontend-doc-api.company-information.service.gov.uk/document/x",
		"/document/x",
		"document/x",
		"",
		"https://frontend-doc-api.company-information.service.gov.uk/%zz",
	}
	for _, link := range links {
		r, log := newLoggedRegistry(t, sandbox(), Options{CompaniesHouseAPIKey: "my_api_key"})
		rc, err := r.OpenFiling(context.Background(), "GB", onboarding.Filing{Document: link})
		if rc != nil {
			rc.Close()
		}
		if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryFailed); diff != "" {
			t.Errorf("OpenFiling(%q) error mismatch (-got +want):\n%s", link, diff)
		}
		if sent := log.sent(); len(sent) != 0 {
			t.Errorf("OpenFiling(%q) sent requests: %+v", link, sent)
		}
	}
}

// docResponse builds a response to req.
func docResponse(req *http.Request, status int, header http.Header, body io.Reader, length int64) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	if body == nil {
		body = http.NoBody
	}
	return &http.Response{Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(body), ContentLength: length, Request: req}
}

const testPDF = "%PDF-1.4\n1 0 obj << >> endobj\n%%EOF\n"

// docChain answers the Document API chain of document D: meta is the
// metadata body, content answers the content request (default: 302 to
// S3), s3 answers the storage request (default: testPDF).
type docChain struct {
	meta    string
	content func(*http.Request) *http.Response
	s3      func(*http.Request) *http.Response
}

func (c docChain) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.URL.Host == frontendDocHost && req.URL.Path == "/document/D":
		meta := c.meta
		if meta == "" {
			meta = `{"links":{"document":"https://` + documentAPIHost + `/document/D/content"},"resources":{"application/pdf":{"content_length":36}}}`
		}
		return docResponse(req, 200, http.Header{"Content-Type": {"application/json"}}, strings.NewReader(meta), int64(len(meta))), nil
	case (req.URL.Host == documentAPIHost || req.URL.Host == frontendDocHost) && req.URL.Path == "/document/D/content":
		if c.content != nil {
			return c.content(req), nil
		}
		return docResponse(req, 302, http.Header{"Location": {"https://" + s3Host + "/docs/D/application-pdf?" + s3Query}}, nil, 0), nil
	case req.URL.Host == s3Host:
		if c.s3 != nil {
			return c.s3(req), nil
		}
		return docResponse(req, 200, http.Header{"Content-Type": {"application/pdf"}}, strings.NewReader(testPDF), int64(len(testPDF))), nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoRecording, req.URL)
}

// repeatReader yields prefix and then n-len(prefix) bytes of filler.
type repeatReader struct {
	left   int64
	prefix []byte
	fill   []byte
}

func newRepeatReader(prefix string, n int64) *repeatReader {
	return &repeatReader{left: n, prefix: []byte(prefix), fill: bytes.Repeat([]byte("0123456789abcdef\n"), 4096)}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	var n int
	if len(r.prefix) > 0 {
		n = copy(p, r.prefix)
		r.prefix = r.prefix[n:]
	} else {
		n = copy(p, r.fill)
	}
	r.left -= int64(n)
	return n, nil
}

// failingReader yields data and then fails with err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestOpenFilingAnswers(t *testing.T) {
	t.Parallel()
	s3 := func(status int, contentType, body string) func(*http.Request) *http.Response {
		return func(req *http.Request) *http.Response {
			return docResponse(req, status, http.Header{"Content-Type": {contentType}}, strings.NewReader(body), int64(len(body)))
		}
	}
	failed, unavailable := onboarding.ErrRegistryFailed, onboarding.ErrRegistryUnavailable(ukRegistry)
	tests := []struct {
		name     string
		chain    docChain
		openErr  *onboarding.Error
		readErr  *onboarding.Error
		wantLen  int64 // bytes read when both succeed
		requests []string
	}{
		{name: "PDF", chain: docChain{}, wantLen: int64(len(testPDF)),
			requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "content answers the PDF itself", chain: docChain{content: s3(200, "application/pdf", testPDF)},
			wantLen: int64(len(testPDF)), requests: []string{frontendDocHost, documentAPIHost}},
		// The content is then the metadata address + /content.
		{name: "metadata without a document link", chain: docChain{meta: `{"resources":{"application/pdf":{"content_length":36}}}`},
			wantLen: int64(len(testPDF)), requests: []string{frontendDocHost, frontendDocHost, s3Host}},
		{name: "metadata without resources", chain: docChain{meta: `{"links":{"document":"https://` + documentAPIHost + `/document/D/content"}}`},
			wantLen: int64(len(testPDF)), requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "HTML instead of a PDF", chain: docChain{s3: s3(200, "text/html", "<html><body>Please sign in</body></html>")},
			openErr: failed, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "empty body", chain: docChain{s3: s3(200, "application/pdf", "")},
			openErr: failed, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "truncated signature", chain: docChain{s3: s3(200, "application/pdf", "%PDF")},
			openErr: failed, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "oversize Content-Length", chain: docChain{s3: func(req *http.Request) *http.Response {
			return docResponse(req, 200, http.Header{"Content-Type": {"application/pdf"}}, strings.NewReader(testPDF), maxDocument+1)
		}}, openErr: failed, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "streamed past the limit", chain: docChain{s3: func(req *http.Request) *http.Response {
			return docResponse(req, 200, nil, newRepeatReader(testPDF, maxDocument+1), -1)
		}}, readErr: failed, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "streamed exactly the limit", chain: docChain{s3: func(req *http.Request) *http.Response {
			return docResponse(req, 200, nil, newRepeatReader(testPDF, maxDocument), -1)
		}}, wantLen: maxDocument, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "connection dropped", chain: docChain{s3: func(req *http.Request) *http.Response {
			return docResponse(req, 200, nil, &failingReader{data: []byte(testPDF[:12]), err: io.ErrUnexpectedEOF}, -1)
		}}, readErr: unavailable, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "connection dropped before the signature", chain: docChain{s3: func(req *http.Request) *http.Response {
			return docResponse(req, 200, nil, &failingReader{data: []byte("%P"), err: io.ErrUnexpectedEOF}, -1)
		}}, openErr: unavailable, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "S3 403", chain: docChain{s3: s3(403, "application/xml", "<Error><Code>AccessDenied</Code></Error>")},
			openErr: failed, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "S3 503", chain: docChain{s3: s3(503, "application/xml", "<Error><Code>SlowDown</Code></Error>")},
			openErr: unavailable, requests: []string{frontendDocHost, documentAPIHost, s3Host}},
		{name: "no PDF resource", chain: docChain{meta: `{"links":{"document":"https://` + documentAPIHost + `/document/D/content"},"resources":{"application/xhtml+xml":{"content_length":9}}}`},
			openErr: failed, requests: []string{frontendDocHost}},
		{name: "metadata not JSON", chain: docChain{meta: `<html>`}, openErr: failed, requests: []string{frontendDocHost}},
		{name: "content link on a foreign host", chain: docChain{meta: `{"links":{"document":"https://evil.example/document/D/content"}}`},
			openErr: failed, requests: []string{frontendDocHost}},
		{name: "content 404", chain: docChain{content: s3(404, "application/json", `{"error":"not found"}`)},
			openErr: failed, requests: []string{frontendDocHost, documentAPIHost}},
		{name: "content 429", chain: docChain{content: s3(429, "application/json", "")},
			openErr: unavailable, requests: []string{frontendDocHost, documentAPIHost}},
		{name: "redirect to ftp", chain: docChain{content: func(req *http.Request) *http.Response {
			return docResponse(req, 302, http.Header{"Location": {"ftp://" + s3Host + "/docs/D"}}, nil, 0)
		}}, openErr: failed, requests: []string{frontendDocHost, documentAPIHost}},
		{name: "redirect without a location", chain: docChain{content: func(req *http.Request) *http.Response {
			return docResponse(req, 302, nil, nil, 0)
		}}, openErr: failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lt := &loggingTransport{next: tt.chain}
			r, err := New(Options{Mode: ModeFixtures, Transport: lt, CompaniesHouseAPIKey: "my_api_key"})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := r.OpenFiling(context.Background(), "GB", onboarding.Filing{Document: "https://" + frontendDocHost + "/document/D"})
			var n int64
			var readErr error
			if err == nil {
				n, readErr = io.Copy(io.Discard, rc)
				if cerr := rc.Close(); cerr != nil {
					t.Errorf("Close: %v", cerr)
				}
			}
			if diff := cmp.Diff(onboarding.AsError(err), tt.openErr); diff != "" {
				t.Errorf("OpenFiling error mismatch (-got +want):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(onboarding.AsError(readErr), tt.readErr); diff != "" {
				t.Errorf("read error mismatch (-got +want):\n%s\nerror: %v", diff, readErr)
			}
			if err == nil && readErr == nil && n != tt.wantLen {
				t.Errorf("read %d bytes, want %d", n, tt.wantLen)
			}
			var hosts []string
			for _, s := range lt.sent() {
				hosts = append(hosts, s.Host)
				if s.Host == s3Host && s.Auth != nil {
					t.Errorf("storage request carried Authorization %q", s.Auth)
				}
			}
			if tt.requests != nil {
				if diff := cmp.Diff(hosts, tt.requests); diff != "" {
					t.Errorf("requests mismatch (-got +want):\n%s", diff)
				}
			}
		})
	}
}
