package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

// noAuthorization marks a request that carried no Authorization header.
const noAuthorization = "(none)"

// registryTLSServer is one HTTPS server that plays every registry host
// from the recordings, telling them apart by the Host the client sends,
// and records the Authorization header each host received.
type registryTLSServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth map[string][]string // Host → Authorization of each request
}

func newRegistryTLSServer(t *testing.T, ft *FixtureTransport) *registryTLSServer {
	t.Helper()
	s := &registryTLSServer{auth: make(map[string][]string)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := noAuthorization
		if v := r.Header.Values("Authorization"); len(v) > 0 {
			auth = fmt.Sprint(v)
			if len(v) == 1 {
				auth = v[0]
			}
		}
		s.mu.Lock()
		s.auth[r.Host] = append(s.auth[r.Host], auth)
		s.mu.Unlock()
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = "https", r.Host, r.Host, ""
		resp, err := ft.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// transport returns a client transport that reaches s for every host name,
// over TLS that trusts s's certificate (valid for example.com).
func (s *registryTLSServer) transport(t *testing.T) *http.Transport {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	addr := s.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com", MinVersion: tls.VersionTLS12},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func (s *registryTLSServer) authByHost() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.auth))
	for h, v := range s.auth {
		out[h] = slices.Clone(v)
	}
	return out
}

// TestLiveParity runs the live clients, over real TLS and HTTP with the
// registries' real host names, against a server that answers with the
// recordings, and checks that every call gives exactly what fixtures mode
// gives, with credentials for the registries and none for the storage.
func TestLiveParity(t *testing.T) {
	t.Parallel()
	fsys := sandbox()
	srv := newRegistryTLSServer(t, newTestFixtureTransport(t, fsys))
	live, err := New(Options{
		Mode:                  ModeLive,
		CompaniesHouseAPIKey:  "my_api_key",
		CROEmail:              "registry@example.com",
		CROAPIKey:             "cro-test-key",
		Timeout:               5 * time.Second,
		Transport:             srv.transport(t),
		CompaniesHouseBaseURL: "https://api.company-information.service.gov.uk",
		CROBaseURL:            "https://services.cro.ie/cws",
	})
	if err != nil {
		t.Fatalf("New(live): %v", err)
	}
	fixtures := newFixtureRegistry(t, fsys)
	ctx := context.Background()

	companies := []struct{ country, number string }{
		{"GB", "10000001"}, {"GB", "10000002"}, {"GB", "10000003"}, {"GB", "SC100007"}, {"GB", "10000008"},
		{"IE", "100001"}, {"IE", "100002"}, {"IE", "100003"},
	}
	for _, c := range companies {
		lp, fp := outcomeOf(live.Parties(ctx, c.country, c.number)), outcomeOf(fixtures.Parties(ctx, c.country, c.number))
		if diff := cmp.Diff(lp, fp); diff != "" {
			t.Errorf("Parties(%s %s) live and fixtures differ (-live +fixtures):\n%s", c.country, c.number, diff)
		}
		lf, ff := outcomeOf(live.Filings(ctx, c.country, c.number)), outcomeOf(fixtures.Filings(ctx, c.country, c.number))
		if diff := cmp.Diff(lf, ff); diff != "" {
			t.Errorf("Filings(%s %s) live and fixtures differ (-live +fixtures):\n%s", c.country, c.number, diff)
		}
		for _, f := range lf.Value {
			ld, lo, lr := readFiling(ctx, live, f)
			fd, fo, fr := readFiling(ctx, fixtures, f)
			if diff := cmp.Diff(
				[]any{ld, onboarding.AsError(lo), onboarding.AsError(lr)},
				[]any{fd, onboarding.AsError(fo), onboarding.AsError(fr)}); diff != "" {
				t.Errorf("OpenFiling(%s) live and fixtures differ (-live +fixtures):\n%s", f.FileName, diff)
			}
			if (lo == nil) != (fo == nil) || (lr == nil) != (fr == nil) {
				t.Errorf("OpenFiling(%s): live errors %v, %v; fixtures errors %v, %v", f.FileName, lo, lr, fo, fr)
			}
		}
	}
	// Spot checks that the parity above compared something.
	if got, _ := live.Parties(ctx, "GB", "10000002"); len(got.People) != 2 || len(got.Entities) != 1 {
		t.Errorf("live Parties(GB 10000002) = %+v; want 2 people and 1 entity", got)
	}
	if got, _ := live.Filings(ctx, "GB", "10000001"); len(got) != 3 {
		t.Errorf("live Filings(GB 10000001) = %d filings, want 3", len(got))
	}

	for _, tt := range sandboxSearches() {
		got, err := live.SearchCompanies(ctx, tt.country, tt.query, tt.limit)
		if err != nil {
			t.Errorf("live SearchCompanies(%q, %q): %v", tt.country, tt.query, err)
		}
		if diff := cmp.Diff(got, tt.want, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("live SearchCompanies(%q, %q, %d) mismatch (-got +want):\n%s", tt.country, tt.query, tt.limit, diff)
		}
		fix, err := fixtures.SearchCompanies(ctx, tt.country, tt.query, tt.limit)
		if err != nil {
			t.Errorf("SearchCompanies(%q, %q): %v", tt.country, tt.query, err)
		}
		if diff := cmp.Diff(got, fix); diff != "" {
			t.Errorf("SearchCompanies(%q, %q, %d) live and fixtures differ (-live +fixtures):\n%s", tt.country, tt.query, tt.limit, diff)
		}
	}

	// VerifyCompany last, and GB 10000005 (a 429, which pauses the live
	// limiter for a second) last of all.
	cases := sandboxCases()
	slices.SortStableFunc(cases, func(a, b verifyCase) int {
		return boolToInt(a.number == "10000005") - boolToInt(b.number == "10000005")
	})
	for _, tt := range cases {
		got := toResult(live.VerifyCompany(ctx, tt.country, tt.number, tt.name))
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("live VerifyCompany(%q, %q, %q) mismatch (-got +want):\n%s", tt.country, tt.number, tt.name, diff)
		}
		if diff := cmp.Diff(got, toResult(fixtures.VerifyCompany(ctx, tt.country, tt.number, tt.name))); diff != "" {
			t.Errorf("VerifyCompany(%q, %q, %q) live and fixtures differ (-live +fixtures):\n%s", tt.country, tt.number, tt.name, diff)
		}
	}

	// Credentials: curl -u my_api_key: for Companies House, its Document
	// API included; base64(email:key) for the CRO; nothing at all for the
	// pre-signed storage address.
	const chAuth = "Basic bXlfYXBpX2tleTo="
	const croAuth = "Basic cmVnaXN0cnlAZXhhbXBsZS5jb206Y3JvLXRlc3Qta2V5"
	wantAuth := map[string]string{
		chHost: chAuth, frontendDocHost: chAuth, documentAPIHost: chAuth,
		croHost: croAuth,
		s3Host:  noAuthorization,
	}
	got := srv.authByHost()
	for host, want := range wantAuth {
		if len(got[host]) == 0 {
			t.Errorf("no request reached %s", host)
		}
		for i, auth := range got[host] {
			if auth != want {
				t.Errorf("%s request %d: Authorization %q, want %q", host, i, auth, want)
			}
		}
	}
	for host := range got {
		if _, ok := wantAuth[host]; !ok {
			t.Errorf("a request went to unexpected host %q", host)
		}
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// profileJSON is a minimal active company profile for 10000001.
const profileJSON = `{"company_name":"NORTHWIND TRADING LIMITED","company_number":"10000001","company_status":"active","type":"ltd"}`

// TestLiveRateLimitReset: after a 429 that says the limit resets in about
// 2s, a call that cannot wait fails at once without reaching the
// registry, and one that can waits for the reset and succeeds.
func TestLiveRateLimitReset(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(2 * time.Second).Unix() // 1 to 2 s ahead
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("X-Ratelimit-Limit", "600")
			w.Header().Set("X-Ratelimit-Remain", "0")
			w.Header().Set("X-Ratelimit-Reset", strconv.FormatInt(reset, 10))
			w.Header().Set("X-Ratelimit-Window", "5m")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, profileJSON)
	}))
	t.Cleanup(srv.Close)
	r := newLiveRegistry(t, srv.URL, Options{CompaniesHouseLimit: Limit{Requests: 5, Per: 3 * time.Second}})
	unavailable := onboarding.ErrRegistryUnavailable(ukRegistry)

	_, err := r.VerifyCompany(context.Background(), "GB", "10000001", "Northwind Trading Ltd")
	if diff := cmp.Diff(onboarding.AsError(err), unavailable); diff != "" {
		t.Fatalf("VerifyCompany answered 429: error mismatch (-got +want):\n%s", diff)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = r.VerifyCompany(ctx, "GB", "10000001", "Northwind Trading Ltd")
	elapsed := time.Since(start)
	if diff := cmp.Diff(onboarding.AsError(err), unavailable); diff != "" {
		t.Errorf("VerifyCompany(500ms) during the pause: error mismatch (-got +want):\n%s", diff)
	}
	if !errors.Is(err, errThrottled) {
		t.Errorf("VerifyCompany(500ms) during the pause = %v; want it to say it was throttled", err)
	}
	if elapsed > 100*time.Millisecond {
		t.Errorf("VerifyCompany(500ms) during the pause gave up after %v; want at once", elapsed)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the registry saw %d requests; want only the first", n)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	c, err := r.VerifyCompany(ctx, "GB", "10000001", "Northwind Trading Ltd")
	if err != nil || c.Number != "10000001" {
		t.Errorf("VerifyCompany(4s) = %+v, %v; want it to wait for the reset and succeed", c, err)
	}
	if now := time.Now(); now.Before(time.Unix(reset, 0)) {
		t.Errorf("VerifyCompany(4s) returned at %v, before the reset at %v", now, time.Unix(reset, 0))
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the registry saw %d requests, want 2", n)
	}
}

// TestLiveLimitShared checks that every Companies House request shares one
// allowance and the CRO's is its own.
func TestLiveLimitShared(t *testing.T) {
	t.Parallel()
	var chHits, croHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/company/10000001":
			chHits.Add(1)
			fmt.Fprint(w, profileJSON)
		case "/search/companies":
			chHits.Add(1)
			fmt.Fprint(w, `{"items":[]}`)
		case "/cws/companies":
			croHits.Add(1)
			fmt.Fprint(w, `[]`)
		default:
			chHits.Add(1)
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	r := newLiveRegistry(t, srv.URL, Options{
		CompaniesHouseLimit: Limit{Requests: 2, Per: time.Minute},
		CROLimit:            Limit{Requests: 1, Per: time.Minute},
	})
	ctx := context.Background()
	if _, err := r.VerifyCompany(ctx, "GB", "10000001", "Northwind Trading Ltd"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SearchCompanies(ctx, "GB", "acme", 5); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	for name, call := range map[string]func() error{
		"Parties":         func() error { _, err := r.Parties(short, "GB", "10000001"); return err },
		"Filings":         func() error { _, err := r.Filings(short, "GB", "10000001"); return err },
		"SearchCompanies": func() error { _, err := r.SearchCompanies(short, "GB", "acme", 5); return err },
		"OpenFiling": func() error {
			_, err := r.OpenFiling(short, "GB", onboarding.Filing{Document: "https://" + frontendDocHost + "/document/D"})
			return err
		},
	} {
		start := time.Now()
		err := call()
		if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryUnavailable(ukRegistry)); diff != "" {
			t.Errorf("%s with the allowance spent: error mismatch (-got +want):\n%s", name, diff)
		}
		if elapsed := time.Since(start); elapsed > 100*time.Millisecond {
			t.Errorf("%s with the allowance spent gave up after %v; want at once", name, elapsed)
		}
	}
	if n := chHits.Load(); n != 2 {
		t.Errorf("Companies House saw %d requests, want 2", n)
	}
	// The CRO has its own allowance.
	if _, err := r.SearchCompanies(short, "IE", "acme", 5); err != nil {
		t.Errorf("CRO search with the Companies House allowance spent: %v", err)
	}
	if _, err := r.SearchCompanies(short, "IE", "acme", 5); onboarding.AsError(err) == nil ||
		onboarding.AsError(err).Message != onboarding.ErrRegistryUnavailable(ieRegistry).Message {
		t.Errorf("second CRO search with its allowance of 1 spent = %v; want the Irish registry unavailable", err)
	}
	if n := croHits.Load(); n != 1 {
		t.Errorf("the CRO saw %d requests, want 1", n)
	}
}

// TestLiveCRORateLimited: the CRO's Cloudflare answers 200 with "error
// code: 1015"; that is the registry unavailable, and the CRO's allowance
// pauses for a window while Companies House's is untouched.
func TestLiveCRORateLimited(t *testing.T) {
	t.Parallel()
	var croHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search/companies" {
			fmt.Fprint(w, `{"items":[]}`)
			return
		}
		croHits.Add(1)
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		fmt.Fprint(w, "error code: 1015")
	}))
	t.Cleanup(srv.Close)
	r := newLiveRegistry(t, srv.URL, Options{CROLimit: Limit{Requests: 10, Per: 10 * time.Second}})
	ctx := context.Background()
	_, err := r.SearchCompanies(ctx, "IE", "emerald", 5)
	if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryUnavailable(ieRegistry)); diff != "" {
		t.Errorf("CRO search answered 1015: error mismatch (-got +want):\n%s", diff)
	}

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = r.VerifyCompany(short, "IE", "100001", "Emerald Software DAC")
	if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryUnavailable(ieRegistry)); diff != "" {
		t.Errorf("CRO lookup during the pause: error mismatch (-got +want):\n%s", diff)
	}
	if elapsed := time.Since(start); elapsed > 100*time.Millisecond {
		t.Errorf("CRO lookup during the pause gave up after %v; want at once", elapsed)
	}
	if n := croHits.Load(); n != 1 {
		t.Errorf("the CRO saw %d requests, want 1", n)
	}
	if _, err := r.SearchCompanies(short, "GB", "north", 5); err != nil {
		t.Errorf("Companies House search while the CRO pauses: %v", err)
	}
}

