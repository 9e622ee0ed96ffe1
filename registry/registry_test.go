package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

const (
	chHost  = "api.company-information.service.gov.uk"
	croHost = "services.cro.ie"
)

// verifyCase is one VerifyCompany call and its expected outcome.
type verifyCase struct {
	country, number, name string
	want                  result
}

// result is what VerifyCompany returned, in a form cmp.Diff can compare: the
// company, or the *onboarding.Error found in the error chain.
type result struct {
	Company *onboarding.Company
	Err     *onboarding.Error
	// Other is the text of an error that carries no *onboarding.Error.
	Other string
}

func ok(c onboarding.Company) result   { return result{Company: &c} }
func fails(e *onboarding.Error) result { return result{Err: e} }
func toResult(c onboarding.Company, err error) result {
	if err == nil {
		return result{Company: &c}
	}
	if e := onboarding.AsError(err); e != nil {
		return result{Err: e}
	}
	return result{Other: err.Error()}
}

// The sandbox companies as VerifyCompany returns them.
var (
	northwind = onboarding.Company{
		Country: "GB", Number: "10000001", Name: "NORTHWIND TRADING LIMITED", Status: "active",
		Type: "private_limited", IncorporationDate: "2018-04-16",
		RegisteredAddress: &onboarding.Address{Line1: "Unit 2, 14 Harbour Road", Line2: "Spike Island",
			City: "Bristol", Postcode: "BS1 6XX", Country: "GB"},
		Source: "uk_registry",
	}
	bluebellHoldings = onboarding.Company{
		Country: "GB", Number: "10000002", Name: "BLUEBELL HOLDINGS PLC", Status: "active",
		Type: "public_limited", IncorporationDate: "2012-09-03",
		RegisteredAddress: &onboarding.Address{Line1: "Floor 5, 30 Meadow Lane", City: "Leeds",
			Region: "West Yorkshire", Postcode: "LS11 5XX", Country: "GB"},
		Source: "uk_registry",
	}
	highland = onboarding.Company{
		Country: "GB", Number: "SC100007", Name: "HIGHLAND FISHERIES LTD", Status: "active",
		Type: "private_limited", IncorporationDate: "2015-06-22",
		RegisteredAddress: &onboarding.Address{Line1: "Pier Office, 3 Shore Street", City: "Ullapool",
			Region: "Ross-shire", Postcode: "IV26 2XX", Country: "GB"},
		Source: "uk_registry",
	}
	bluebellGroup = onboarding.Company{
		Country: "GB", Number: "10000008", Name: "BLUEBELL GROUP LIMITED", Status: "active",
		Type: "private_limited", IncorporationDate: "2010-11-30",
		RegisteredAddress: &onboarding.Address{Line1: "30 Meadow Lane", City: "Leeds",
			Region: "West Yorkshire", Postcode: "LS11 5XX", Country: "GB"},
		Source: "uk_registry",
	}
	emerald = onboarding.Company{
		Country: "IE", Number: "100001", Name: "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", Status: "Normal",
		Type: "private_limited", IncorporationDate: "2017-02-14",
		RegisteredAddress: &onboarding.Address{Line1: "UNIT 12, DOCKLANDS INNOVATION PARK", Line2: "EAST WALL ROAD",
			City: "DUBLIN 3", Region: "DUBLIN, Ireland", Postcode: "D03 XX01", Country: "IE"},
		Source: "irish_registry",
	}
	baile = onboarding.Company{
		Country: "IE", Number: "100003", Name: "BAILE ÁTHA CLIATH TEORANTA", Status: "Normal",
		Type: "private_limited", IncorporationDate: "2004-11-08",
		RegisteredAddress: &onboarding.Address{Line1: "4 SRÁID NA MAINISTREACH", City: "BAILE ÁTHA CLIATH 1",
			Region: "BAILE ÁTHA CLIATH, Ireland", Postcode: "D01 XX03", Country: "IE"},
		Source: "irish_registry",
	}
)

