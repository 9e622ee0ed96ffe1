package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// recordingJSON encodes a recording file the way the testdata files are written.
func recordingJSON(t *testing.T, method, host, urlPath, query string, resp recordedResponse) []byte {
	t.Helper()
	b, err := json.Marshal(recordingFile{
		Request:  recordedRequest{Method: method, Host: host, Path: urlPath, Query: query},
		Response: resp,
	})
	if err != nil {
		t.Fatalf("encoding recording: %v", err)
	}
	return b
}

// newTestFixtureTransport loads fsys or fails the test.
func newTestFixtureTransport(t *testing.T, fsys fs.FS) *FixtureTransport {
	t.Helper()
	ft, err := NewFixtureTransport(fsys)
	if err != nil {
		t.Fatalf("NewFixtureTransport: %v", err)
	}
	return ft
}

// fetched is the part of a response the transport tests compare.
type fetched struct {
	Status   int
	Location string
	Body     string
}

// fetch sends GET rawURL through a client like the adapters' own.
func fetch(t *testing.T, rt http.RoundTripper, rawURL string) (fetched, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatalf("NewRequest(%q): %v", rawURL, err)
	}
	req.SetBasicAuth("secret-key", "")
	resp, err := newHTTPClient(rt).Do(req)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", rawURL, err)
	}
	return fetched{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: string(body)}, nil
}