// TestLiveFailures covers answers and silences of live registries for each
// kind of call.
func TestLiveFailures(t *testing.T) {
	t.Parallel()
	calls := []struct {
		name     string
		registry string
		call     func(ctx context.Context, r *Registry, base string) error
	}{
		{"VerifyCompany GB", ukRegistry, func(ctx context.Context, r *Registry, base string) error {
			_, err := r.VerifyCompany(ctx, "GB", "10000001", "Northwind Trading Ltd")
			return err
		}},
		{"VerifyCompany IE", ieRegistry, func(ctx context.Context, r *Registry, base string) error {
			_, err := r.VerifyCompany(ctx, "IE", "100001", "Emerald Software DAC")
			return err
		}},
		{"Parties", ukRegistry, func(ctx context.Context, r *Registry, base string) error {
			_, err := r.Parties(ctx, "GB", "10000001")
			return err
		}},
		{"Filings", ukRegistry, func(ctx context.Context, r *Registry, base string) error {
			_, err := r.Filings(ctx, "GB", "10000001")
			return err
		}},
		{"SearchCompanies GB", ukRegistry, func(ctx context.Context, r *Registry, base string) error {
			_, err := r.SearchCompanies(ctx, "GB", "north", 5)
			return err
		}},
		{"SearchCompanies IE", ieRegistry, func(ctx context.Context, r *Registry, base string) error {
			_, err := r.SearchCompanies(ctx, "IE", "emerald", 5)
			return err
		}},
		{"OpenFiling", ukRegistry, func(ctx context.Context, r *Registry, base string) error {
			// A document link on the configured base URL's host is trusted.
			_, err := r.OpenFiling(ctx, "GB", onboarding.Filing{Document: base + "/document/D"})
			return err
		}},
	}
	for _, c := range calls {
		t.Run("500/"+c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(answer(500, `{"error":"Internal server error"}`))
			t.Cleanup(srv.Close)
			r := newLiveRegistry(t, srv.URL, Options{})
			err := c.call(context.Background(), r, srv.URL)
			if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryFailed); diff != "" {
				t.Errorf("error mismatch (-got +want):\n%s\nerror: %v", diff, err)
			}
		})
		t.Run("hanging/"+c.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(release) })
			const timeout = 200 * time.Millisecond
			r := newLiveRegistry(t, srv.URL, Options{Timeout: timeout})
			start := time.Now()
			err := c.call(context.Background(), r, srv.URL)
			elapsed := time.Since(start)
			if diff := cmp.Diff(onboarding.AsError(err), onboarding.ErrRegistryUnavailable(c.registry)); diff != "" {
				t.Errorf("error mismatch (-got +want):\n%s\nerror: %v", diff, err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not show the timeout", err)
			}
			if elapsed < timeout || elapsed > timeout+400*time.Millisecond {
				t.Errorf("gave up after %v, want about %v", elapsed, timeout)
			}
		})
	}
}