// sandboxCases covers every sandbox company (docs/sandbox.md) through the
// recordings.
func sandboxCases() []verifyCase {
	const uk, ie = "UK company registry", "Irish company registry"
	return []verifyCase{
		{"GB", "10000001", "Northwind Trading Ltd", ok(northwind)},
		{"GB", " 1000 0001 ", "NORTHWIND TRADING LIMITED", ok(northwind)},
		{"GB", "10000001", " Northwind Trading ", ok(northwind)},
		{"GB", "10000001", "", ok(northwind)}, // no name: no name match (RFI requests)
		{"GB", "10000001", "Northwind Ltd", fails(onboarding.ErrCompanyNameMismatch("Northwind Ltd", "10000001", "NORTHWIND TRADING LIMITED"))},
		{"GB", "10000002", "Bluebell Holdings PLC", ok(bluebellHoldings)},
		{"GB", "10000002", "Bluebell Holdings Public Limited Company", ok(bluebellHoldings)},
		{"GB", "10000002", "Bluebell Holdings Ltd", fails(onboarding.ErrCompanyNameMismatch("Bluebell Holdings Ltd", "10000002", "BLUEBELL HOLDINGS PLC"))},
		{"GB", "10000003", "Oldco Limited", fails(onboarding.ErrCompanyNotActive("10000003", "dissolved"))},
		{"GB", "10000003", "Not The Registered Name", fails(onboarding.ErrCompanyNotActive("10000003", "dissolved"))},
		{"GB", "10000004", "Anything Ltd", fails(onboarding.ErrCompanyNotFound("10000004", uk))},
		{"GB", "10000005", "Anything Ltd", fails(onboarding.ErrRegistryUnavailable(uk))},
		{"GB", "10000006", "Anything Ltd", fails(onboarding.ErrRegistryFailed)},
		{"GB", "SC100007", "Highland Fisheries Ltd", ok(highland)},
		{"GB", "sc100007", "Highland Fisheries Limited", ok(highland)},
		{"GB", "10000008", "Bluebell Group Limited", ok(bluebellGroup)},
		{"GB", "10000008", "Bluebell Holdings Limited", fails(onboarding.ErrCompanyNameMismatch("Bluebell Holdings Limited", "10000008", "BLUEBELL GROUP LIMITED"))},
		{"GB", "99999999", "Anything Ltd", fails(onboarding.ErrCompanyNotFound("99999999", uk))},
		{"GB", "445790", "Anything Ltd", fails(onboarding.ErrCompanyNotFound("00445790", uk))},
		{"GB", "ABC-123", "Anything Ltd", fails(onboarding.ErrCompanyNumberMalformed("ABC-123", uk))},
		{"GB", " 123456789 ", "Anything Ltd", fails(onboarding.ErrCompanyNumberMalformed("123456789", uk))},
		{"IE", "100001", "Emerald Software DAC", ok(emerald)},
		{"IE", "100001", "Emerald Software", ok(emerald)},
		{"IE", "0100001", "Emerald Software DAC", fails(onboarding.ErrCompanyNumberMalformed("0100001", ie))},
		{"IE", "100001", "Emerald Software Limited", fails(onboarding.ErrCompanyNameMismatch("Emerald Software Limited", "100001", "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY"))},
		{"IE", "100002", "Shamrock Consulting Limited", fails(onboarding.ErrCompanyNotActive("100002", "Strike Off Listed"))},
		{"IE", "100003", "Baile Atha Cliath Teo", ok(baile)},
		{"IE", "100003", "Baile Átha Cliath Teoranta", ok(baile)},
		{"IE", "100004", "Anything Limited", fails(onboarding.ErrCompanyNotFound("100004", ie))},
		{"IE", "000123", "Anything Limited", fails(onboarding.ErrCompanyNotFound("123", ie))},
		{"IE", "IE100001", "Emerald Software DAC", fails(onboarding.ErrCompanyNumberMalformed("IE100001", ie))},
		{"IE", "0", "Anything Limited", fails(onboarding.ErrCompanyNumberMalformed("0", ie))},
		{"FR", "552100554", "Anything SA", result{Other: `registry: no company registry for country "FR"`}},
	}
}

