package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Secrets the recorder test's requests and responses carry; none may reach
// a recording.
const (
	recAPIKey     = "ch-live-key-SECRET123"
	recCROKey     = "cro-key-SECRET456"
	recAKIA       = "AKIAIOSFODNN7SECRET0"
	recSignature  = "abc"
	recCookie     = "cookieSECRET789"
	recS3Password = "s3PASSWORD"
)

var recFixedNow = func() time.Time { return time.Date(2026, 3, 14, 23, 30, 0, 0, time.UTC) }

// Bodies served by the fake registries.
var (
	recProfileJSON = []byte(`{"company_name":"NORTHWIND TRADING LIMITED","company_number":"10000001",` +
		`"company_status":"active","type":"ltd","note":"a<b & c>d","big":12345678901234567890,` +
		`"links":{"self":"/company/10000001"}}`)
	recOfficersJSON = []byte("{\"items\": [{\"name\": \"DOE, Jane\", \"officer_role\": \"director\"}], \"total_results\": 1}\n")
	recPDF          = []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< >>\nstream\n\x00\xff\xfe\x80\x01\x02\nendstream\n%%EOF\n")
	recBlob         = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	recRateLimited  = []byte("error code: 1015")
)

// The pre-signed S3 URL the Document API redirects to, and what a recording
// holds of it.
const (
	recS3Path       = "/document-api-images-prod/docs/DocIdAa/application-pdf"
	recS3RealQuery  = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + recAKIA + "%2F20260314%2Feu-west-2%2Fs3%2Faws4_request&X-Amz-Date=20260314T233000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=" + recSignature
	recS3Location   = "http://s3user:" + recS3Password + "@s3-eu-west-1.amazonaws.com" + recS3Path + "?" + recS3RealQuery
	recS3Redacted   = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20260314T233000Z&X-Amz-Expires=60&X-Amz-Signature=REDACTED&X-Amz-SignedHeaders=host"
	recS3RedactedLo = "http://s3-eu-west-1.amazonaws.com" + recS3Path + "?" + recS3Redacted
)