func TestFixtureTransport(t *testing.T) {
	t.Parallel()
	text := func(s string) recordedResponse { return recordedResponse{Status: 200, BodyText: &s} }
	pdf := []byte("%PDF-1.4\n\x00\xff\xfe binary \x80\x81\n%%EOF\n")
	const ch = "api.company-information.service.gov.uk"
	const doc = "document-api.company-information.service.gov.uk"
	fsys := fstest.MapFS{
		"ch/exact.json":    {Data: recordingJSON(t, "GET", ch, "/company/10000001", "", text("exact"))},
		"ch/fallback.json": {Data: recordingJSON(t, "GET", ch, "/company/{n}", "", text("fallback"))},
		"ch/sub.json":      {Data: recordingJSON(t, "GET", ch, "/company/{n}/officers", "", text("officers fallback"))},
		"ch/sub-any.json":  {Data: recordingJSON(t, "GET", ch, "/company/{n}/{sub}", "", text("any sub-resource"))},
		"ch/search.json": {Data: recordingJSON(t, "GET", ch, "/search/companies", "q=north&items_per_page=20&start_index=0",
			text("search"))},
		"ch/search-any.json": {Data: recordingJSON(t, "GET", ch, "/search/companies", "q={q}&items_per_page=20&start_index=0",
			text("no results"))},
		"doc/content.json": {Data: recordingJSON(t, "GET", doc, "/document/DocIdAa/content", "", recordedResponse{
			Status:  302,
			Headers: map[string]string{"Location": "https://s3.example.invalid/docs/DocIdAa/application-pdf?X-Amz-Signature=REDACTED", "Content-Length": "0"},
		})},
		"doc/pdf.json": {Data: recordingJSON(t, "GET", "s3.example.invalid", "/docs/DocIdAa/application-pdf",
			"X-Amz-Signature=REDACTED", recordedResponse{Status: 200, Headers: map[string]string{"Content-Type": "application/pdf"}, BodyFile: "DocIdAa.pdf"})},
		"doc/DocIdAa.pdf": {Data: pdf},
		"README.md":       {Data: []byte("not a recording")},
	}
	ft := newTestFixtureTransport(t, fsys)

	tests := []struct {
		url  string
		want fetched
	}{
		{"https://" + ch + "/company/10000001", fetched{Status: 200, Body: "exact"}},
		{"https://" + ch + ":443/company/10000001", fetched{Status: 200, Body: "exact"}},
		{"https://API.Company-Information.Service.GOV.UK/company/10000001", fetched{Status: 200, Body: "exact"}},
		{"https://" + ch + "/company/99999999", fetched{Status: 200, Body: "fallback"}},
		{"https://" + ch + "/company/10000001/officers", fetched{Status: 200, Body: "officers fallback"}},
		{"https://" + ch + "/company/10000001/filing-history", fetched{Status: 200, Body: "any sub-resource"}},
		{"https://" + ch + "/search/companies?start_index=0&q=north&items_per_page=20", fetched{Status: 200, Body: "search"}},
		{"https://" + ch + "/search/companies?start_index=0&q=south&items_per_page=20", fetched{Status: 200, Body: "no results"}},
		{"https://" + ch + "/search/companies?start_index=0&q=n%7Bx%7D&items_per_page=20", fetched{Status: 200, Body: "no results"}},
		{"https://" + doc + "/document/DocIdAa/content",
			fetched{Status: 302, Location: "https://s3.example.invalid/docs/DocIdAa/application-pdf?X-Amz-Signature=REDACTED"}},
		{"https://s3.example.invalid/docs/DocIdAa/application-pdf?X-Amz-Signature=REDACTED", fetched{Status: 200, Body: string(pdf)}},
	}
	for _, tt := range tests {
		got, err := fetch(t, ft, tt.url)
		if err != nil {
			t.Errorf("GET %s: %v", tt.url, err)
			continue
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("GET %s mismatch (-got +want):\n%s", tt.url, diff)
		}
	}

	refused := []string{
		"https://" + ch + "/company",                                                  // no recording for the bare collection
		"https://" + ch + "/company/",                                                 // a wildcard never matches an empty segment
		"https://" + ch + "/company/10000001?extra=1",                                 // the query is part of the match
		"https://" + ch + "/search/companies?q=north",                                 // a partial query is another request
		"https://" + ch + "/search/companies?q=&items_per_page=20&start_index=0",      // a wildcard value is never empty
		"https://" + ch + "/search/companies?q=a&q=b&items_per_page=20&start_index=0", // nor repeated
		"https://" + ch + "/search/companies?q=a&items_per_page=50&start_index=0",     // literal values still match exactly
		"https://" + ch + ":8443/company/10000001",                                    // so is another port
		"https://api.companieshouse.gov.uk/company/10000001",                          // and another host
		"https://" + ch + "/company/10000001/officers/extra",                          // and a deeper path
		"https://s3.example.invalid/docs/DocIdAa/application-pdf?X=1",                 // pre-signed queries are recorded redacted
	}
	for _, u := range refused {
		got, err := fetch(t, ft, u)
		if !errors.Is(err, ErrNoRecording) {
			t.Errorf("GET %s = %+v, %v; want an error wrapping ErrNoRecording", u, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-key") {
			t.Errorf("GET %s error %q shows the credentials", u, err)
		}
	}

	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://"+ch+"/company/10000001", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := ft.RoundTrip(req); !errors.Is(err, ErrNoRecording) {
		t.Errorf("POST /company/10000001 = %v, %v; want an error wrapping ErrNoRecording", resp, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ch+"/company/10000001", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := ft.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip with a cancelled context = %v, %v; want context.Canceled", resp, err)
	}
}

func TestNewFixtureTransportRefuses(t *testing.T) {
	t.Parallel()
	const host = "api.company-information.service.gov.uk"
	okBody := func(body string) recordedResponse { return recordedResponse{Status: 200, Body: json.RawMessage(body)} }
	text := "x"
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string // in the error text
	}{
		{"invalid JSON", fstest.MapFS{"a.json": {Data: []byte(`{"request":`)}}, "a.json"},
		{"unknown member", fstest.MapFS{"a.json": {Data: []byte(`{"request":{"method":"GET","host":"h","path":"/"},"response":{"status":200},"delay":"1s"}`)}}, "unknown field"},
		{"no method", fstest.MapFS{"a.json": {Data: recordingJSON(t, "", host, "/company/1", "", okBody(`{}`))}}, "request.method"},
		{"lower-case method", fstest.MapFS{"a.json": {Data: recordingJSON(t, "get", host, "/company/1", "", okBody(`{}`))}}, "request.method"},
		{"no host", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", "", "/company/1", "", okBody(`{}`))}}, "request.host"},
		{"URL as host", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", "https://"+host, "/company/1", "", okBody(`{}`))}}, "request.host"},
		{"relative path", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "company/1", "", okBody(`{}`))}}, "request.path"},
		{"partial wildcard", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/SC{n}", "", okBody(`{}`))}}, "wildcard"},
		{"empty segment", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company//x", "", okBody(`{}`))}}, "request.path"},
		{"partial query wildcard", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/search/companies", "q=n{q}", okBody(`{}`))}}, "wildcard"},
		{"repeated parameter", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/search/companies", "q=a&q=b", okBody(`{}`))}}, "appears 2 times"},
		{"ambiguous query fallbacks", fstest.MapFS{
			"a.json": {Data: recordingJSON(t, "GET", host, "/search/companies", "q={q}&n=1", okBody(`{}`))},
			"b.json": {Data: recordingJSON(t, "GET", host, "/search/companies", "q=x&n={n}", okBody(`{}`))},
		}, "ambiguous"},
		{"bad query", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "a=%zz", okBody(`{}`))}}, "request.query"},
		{"no status", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "", recordedResponse{})}}, "response.status"},
		{"credentials", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "", recordedResponse{
			Status: 200, Headers: map[string]string{"authorization": "Basic bXlfYXBpX2tleTo="}})}}, "Authorization"},
		{"cookie", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "", recordedResponse{
			Status: 200, Headers: map[string]string{"Set-Cookie": "session=1"}})}}, "Set-Cookie"},
		{"two bodies", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "", recordedResponse{
			Status: 200, Body: json.RawMessage(`{}`), BodyText: &text})}}, "exclusive"},
		{"missing body file", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "", recordedResponse{
			Status: 200, BodyFile: "missing.pdf"})}}, "body_file"},
		{"wrong Content-Length", fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "", recordedResponse{
			Status: 200, Headers: map[string]string{"Content-Length": "3"}, Body: json.RawMessage(`{}`)})}}, "Content-Length"},
		{"duplicate", fstest.MapFS{
			"a.json": {Data: recordingJSON(t, "GET", host, "/company/1", "a=1&b=2", okBody(`{}`))},
			"b.json": {Data: recordingJSON(t, "GET", host, "/company/1", "b=2&a=1", okBody(`{}`))},
		}, "same request"},
		{"ambiguous fallbacks", fstest.MapFS{
			"a.json": {Data: recordingJSON(t, "GET", host, "/company/{n}/officers", "", okBody(`{}`))},
			"b.json": {Data: recordingJSON(t, "GET", host, "/company/10000001/{sub}", "", okBody(`{}`))},
		}, "ambiguous"},
	}
	for _, tt := range tests {
		ft, err := NewFixtureTransport(tt.files)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewFixtureTransport = %v, %v; want an error containing %q", tt.name, ft, err, tt.want)
		}
	}
}

// TestRecordings checks that the shipped recordings load and hold no credentials.
func TestRecordings(t *testing.T) {
	t.Parallel()
	fsys := os.DirFS("../testdata/registry")
	ft := newTestFixtureTransport(t, fsys)
	if got := len(ft.exact) + len(ft.patterns); got < 12 {
		t.Errorf("loaded %d recordings, want at least the 12 of the sandbox", got)
	}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		for _, secret := range []string{"Authorization", "Basic ", "my_api_key", "cro-test-key"} {
			if strings.HasSuffix(name, ".json") && bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s contains %q", name, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