// newFixtureRegistry returns a fixtures-mode Registry over fsys.
func newFixtureRegistry(t *testing.T, fsys fs.FS) *Registry {
	t.Helper()
	r, err := New(Options{Mode: ModeFixtures, Fixtures: fsys})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestVerifyCompanyFixtures(t *testing.T) {
	t.Parallel()
	r := newFixtureRegistry(t, os.DirFS("../testdata/registry"))
	for _, tt := range sandboxCases() {
		got := toResult(r.VerifyCompany(context.Background(), tt.country, tt.number, tt.name))
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("VerifyCompany(%q, %q, %q) mismatch (-got +want):\n%s", tt.country, tt.number, tt.name, diff)
		}
	}
}

// TestVerifyCompanyErrorChain checks what callers rely on beyond the message:
// kinds, retryability, and that registry trouble keeps its cause.
func TestVerifyCompanyErrorChain(t *testing.T) {
	t.Parallel()
	r := newFixtureRegistry(t, os.DirFS("../testdata/registry"))
	ctx := context.Background()

	_, err := r.VerifyCompany(ctx, "GB", "10000005", "X Ltd")
	if e := onboarding.AsError(err); e == nil || e.Kind != onboarding.KindUnavailable || !e.Retryable {
		t.Errorf("VerifyCompany(GB 10000005) = %v; want a retryable KindUnavailable error", err)
	}
	if err == nil || !strings.Contains(err.Error(), "status 429") || !strings.Contains(err.Error(), "600 per 5m") {
		t.Errorf("VerifyCompany(GB 10000005) error text %q; want the status and rate-limit headers for the logs", err)
	}

	_, err = r.VerifyCompany(ctx, "GB", "10000006", "X Ltd")
	if !errors.Is(err, onboarding.ErrRegistryFailed) || onboarding.AsError(err).Kind != onboarding.KindUpstream {
		t.Errorf("VerifyCompany(GB 10000006) = %v; want ErrRegistryFailed", err)
	}

	_, err = r.VerifyCompany(ctx, "GB", "10000001", "Northwind Ltd")
	if e := onboarding.AsError(err); e == nil || e.Kind != onboarding.KindInvalid || e.SuggestedName != "NORTHWIND TRADING LIMITED" || e.Retryable {
		t.Errorf("VerifyCompany(GB 10000001, Northwind Ltd) = %#v; want KindInvalid with SuggestedName", e)
	}
}

// fixtureServer serves the recordings of host over real HTTP on 127.0.0.1,
// as the registry at host would, and records the Authorization and Accept
// headers it receives.
type fixtureServer struct {
	*httptest.Server
	mu      sync.Mutex
	auth    []string
	accepts []string
}

func newFixtureServer(t *testing.T, ft *FixtureTransport, host string) *fixtureServer {
	t.Helper()
	s := &fixtureServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.accepts = append(s.accepts, r.Header.Get("Accept"))
		s.mu.Unlock()
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = "https", host, host, ""
		resp, err := ft.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fixtureServer) headers() (auth, accepts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...), append([]string(nil), s.accepts...)
}