// newRecTestServer plays Companies House, its Document API, S3, the CRO and
// an unknown host, telling them apart by Host. hits counts requests.
func newRecTestServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h := w.Header()
		switch r.Host + r.URL.Path {
		case "api.company-information.service.gov.uk/company/10000001":
			if u, _, ok := r.BasicAuth(); !ok || u != recAPIKey {
				http.Error(w, "unauthorised", http.StatusUnauthorized)
				return
			}
			h.Set("Content-Type", "application/json")
			h.Set("X-Ratelimit-Limit", "600")
			h.Set("X-Ratelimit-Remain", "599")
			h.Set("X-Ratelimit-Reset", "1773531000")
			h.Set("X-Ratelimit-Window", "5m")
			h.Set("Set-Cookie", "session="+recCookie+"; Path=/; HttpOnly")
			h.Set("X-Request-Id", "req-0001")
			h.Set("Content-Length", fmt.Sprint(len(recProfileJSON)))
			_, _ = w.Write(recProfileJSON)
		case "api.company-information.service.gov.uk/company/10000001/officers":
			// Streamed: chunked, no Content-Length.
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(recOfficersJSON[:10])
			w.(http.Flusher).Flush()
			_, _ = w.Write(recOfficersJSON[10:])
		case "document-api.company-information.service.gov.uk/document/DocIdAa/content":
			h.Set("Location", recS3Location)
			h.Set("X-Ratelimit-Limit", "600")
			h.Set("X-Ratelimit-Remain", "598")
			w.WriteHeader(http.StatusFound)
		case "s3-eu-west-1.amazonaws.com" + recS3Path:
			if r.URL.Query().Get("X-Amz-Signature") != recSignature {
				http.Error(w, "SignatureDoesNotMatch", http.StatusForbidden)
				return
			}
			h.Set("Content-Type", "application/pdf")
			_, _ = w.Write(recPDF)
		case "services.cro.ie/cws/company/100001/c":
			h.Set("Content-Type", "text/plain; charset=UTF-8")
			h.Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write(recRateLimited)
		case "services.cro.ie/cws/company/100004/c":
			w.WriteHeader(http.StatusNotFound)
		case "example.test:8080/blob/x":
			h.Set("Content-Type", "image/png")
			_, _ = w.Write(recBlob)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// recTestTransport dials srv for every host, so that requests keep the
// registries' host names.
func recTestTransport(t *testing.T, srv *httptest.Server) *http.Transport {
	t.Helper()
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// recExchange is one request of the recorder test and what came back.
type recExchange struct {
	status int
	header http.Header
	body   []byte
}

// recGet sends GET rawURL through rt with a client that does not follow
// redirects (like the adapters'), with Basic credentials when user is set.
func recGet(t *testing.T, rt http.RoundTripper, rawURL, user, pass string) (recExchange, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatalf("NewRequest(%q): %v", rawURL, err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	client := &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return recExchange{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", rawURL, err)
	}
	return recExchange{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

// recCases are the requests of TestRecorderRecordsAndReplays, in order.
var recCases = []struct {
	name       string
	url        string // what the client requests while recording
	user, pass string
	file       string // the recording written
	bodyFile   string // the body file written, if any
	wantBody   []byte
}{
	{
		name: "CH profile", url: "http://" + recAPIKey + ":@api.company-information.service.gov.uk/company/10000001",
		user: recAPIKey, file: "companies-house/company-10000001.json", wantBody: recProfileJSON,
	},
	{
		name: "CH officers, chunked", url: "http://api.company-information.service.gov.uk/company/10000001/officers?start_index=0&items_per_page=35",
		user: recAPIKey, file: "companies-house/company-10000001-officers-" + hash8("items_per_page=35&start_index=0") + ".json",
		wantBody: recOfficersJSON,
	},
	{
		name: "Document API 302", url: "http://document-api.company-information.service.gov.uk/document/DocIdAa/content",
		user: recAPIKey, file: "companies-house/documents/document-DocIdAa-content.json",
	},
	{
		name: "S3 PDF", url: recS3Location,
		file:     "companies-house/documents/document-api-images-prod-docs-DocIdAa-application-pdf-" + hash8(recS3Redacted) + ".json",
		bodyFile: "companies-house/documents/document-api-images-prod-docs-DocIdAa-application-pdf-" + hash8(recS3Redacted) + ".pdf",
		wantBody: recPDF,
	},
	{
		name: "CRO 1015 text", url: "http://services.cro.ie/cws/company/100001/c?format=json",
		user: "someone@example.test", pass: recCROKey,
		file: "cro/cws-company-100001-c-" + hash8("format=json") + ".json", wantBody: recRateLimited,
	},
	{
		name: "CRO 404 empty", url: "http://services.cro.ie/cws/company/100004/c?format=json",
		user: "someone@example.test", pass: recCROKey,
		file: "cro/cws-company-100004-c-" + hash8("format=json") + ".json",
	},
	{
		name: "other host, binary", url: "http://example.test:8080/blob/x",
		file: "example.test_8080/blob-x.json", bodyFile: "example.test_8080/blob-x.bin", wantBody: recBlob,
	},
}

func TestRecorderRecordsAndReplays(t *testing.T) {
	t.Parallel()
	srv, _ := newRecTestServer(t)
	dir := t.TempDir()
	rec := NewRecorder(recTestTransport(t, srv), dir, recFixedNow)

	// Record: the caller gets the live answer untouched.
	live := make([]recExchange, len(recCases))
	for i, c := range recCases {
		got, err := recGet(t, rec, c.url, c.user, c.pass)
		if err != nil {
			t.Fatalf("%s: recording: %v", c.name, err)
		}
		if !bytes.Equal(got.body, c.wantBody) {
			t.Errorf("%s: the caller got body %q, want %q", c.name, got.body, c.wantBody)
		}
		live[i] = got
	}
	if got := live[0].header.Get("Set-Cookie"); !strings.Contains(got, recCookie) {
		t.Errorf("the caller lost the live Set-Cookie header: %q", got)
	}
	if got := live[2].header.Get("Location"); got != recS3Location {
		t.Errorf("the caller got Location %q, want the live one %q", got, recS3Location)
	}
	if live[3].status != http.StatusOK {
		t.Fatalf("S3 answered %d: the recorder did not forward the real pre-signed URL", live[3].status)
	}

	// Files: exactly the expected names, mode 0644, indented.
	var want []string
	for _, c := range recCases {
		want = append(want, filepath.FromSlash(c.file))
		if c.bodyFile != "" {
			want = append(want, filepath.FromSlash(c.bodyFile))
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, rec.Files()); diff != "" {
		t.Errorf("Files() (-want +got):\n%s", diff)
	}
	var onDisk []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		onDisk = append(onDisk, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", rel, info.Mode().Perm())
		}
		for _, c := range rel {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"+string(filepath.Separator), c) {
				t.Errorf("file name %q has %q", rel, c)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, onDisk); diff != "" {
		t.Errorf("files on disk (-want +got):\n%s", diff)
	}

	// No secret, cookie or request header in any file.
	secrets := []string{
		recAPIKey, recCROKey, recAKIA, recSignature, recCookie, recS3Password, "s3user",
		base64.StdEncoding.EncodeToString([]byte(recAPIKey + ":")),
		base64.StdEncoding.EncodeToString([]byte("someone@example.test:" + recCROKey)),
		"Set-Cookie", "Authorization", "X-Request-Id", "Basic",
	}
	for _, name := range onDisk {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) || strings.Contains(name, s) {
				t.Errorf("%s contains %q", name, s)
			}
		}
	}

	// Two recordings in full.
	readRec := func(name string) (recordingFile, []byte) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		var f recordingFile
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return f, data
	}
	redirect, data := readRec(recCases[2].file)
	wantRedirect := recordingFile{
		Comment: "Recorded from document-api.company-information.service.gov.uk/document/DocIdAa/content by onboard registry record on 2026-03-14",
		Request: recordedRequest{Method: "GET", Host: "document-api.company-information.service.gov.uk", Path: "/document/DocIdAa/content"},
		Response: recordedResponse{Status: http.StatusFound, Headers: map[string]string{
			"Content-Length":     "0",
			"Location":           recS3RedactedLo,
			"X-Ratelimit-Limit":  "600",
			"X-Ratelimit-Remain": "598",
		}},
	}
	if diff := cmp.Diff(wantRedirect, redirect); diff != "" {
		t.Errorf("302 recording (-want +got):\n%s", diff)
	}
	if !bytes.HasPrefix(data, []byte("{\n  \"comment\": ")) {
		t.Errorf("recording is not indented by two spaces:\n%s", data)
	}
	profile, _ := readRec(recCases[0].file)
	if profile.Request.Query != "" || profile.Request.Host != "api.company-information.service.gov.uk" {
		t.Errorf("profile request = %+v", profile.Request)
	}
	wantHeaders := map[string]string{
		"Content-Length":     fmt.Sprint(len(profile.Response.Body)),
		"Content-Type":       "application/json",
		"X-Ratelimit-Limit":  "600",
		"X-Ratelimit-Remain": "599",
		"X-Ratelimit-Reset":  "1773531000",
		"X-Ratelimit-Window": "5m",
	}
	if diff := cmp.Diff(wantHeaders, profile.Response.Headers); diff != "" {
		t.Errorf("profile headers (-want +got):\n%s", diff)
	}
	s3, _ := readRec(recCases[3].file)
	if s3.Request.Query != recS3Redacted || s3.Response.BodyFile != filepath.Base(recCases[3].bodyFile) {
		t.Errorf("S3 recording: query %q, body_file %q", s3.Request.Query, s3.Response.BodyFile)
	}
	if text, _ := readRec(recCases[4].file); text.Response.BodyText == nil || *text.Response.BodyText != string(recRateLimited) {
		t.Errorf("CRO 1015 recording has no body_text %q", recRateLimited)
	}
	if empty, _ := readRec(recCases[5].file); empty.Response.Body != nil || empty.Response.BodyText != nil || empty.Response.BodyFile != "" {
		t.Errorf("empty body recorded as %+v", empty.Response)
	}
	if officers, _ := readRec(recCases[1].file); officers.Response.Headers["Content-Length"] != "" {
		t.Errorf("chunked answer recorded with Content-Length %q", officers.Response.Headers["Content-Length"])
	}

	// Replay: the same requests get the same answers from the recordings.
	ft, err := NewFixtureTransport(os.DirFS(dir))
	if err != nil {
		t.Fatalf("NewFixtureTransport(recordings): %v", err)
	}
	for i, c := range recCases {
		rawURL := c.url
		if i == 3 {
			// Follow the replayed redirect, as the adapter does.
			rawURL = recGet1(t, ft, recCases[2].url).header.Get("Location")
			if rawURL != recS3RedactedLo {
				t.Fatalf("replayed Location = %q, want %q", rawURL, recS3RedactedLo)
			}
		}
		got, err := recGet(t, ft, rawURL, c.user, c.pass)
		if err != nil {
			t.Errorf("%s: replay: %v", c.name, err)
			continue
		}
		checkReplay(t, c.name, live[i], got)
	}

	// The live pre-signed URL itself is not recorded; a client that follows
	// redirects itself ends at the PDF.
	if _, err := recGet(t, ft, recS3Location, "", ""); !errors.Is(err, ErrNoRecording) {
		t.Errorf("replaying the unredacted Location: err = %v, want ErrNoRecording", err)
	}
	resp, err := (&http.Client{Transport: ft}).Get(recCases[2].url)
	if err != nil {
		t.Fatalf("following the replayed redirect: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, recPDF) {
		t.Errorf("following the replayed redirect: %d %q", resp.StatusCode, body)
	}
}

// recGet1 is recGet that fails the test on error.
func recGet1(t *testing.T, rt http.RoundTripper, rawURL string) recExchange {
	t.Helper()
	x, err := recGet(t, rt, rawURL, "", "")
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	return x
}

// checkReplay compares a replayed answer with the live one: status, the
// allowlisted headers (Location redacted) and the body, byte for byte except
// for JSON, which the recording re-indents and is compared as JSON.
func checkReplay(t *testing.T, name string, live, got recExchange) {
	t.Helper()
	if got.status != live.status {
		t.Errorf("%s: replayed status %d, live %d", name, got.status, live.status)
	}
	isJSON := len(live.body) > 0 && json.Valid(live.body)
	for _, k := range recordedHeaders {
		want := live.header.Get(k)
		if k == "Location" && want != "" {
			want = recS3RedactedLo
		}
		if g := got.header.Get(k); g != want {
			t.Errorf("%s: replayed %s %q, want %q", name, k, g, want)
		}
	}
	if live.header.Get("Content-Length") != "" {
		want := live.header.Get("Content-Length")
		if isJSON {
			want = fmt.Sprint(len(got.body))
		}
		if g := got.header.Get("Content-Length"); g != want {
			t.Errorf("%s: replayed Content-Length %q, want %q", name, g, want)
		}
	} else if g := got.header.Get("Content-Length"); g != "" {
		t.Errorf("%s: replayed Content-Length %q, live had none", name, g)
	}
	for _, k := range []string{"Set-Cookie", "X-Request-Id"} {
		if g := got.header.Get(k); g != "" {
			t.Errorf("%s: replayed %s %q", name, k, g)
		}
	}
	if isJSON {
		var a, b bytes.Buffer
		if err := json.Compact(&a, live.body); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&b, got.body); err != nil {
			t.Fatalf("%s: replayed body is not JSON: %v", name, err)
		}
		if a.String() != b.String() {
			t.Errorf("%s: replayed JSON %s, live %s", name, b.Bytes(), a.Bytes())
		}
	} else if !bytes.Equal(got.body, live.body) {
		t.Errorf("%s: replayed body %q, live %q", name, got.body, live.body)
	}
}

func TestRedactQuery(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"format=json", "format=json"},
		{"b=2&a=1", "a=1&b=2"},
		{"X-Amz-Signature=abc&X-Amz-Credential=AKIA%2Fx&X-Amz-Security-Token=t&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host",
			"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED&X-Amz-SignedHeaders=host"},
		{"x-amz-signature=abc&x-amz-credential=a", "x-amz-credential=REDACTED&x-amz-signature=REDACTED"},
		{"AWSAccessKeyId=AKIA&Signature=s%2B&Expires=1767225600", "AWSAccessKeyId=REDACTED&Expires=1767225600&Signature=REDACTED"},
		{"key=k&api_key=k&access_token=t&token=t&q=acme", "access_token=REDACTED&api_key=REDACTED&key=REDACTED&q=acme&token=REDACTED"},
		{"KEY=k&Token=t&keys=k&x-amz-meta=m", "KEY=REDACTED&Token=REDACTED&keys=k&x-amz-meta=m"},
	}
	for _, tt := range tests {
		got, err := redactQuery(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("redactQuery(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := redactQuery("a=%zz"); err == nil {
		t.Error("redactQuery(a=%zz) did not fail")
	}
}

func TestRedactLocation(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://user:pw@s3.example.invalid/docs/1?Signature=s&Expires=1", "https://s3.example.invalid/docs/1?Expires=1&Signature=REDACTED"},
		{"https://s3.example.invalid/docs/1", "https://s3.example.invalid/docs/1"},
		{"/company/10000001?key=k", "/company/10000001?key=REDACTED"},
		{"https://x.invalid/a?", "https://x.invalid/a"},
	}
	for _, tt := range tests {
		got, err := redactLocation(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("redactLocation(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"http://x.invalid/%zz", "http://x.invalid/a?b=%zz"} {
		if got, err := redactLocation(bad); err == nil {
			t.Errorf("redactLocation(%q) = %q, want an error", bad, got)
		}
	}
}

func TestRecordingName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		req  recordedRequest
		want string
	}{
		{recordedRequest{Method: "GET", Host: "api.company-information.service.gov.uk", Path: "/company/SC100007"}, "companies-house/company-SC100007.json"},
		{recordedRequest{Method: "GET", Host: "api.company-information.service.gov.uk", Path: "/search/companies", Query: "q=acme"},
			"companies-house/search-companies-" + hash8("q=acme") + ".json"},
		{recordedRequest{Method: "GET", Host: "document-api.company-information.service.gov.uk", Path: "/document/D1"}, "companies-house/documents/document-D1.json"},
		{recordedRequest{Method: "GET", Host: "s3-eu-west-1.amazonaws.com", Path: "/b/d"}, "companies-house/documents/b-d.json"},
		{recordedRequest{Method: "GET", Host: "services.cro.ie", Path: "/cws/companies", Query: "company_name=a+b"},
			"cro/cws-companies-" + hash8("company_name=a+b") + ".json"},
		{recordedRequest{Method: "GET", Host: "localhost:8080", Path: "/a b/ü:*?<>|\"\\"}, "localhost_8080/a_b-" + strings.Repeat("_", 10) + ".json"},
		{recordedRequest{Method: "GET", Host: "[::1]:8080", Path: "/x"}, "___1__8080/x.json"},
		{recordedRequest{Method: "HEAD", Host: "services.cro.ie", Path: "/x"}, "cro/x-head.json"},
		{recordedRequest{Method: "GET", Host: "services.cro.ie", Path: "/..."}, "cro/_...json"},
		{recordedRequest{Method: "GET", Host: "services.cro.ie", Path: "/con"}, "cro/_con.json"},
		{recordedRequest{Method: "GET", Host: "services.cro.ie", Path: "/" + strings.Repeat("a", 200)},
			"cro/" + strings.Repeat("a", maxStem) + "-" + hash8("/"+strings.Repeat("a", 200)) + ".json"},
	}
	for _, tt := range tests {
		if got := recordingName(tt.req); got != tt.want {
			t.Errorf("recordingName(%+v) = %q, want %q", tt.req, got, tt.want)
		}
	}
}

// recRoundTripper is an http.RoundTripper from a function.
type recRoundTripper func(*http.Request) (*http.Response, error)

func (f recRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// recAnswer answers every request with status and body.
func recAnswer(status int, body string) recRoundTripper {
	return func(req *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode: status, Header: http.Header{"Content-Type": {"text/plain"}},
			Body: io.NopCloser(strings.NewReader(body)), ContentLength: -1, Request: req,
		}, nil
	}
}

func TestRecorderRefusesUnrecordableRequests(t *testing.T) {
	t.Parallel()
	for _, rawURL := range []string{
		"http://services.cro.ie/",
		"http://services.cro.ie/company/",
		"http://services.cro.ie/company//x",
		"http://services.cro.ie/company/%7Bn%7D",
		"http://services.cro.ie/company/1?a=1&a=2",
		"http://services.cro.ie/company/1?a=%zz",
		"http://services.cro.ie/company/1?q=%7Bn%7D",
		"http://services.cro.ie/company/1?a=1;b=2",
	} {
		var sent atomic.Int64
		dir := t.TempDir()
		rec := NewRecorder(recRoundTripper(func(req *http.Request) (*http.Response, error) {
			sent.Add(1)
			return recAnswer(200, "ok")(req)
		}), dir, recFixedNow)
		req, err := http.NewRequest(http.MethodGet, rawURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rec.RoundTrip(req)
		if err == nil || !strings.Contains(err.Error(), "cannot record") {
			t.Errorf("%s: RoundTrip = %v, %v; want a cannot record error", rawURL, resp, err)
		}
		if sent.Load() != 0 {
			t.Errorf("%s: the request was sent", rawURL)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 || len(rec.Files()) != 0 {
			t.Errorf("%s: files written", rawURL)
		}
	}
}

func TestRecorderFailures(t *testing.T) {
	t.Parallel()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	netErr := errors.New("connection refused")
	tests := []struct {
		name    string
		next    http.RoundTripper
		dir     string
		maxBody int64
		wantErr string
	}{
		{"transport error passes through", recRoundTripper(func(*http.Request) (*http.Response, error) { return nil, netErr }), t.TempDir(), 0, "connection refused"},
		{"body over the cap", recAnswer(200, "0123456789a"), t.TempDir(), 10, "response body exceeds 10 bytes"},
		{"unwritable directory", recAnswer(200, "ok"), notADir, 0, "registry record: GET services.cro.ie/cws/x: writing cro/cws-x.json"},
		{"bad Location", recRoundTripper(func(req *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 302, Header: http.Header{"Location": {"http://x/%zz"}}, Body: http.NoBody, Request: req}, nil
		}), t.TempDir(), 0, "the Location header is not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := NewRecorder(tt.next, tt.dir, recFixedNow)
			if tt.maxBody > 0 {
				rec.maxBody = tt.maxBody
			}
			req, _ := http.NewRequest(http.MethodGet, "http://services.cro.ie/cws/x", nil)
			resp, err := rec.RoundTrip(req)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("RoundTrip = %v, %v; want an error containing %q", resp, err, tt.wantErr)
			}
			if len(rec.Files()) != 0 {
				t.Errorf("Files() = %v after a failure", rec.Files())
			}
		})
	}

	// A body exactly at the cap is recorded.
	rec := NewRecorder(recAnswer(200, "0123456789"), t.TempDir(), recFixedNow)
	rec.maxBody = 10
	req, _ := http.NewRequest(http.MethodGet, "http://services.cro.ie/cws/x", nil)
	if _, err := rec.RoundTrip(req); err != nil {
		t.Errorf("body at the cap: %v", err)
	}
}

func TestRecorderNamesAndOverwrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	answer := "first"
	rec := NewRecorder(recRoundTripper(func(req *http.Request) (*http.Response, error) {
		return recAnswer(200, answer+" "+req.URL.Path)(req)
	}), dir, recFixedNow)
	get := func(rawURL string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
		resp, err := rec.RoundTrip(req)
		if err != nil {
			t.Fatalf("GET %s: %v", rawURL, err)
		}
		resp.Body.Close()
	}
	// /a-b and /a/b, /Company/X and /company/x share a base name (the last two
	// on a case-insensitive file system); the later one gets a suffix.
	get("http://services.cro.ie/a-b")
	get("http://services.cro.ie/a/b")
	get("http://services.cro.ie/Company/X")
	get("http://services.cro.ie/company/x")
	answer = "second"
	get("http://services.cro.ie/a-b") // re-recorded: overwrites
	want := []string{
		"cro/Company-X.json",
		"cro/a-b-" + hash8("GET services.cro.ie/a/b?") + ".json",
		"cro/a-b.json",
		"cro/company-x-" + hash8("GET services.cro.ie/company/x?") + ".json",
	}
	for i := range want {
		want[i] = filepath.FromSlash(want[i])
	}
	if diff := cmp.Diff(want, rec.Files()); diff != "" {
		t.Errorf("Files() (-want +got):\n%s", diff)
	}
	ft, err := NewFixtureTransport(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	for path, body := range map[string]string{"/a-b": "second /a-b", "/a/b": "first /a/b", "/Company/X": "first /Company/X", "/company/x": "first /company/x"} {
		if got := recGet1(t, ft, "http://services.cro.ie"+path); string(got.body) != body {
			t.Errorf("replayed %s = %q, want %q", path, got.body, body)
		}
	}
}

func TestRecorderConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := NewRecorder(recAnswer(200, `{"ok":true}`), dir, recFixedNow)
	var wg sync.WaitGroup
	var want []string
	for i := range 20 {
		want = append(want, filepath.FromSlash(fmt.Sprintf("cro/company-%d.json", i)))
		for range 2 { // the same request twice, concurrently
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://services.cro.ie/company/%d", i), nil)
				resp, err := rec.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				_ = rec.Files()
			})
		}
	}
	wg.Wait()
	slices.Sort(want)
	if diff := cmp.Diff(want, rec.Files()); diff != "" {
		t.Errorf("Files() (-want +got):\n%s", diff)
	}
	if _, err := NewFixtureTransport(os.DirFS(dir)); err != nil {
		t.Error(err)
	}
}