// TestVerifyCompanyLive runs the live clients against servers that answer
// with the recordings, and checks that they return exactly what fixtures
// mode returns, with the right credentials.
func TestVerifyCompanyLive(t *testing.T) {
	t.Parallel()
	fsys := os.DirFS("../testdata/registry")
	ft := newTestFixtureTransport(t, fsys)
	chSrv := newFixtureServer(t, ft, chHost)
	croSrv := newFixtureServer(t, ft, croHost)
	live, err := New(Options{
		Mode:                  ModeLive,
		CompaniesHouseAPIKey:  "my_api_key",
		CROEmail:              "registry@example.com",
		CROAPIKey:             "cro-test-key",
		Timeout:               5 * time.Second,
		CompaniesHouseBaseURL: chSrv.URL,
		CROBaseURL:            croSrv.URL + "/cws/",
	})
	if err != nil {
		t.Fatalf("New(live): %v", err)
	}
	fixtures := newFixtureRegistry(t, fsys)

	ctx := context.Background()
	for _, tt := range sandboxCases() {
		got := toResult(live.VerifyCompany(ctx, tt.country, tt.number, tt.name))
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("live VerifyCompany(%q, %q, %q) mismatch (-got +want):\n%s", tt.country, tt.number, tt.name, diff)
		}
		fix := toResult(fixtures.VerifyCompany(ctx, tt.country, tt.number, tt.name))
		if diff := cmp.Diff(got, fix); diff != "" {
			t.Errorf("VerifyCompany(%q, %q, %q) live and fixtures differ (-live +fixtures):\n%s", tt.country, tt.number, tt.name, diff)
		}
	}

	for _, s := range []struct {
		name string
		srv  *fixtureServer
		auth string
	}{
		// curl -u my_api_key: sends this.
		{"companies house", chSrv, "Basic bXlfYXBpX2tleTo="},
		// base64("registry@example.com:cro-test-key").
		{"cro", croSrv, "Basic cmVnaXN0cnlAZXhhbXBsZS5jb206Y3JvLXRlc3Qta2V5"},
	} {
		auth, accepts := s.srv.headers()
		if len(auth) == 0 {
			t.Errorf("%s: no requests reached the server", s.name)
		}
		for i := range auth {
			if auth[i] != s.auth || accepts[i] != "application/json" {
				t.Errorf("%s request %d: Authorization %q, Accept %q; want %q, application/json", s.name, i, auth[i], accepts[i], s.auth)
			}
		}
	}
}

// TestVerifyCompanyNoCredentials checks that empty credentials send no
// Authorization header rather than an empty Basic one.
func TestVerifyCompanyNoCredentials(t *testing.T) {
	t.Parallel()
	ft := newTestFixtureTransport(t, os.DirFS("../testdata/registry"))
	chSrv := newFixtureServer(t, ft, chHost)
	croSrv := newFixtureServer(t, ft, croHost)
	r, err := New(Options{Mode: ModeLive, CompaniesHouseBaseURL: chSrv.URL, CROBaseURL: croSrv.URL + "/cws", CROEmail: "only@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.VerifyCompany(context.Background(), "GB", "10000001", "Northwind Trading Ltd"); err != nil {
		t.Errorf("VerifyCompany(GB 10000001): %v", err)
	}
	if _, err := r.VerifyCompany(context.Background(), "IE", "100001", "Emerald Software DAC"); err != nil {
		t.Errorf("VerifyCompany(IE 100001): %v", err)
	}
	for _, srv := range []*fixtureServer{chSrv, croSrv} {
		auth, _ := srv.headers()
		if diff := cmp.Diff(auth, []string{""}); diff != "" {
			t.Errorf("Authorization headers mismatch (-got +want):\n%s", diff)
		}
	}
}

func TestVerifyCompanyTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first, so a stuck handler cannot block Close
	const timeout = 200 * time.Millisecond
	r, err := New(Options{Mode: ModeLive, Timeout: timeout, CompaniesHouseBaseURL: srv.URL, CROBaseURL: srv.URL + "/cws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ country, number, registry string }{
		{"GB", "10000001", "UK company registry"},
		{"IE", "100001", "Irish company registry"},
	} {
		start := time.Now()
		_, err := r.VerifyCompany(context.Background(), tt.country, tt.number, "Anything")
		elapsed := time.Since(start)
		if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryUnavailable(tt.registry)); diff != "" {
			t.Errorf("VerifyCompany(%s %s) against a hanging server: error mismatch (-got +want):\n%s", tt.country, tt.number, diff)
		}
		if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "Client.Timeout") {
			t.Errorf("VerifyCompany(%s %s) error %q does not show the timeout", tt.country, tt.number, err)
		}
		if elapsed < timeout || elapsed > 10*timeout {
			t.Errorf("VerifyCompany(%s %s) gave up after %v; want about %v", tt.country, tt.number, elapsed, timeout)
		}
	}
}

func TestVerifyCompanyConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close()
	r, err := New(Options{Mode: ModeLive, Timeout: 2 * time.Second, CompaniesHouseBaseURL: addr, CROBaseURL: addr + "/cws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ country, number, registry string }{
		{"GB", "10000001", "UK company registry"},
		{"IE", "100001", "Irish company registry"},
	} {
		_, err := r.VerifyCompany(context.Background(), tt.country, tt.number, "Anything")
		if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryUnavailable(tt.registry)); diff != "" {
			t.Errorf("VerifyCompany(%s %s) with nothing listening: error mismatch (-got +want):\n%s", tt.country, tt.number, diff)
		}
	}
}

func TestVerifyCompanyUnrecorded(t *testing.T) {
	t.Parallel()
	// Only one recording and no fallback: every other number is unrecorded.
	fsys := fstest.MapFS{"cro/100001.json": {Data: recordingJSON(t, "GET", croHost, "/cws/company/100001/c", "format=json",
		recordedResponse{Status: 200, Body: json.RawMessage(`{"company_num":100001,"company_name":"EMERALD SOFTWARE DAC","company_status_desc":"Normal"}`)})}}
	tests := []struct {
		name                  string
		opts                  Options
		country, number, firm string
	}{
		{"unrecorded number", Options{Mode: ModeFixtures, Fixtures: fsys}, "IE", "100002", "Shamrock Consulting Limited"},
		{"unrecorded registry", Options{Mode: ModeFixtures, Fixtures: fsys}, "GB", "10000001", "Northwind Trading Ltd"},
		{"unrecorded host", Options{Mode: ModeFixtures, Fixtures: os.DirFS("../testdata/registry"),
			CompaniesHouseBaseURL: "https://api.example.invalid"}, "GB", "10000001", "Northwind Trading Ltd"},
	}
	for _, tt := range tests {
		r, err := New(tt.opts)
		if err != nil {
			t.Fatalf("%s: New: %v", tt.name, err)
		}
		_, err = r.VerifyCompany(context.Background(), tt.country, tt.number, tt.firm)
		if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryFailed); diff != "" {
			t.Errorf("%s: VerifyCompany(%s %s) error mismatch (-got +want):\n%s", tt.name, tt.country, tt.number, diff)
		}
		if !errors.Is(err, ErrNoRecording) {
			t.Errorf("%s: VerifyCompany(%s %s) = %v; want it to wrap ErrNoRecording", tt.name, tt.country, tt.number, err)
		}
	}
	r := newFixtureRegistry(t, fsys)
	if _, err := r.VerifyCompany(context.Background(), "IE", "100001", "Emerald Software DAC"); err != nil {
		t.Errorf("VerifyCompany(IE 100001) through the one recording: %v", err)
	}
}

// TestVerifyCompanyAnswers covers registry answers the sandbox does not
// ship: each case records one answer for GB 10000001 or IE 100001.
func TestVerifyCompanyAnswers(t *testing.T) {
	t.Parallel()
	const uk, ie = "UK company registry", "Irish company registry"
	type answer struct {
		status  int
		headers map[string]string
		json    string  // inline JSON body
		text    *string // plain body
	}
	text := func(s string) *string { return &s }
	tests := []struct {
		name    string
		country string
		answer  answer
		given   string
		want    result
	}{
		{"CH 503", "GB", answer{status: 503, text: text("Service Unavailable")}, "X Ltd", fails(onboarding.ErrRegistryUnavailable(uk))},
		{"CH 401", "GB", answer{status: 401, json: `{"error":"Invalid Authorization","type":"ch:service"}`}, "X Ltd", fails(onboarding.ErrRegistryFailed)},
		// A failing gateway is the registry being down, not an answer.
		{"CH 502", "GB", answer{status: 502, text: text("<html>Bad Gateway</html>")}, "X Ltd", fails(onboarding.ErrRegistryUnavailable(uk))},
		{"CH 504", "GB", answer{status: 504, text: text("<html>Gateway Timeout</html>")}, "X Ltd", fails(onboarding.ErrRegistryUnavailable(uk))},
		{"CH 500", "GB", answer{status: 500, json: `{"exception_id":"abc123","error":"Internal server error"}`}, "X Ltd", fails(onboarding.ErrRegistryFailed)},
		{"CH 302", "GB", answer{status: 302, headers: map[string]string{"Location": "https://example.invalid/"}}, "X Ltd", fails(onboarding.ErrRegistryFailed)},
		{"CH HTML body", "GB", answer{status: 200, text: text("<html>maintenance</html>")}, "X Ltd", fails(onboarding.ErrRegistryFailed)},
		{"CH empty body", "GB", answer{status: 200}, "X Ltd", fails(onboarding.ErrRegistryFailed)},
		{"CH profile without name", "GB", answer{status: 200, json: `{"company_number":"10000001","company_status":"active"}`}, "X Ltd", fails(onboarding.ErrRegistryFailed)},
		{"CH liquidation", "GB", answer{status: 200, json: `{"company_name":"X LIMITED","company_status":"liquidation","type":"ltd"}`},
			"X Ltd", fails(onboarding.ErrCompanyNotActive("10000001", "liquidation"))},
		{"CH minimal profile", "GB", answer{status: 200, json: `{"company_name":"X LIMITED","company_status":"active","type":"oversea-company","date_of_creation":"not a date","links":{"self":"/company/10000001"},"accounts":{"accounting_reference_date":{"day":26,"month":"02"}}}`},
			"X Limited", ok(onboarding.Company{Country: "GB", Number: "10000001", Name: "X LIMITED", Status: "active", Type: "other", Source: "uk_registry"})},
		{"CH address lines move up", "GB", answer{status: 200, json: `{"company_name":"X LLP","company_status":"active","type":"llp","registered_office_address":{"premises":" ","address_line_2":"Second Line","locality":"York","postal_code":"YO1 7XX"}}`},
			"X LLP", ok(onboarding.Company{Country: "GB", Number: "10000001", Name: "X LLP", Status: "active", Type: "llp",
				RegisteredAddress: &onboarding.Address{Line1: "Second Line", City: "York", Postcode: "YO1 7XX", Country: "GB"}, Source: "uk_registry"})},
		{"CRO null", "IE", answer{status: 200, json: `null`}, "X", fails(onboarding.ErrCompanyNotFound("100001", ie))},
		{"CRO empty array", "IE", answer{status: 200, json: `[]`}, "X", fails(onboarding.ErrCompanyNotFound("100001", ie))},
		{"CRO empty body", "IE", answer{status: 200}, "X", fails(onboarding.ErrCompanyNotFound("100001", ie))},
		{"CRO blank body", "IE", answer{status: 200, text: text(" \n")}, "X", fails(onboarding.ErrCompanyNotFound("100001", ie))},
		{"CRO 204", "IE", answer{status: 204}, "X", fails(onboarding.ErrCompanyNotFound("100001", ie))},
		{"CRO Cloudflare 1015", "IE", answer{status: 200, text: text("error code: 1015")}, "X", fails(onboarding.ErrRegistryUnavailable(ie))},
		{"CRO 429", "IE", answer{status: 429, text: text("error code: 1015")}, "X", fails(onboarding.ErrRegistryUnavailable(ie))},
		{"CRO 503", "IE", answer{status: 503}, "X", fails(onboarding.ErrRegistryUnavailable(ie))},
		{"CRO 500", "IE", answer{status: 500, text: text("Request Error")}, "X", fails(onboarding.ErrRegistryFailed)},
		{"CRO invalid JSON", "IE", answer{status: 200, text: text(`{"company_num":`)}, "X", fails(onboarding.ErrRegistryFailed)},
		{"CRO fractional number", "IE", answer{status: 200, json: `{"company_num":100001.5,"company_name":"X LIMITED","company_status_desc":"Normal"}`}, "X", fails(onboarding.ErrRegistryFailed)},
		{"CRO another company", "IE", answer{status: 200, json: `{"company_num":999,"company_name":"X LIMITED","company_status_desc":"Normal"}`}, "X", fails(onboarding.ErrRegistryFailed)},
		{"CRO no name", "IE", answer{status: 200, json: `{"company_num":100001,"company_status_desc":"Normal"}`}, "X", fails(onboarding.ErrRegistryFailed)},
		{"CRO dissolved", "IE", answer{status: 200, json: `{"company_num":100001,"company_name":"X LIMITED","company_status_desc":"Dissolved"}`},
			"X", fails(onboarding.ErrCompanyNotActive("100001", "Dissolved"))},
		{"CRO padded status, unknown date, array", "IE", answer{status: 200, json: `[{"company_num":"100001","company_name":"X PLC","company_status_desc":"Normal ","company_reg_date":"0001-01-01T00:00:00Z","comp_type_desc":"PLC - Public Limited Company","company_addr_1":"","company_addr_2":"2 Quay Street","company_addr_3":"GALWAY","company_addr_4":"","eircode":""}]`},
			"X Public Limited Company", ok(onboarding.Company{Country: "IE", Number: "100001", Name: "X PLC", Status: "Normal", Type: "public_limited",
				RegisteredAddress: &onboarding.Address{Line1: "2 Quay Street", City: "GALWAY", Country: "IE"}, Source: "irish_registry"})},
		{"CRO no number, no address", "IE", answer{status: 200, json: `{"company_name":"X CLG","company_status_desc":"Normal","comp_type_desc":"CLG - Company Limited by Guarantee","company_reg_date":"1999-12-31T00:00:00Z"}`},
			"X", ok(onboarding.Company{Country: "IE", Number: "100001", Name: "X CLG", Status: "Normal", Type: "other", IncorporationDate: "1999-12-31", Source: "irish_registry"})},
	}
	for _, tt := range tests {
		host, urlPath, query, number := chHost, "/company/10000001", "", "10000001"
		if tt.country == "IE" {
			host, urlPath, query, number = croHost, "/cws/company/100001/c", "format=json", "100001"
		}
		resp := recordedResponse{Status: tt.answer.status, Headers: tt.answer.headers, BodyText: tt.answer.text}
		if tt.answer.json != "" {
			resp.Body = json.RawMessage(tt.answer.json)
		}
		r := newFixtureRegistry(t, fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, urlPath, query, resp)}})
		got := toResult(r.VerifyCompany(context.Background(), tt.country, number, tt.given))
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s: VerifyCompany(%s %s, %q) mismatch (-got +want):\n%s", tt.name, tt.country, number, tt.given, diff)
		}
	}
}

func TestCompanyTypes(t *testing.T) {
	t.Parallel()
	ch := map[string]string{
		"":                            "",
		"ltd":                         "private_limited",
		"private-unlimited":           "private_limited",
		"private-limited-guarant-nsc": "private_limited",
		"private-limited-guarant-nsc-limited-exemption": "private_limited",
		"private-limited-shares-section-30-exemption":   "private_limited",
		"plc":                                  "public_limited",
		"llp":                                  "llp",
		"limited-partnership":                  "partnership",
		"scottish-partnership":                 "partnership",
		"charitable-incorporated-organisation": "charity",
		"scottish-charitable-incorporated-organisation": "charity",
		"oversea-company":            "other",
		"registered-overseas-entity": "other",
	}
	for in, want := range ch {
		if got := chCompanyType(in); got != want {
			t.Errorf("chCompanyType(%q) = %q, want %q", in, got, want)
		}
	}
	cro := map[string]string{
		"": "",
		"LTD - Private Company Limited by Shares": "private_limited",
		"DAC - Designated Activity Company":       "private_limited",
		"Private limited by shares":               "private_limited",
		"PLC - Public Limited Company":            "public_limited",
		"CLG - Company Limited by Guarantee":      "other",
		"ULC - Private Unlimited Company":         "other",
		"Private unlimited with share capital":    "other",
	}
	for in, want := range cro {
		if got := croCompanyType(in); got != want {
			t.Errorf("croCompanyType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSupportsVerifyAndSearch(t *testing.T) {
	t.Parallel()
	r := newFixtureRegistry(t, os.DirFS("../testdata/registry"))
	for _, tt := range []struct {
		country string
		want    bool
	}{{"GB", true}, {"IE", true}, {"FR", false}, {"gb", false}, {"UK", false}, {"", false}} {
		if got := r.Supports(tt.country, onboarding.FeatureVerify); got != tt.want {
			t.Errorf("Supports(%q, FeatureVerify) = %v, want %v", tt.country, got, tt.want)
		}
		if got := r.Supports(tt.country, onboarding.FeatureSearch); got != tt.want {
			t.Errorf("Supports(%q, FeatureSearch) = %v, want %v", tt.country, got, tt.want)
		}
	}
}

// TestSupportsOptionalFeatures checks what each registry offers beyond
// verification and search, and that what it does not offer answers as the
// Service may rely on: no parties and no filings for the CRO, a plain error
// for a document or a country without a registry.
func TestSupportsOptionalFeatures(t *testing.T) {
	t.Parallel()
	r := newFixtureRegistry(t, os.DirFS("../testdata/registry"))
	for _, tt := range []struct {
		country string
		feature onboarding.Feature
		want    bool
	}{
		{"GB", onboarding.FeatureParties, true}, {"GB", onboarding.FeatureFilings, true},
		{"IE", onboarding.FeatureParties, false}, {"IE", onboarding.FeatureFilings, false},
		{"FR", onboarding.FeatureParties, false}, {"FR", onboarding.FeatureFilings, false},
		{"GB", onboarding.Feature(0), false}, {"IE", onboarding.Feature(99), false},
	} {
		if got := r.Supports(tt.country, tt.feature); got != tt.want {
			t.Errorf("Supports(%q, %d) = %v, want %v", tt.country, tt.feature, got, tt.want)
		}
	}
	ctx := context.Background()
	if p, err := r.Parties(ctx, "IE", "not a number"); err != nil || len(p.People)+len(p.Entities) != 0 {
		t.Errorf("Parties(IE) = %+v, %v; want none", p, err)
	}
	if f, err := r.Filings(ctx, "IE", "not a number"); err != nil || f != nil {
		t.Errorf("Filings(IE) = %+v, %v; want none", f, err)
	}
	for _, country := range []string{"IE", "FR"} {
		rc, err := r.OpenFiling(ctx, country, onboarding.Filing{Document: metadataLink("NwCs01Doc10000001")})
		if err == nil || onboarding.AsError(err) != nil {
			t.Errorf("OpenFiling(%s) = %v, %v; want a plain error", country, rc, err)
		}
		if rc != nil {
			rc.Close()
		}
	}
	for _, call := range []struct {
		name string
		err  error
	}{
		{"Parties", func() error { _, err := r.Parties(ctx, "FR", "1"); return err }()},
		{"Filings", func() error { _, err := r.Filings(ctx, "FR", "1"); return err }()},
		{"SearchCompanies", func() error { _, err := r.SearchCompanies(ctx, "FR", "north", 5); return err }()},
		{"VerifyCompany", func() error { _, err := r.VerifyCompany(ctx, "FR", "1", "x"); return err }()},
		{"Visit", r.Visit(ctx, "FR", "1", func(string) {})},
	} {
		if call.err == nil || onboarding.AsError(call.err) != nil {
			t.Errorf("%s(FR) error = %v; want a plain error", call.name, call.err)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	broken := fstest.MapFS{"a.json": {Data: []byte("{")}}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no mode", Options{}, "unknown mode"},
		{"unknown mode", Options{Mode: "sandbox"}, "unknown mode"},
		{"fixtures without recordings", Options{Mode: ModeFixtures}, "Options.Fixtures"},
		{"broken recordings", Options{Mode: ModeFixtures, Fixtures: broken}, "a.json"},
		{"negative timeout", Options{Mode: ModeLive, Timeout: -time.Second}, "negative"},
		{"relative base URL", Options{Mode: ModeLive, CompaniesHouseBaseURL: "api.company-information.service.gov.uk"}, "base URL"},
		{"base URL with credentials", Options{Mode: ModeLive, CROBaseURL: "https://user:pass@services.cro.ie/cws"}, "base URL"},
		{"unparsable base URL", Options{Mode: ModeLive, CROBaseURL: "https://user:pass@services.cro.ie:port/cws"}, "base URL"},
		{"base URL with query", Options{Mode: ModeLive, CROBaseURL: "https://services.cro.ie/cws?format=json"}, "base URL"},
	}
	for _, tt := range tests {
		r, err := New(tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, %v; want an error containing %q", tt.name, r, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "pass") {
			t.Errorf("%s: New error %q shows the credentials", tt.name, err)
		}
	}
}
