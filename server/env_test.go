package server

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"onboard/blobs"
	"onboard/notify"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/registry"
	"onboard/server/form"
	"onboard/storage/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// clock is a settable time source shared by the service and the server;
// a real clock follows the wall clock instead.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	real bool
}

func (c *clock) Now() time.Time {
	if c.real {
		return time.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// mailbox records the emails sent, with the words notify writes for
// them, or fails every send when fail is set.
type mailbox struct {
	mu   sync.Mutex
	sent []notify.Email
	fail error
}

func (m *mailbox) Send(_ context.Context, msg onboarding.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	e, err := notify.Render(msg)
	if err != nil {
		return err
	}
	m.sent = append(m.sent, e)
	return nil
}

func (m *mailbox) messages() []notify.Email {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]notify.Email(nil), m.sent...)
}

// envOptions adjusts newEnv.
type envOptions struct {
	rate          float64
	burst         int
	maxJSON       int64
	mailer        onboarding.Mailer // nil: a recording mailbox
	deterministic bool              // seeded randomness, for golden files
	jobs          bool              // run the registry documents job
	rfiExpiry     bool              // run the RFI expiry sweep
	maxUpload     int64             // 0: the default 25 MiB
	// sessionTimeout is the form sessions' timeout; 0: the default.
	sessionTimeout time.Duration
	// webhooks, when set, is the retry schedule of a webhook delivery job
	// running beside the server, with the real HTTP transport (sandbox:
	// loopback allowed) and the real clock (receivers check signature
	// timestamps against it).
	webhooks []time.Duration
	// transport is the webhook transport (production address checks,
	// say); without it, and without webhooks, endpoints cannot be added.
	transport onboarding.WebhookTransport
	// orgs replaces testOrganizations (a form file's configuration, say).
	orgs []*onboarding.Organization
	// production serves as production does (no test helpers); the
	// default is sandbox.
	production bool
	// reflectViews leaves the Service's view encoder unset (the reflecting
	// one); the default wires AppendView, as the program does.
	reflectViews bool
	// logger receives the Service's, the server's and the form's logs;
	// nil: discarded.
	logger *slog.Logger
	// metrics, when set, is the registry of the server's HTTP metrics.
	metrics *prometheus.Registry
	// responses, when set, wraps the store as the server's ResponseStore
	// (one that loses saves, say).
	responses func(storetest.Store) ResponseStore
	// restart, when set, is an env whose process "died": its store is
	// closed, and the new env reopens its database and blob directory
	// and keeps its API keys, as a restarted server would.
	restart *env
}

// env is the whole stack: real Badger in a temp dir, the fixture registry,
// the real Service and the real router and middleware.
type env struct {
	t *testing.T
	h http.Handler
	// unchecked is h without the contract check, for tests that time a
	// request: the check runs beside the next request and competes for CPU.
	unchecked http.Handler
	svc       *onboarding.Service
	store     storetest.Store
	mail      *mailbox
	blobs     *blobs.Store
	blobsDir  string         // the blob store's directory
	data      storetest.Data // where the store keeps its records
	clock     *clock
	keys      map[string]string // name → full key
	// passes follows the registry documents job (envOptions.jobs).
	passes *jobPasses
	// sweeps follows the RFI expiry sweep (envOptions.rfiExpiry).
	sweeps *jobPasses
}

var testNow = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)

// The RFI agents of the test organizations: acme's default, an inactive
// one, a second active one, and globex's default.
const (
	acmeAgent      = "0b6f3c2e-6a8d-4f1e-9c3b-2d7e5a1f4c80"
	acmeAgentIdle  = "1c7a4d3f-7b9e-4a2f-8d4c-3e8f6b2a5d91"
	acmeAgentQuick = "2d8b5e4a-8c0f-4b3a-9e5d-4f9a7c3b6ea2"
	globexAgent    = "3e9c6f5b-9d1a-4c4b-8f6e-5a0b8d4c7fb3"
)

func testOrganizations(t testing.TB) []*onboarding.Organization {
	t.Helper()
	std := onboarding.StandardForm()
	return []*onboarding.Organization{
		{ID: "acme", Name: "Acme Payments", DefaultConfig: "acme-standard", TermsURL: "https://acme.example/terms", Configs: []*onboarding.Configuration{
			{ID: "acme-standard", Form: std, Countries: []string{"GB", "IE", "FR"}, RegistryDocuments: true},
			{ID: "acme-select", Form: std, Countries: []string{"GB", "IE", "FR"}, CompanySelection: true},
		}, RFIAgents: []*onboarding.RFIAgent{
			{ID: acmeAgent, Name: "Document collection", Default: true, Active: true, Documents: []string{"bank_statement", "proof_of_address"}, ExpiryDays: 14},
			{ID: acmeAgentIdle, Name: "Retired", Active: false, Documents: []string{"bank_statement"}, ExpiryDays: 14},
			{ID: acmeAgentQuick, Name: "Certificate only", Active: true, Documents: []string{"certificate_of_incorporation"}, ExpiryDays: 3},
		}},
		{ID: "globex", Name: "Globex", DefaultConfig: "globex-standard", CustomDomain: "onboarding.globex.example", CustomDomainActive: true,
			Configs:   []*onboarding.Configuration{{ID: "globex-standard", Form: std, Countries: []string{"GB"}}},
			RFIAgents: []*onboarding.RFIAgent{{ID: globexAgent, Name: "Globex documents", Default: true, Active: true, Documents: []string{"proof_of_address"}, ExpiryDays: 14}}},
		{ID: "empty", Name: "No configurations"},
	}
}

func newEnv(t testing.TB, opts envOptions) *env {
	t.Helper()
	blobsDir := filepath.Join(t.TempDir(), "blobs")
	var data storetest.Data
	if opts.restart != nil {
		if err := opts.restart.store.Close(); err != nil {
			t.Fatal(err)
		}
		data, blobsDir = opts.restart.data, opts.restart.blobsDir
	} else {
		data = storetest.NewData(t)
	}
	store := data.Open(t)
	reg, err := registry.New(registry.Options{Mode: "fixtures", Fixtures: os.DirFS("../testdata/registry")})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: testNow, real: opts.webhooks != nil}
	mail := &mailbox{}
	var mailer onboarding.Mailer = mail
	if opts.mailer != nil {
		mailer = opts.mailer
	}
	files, err := blobs.Open(blobsDir)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := blobs.NewSigner(bytes.Repeat([]byte{7}, 32), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	o := onboarding.Options{
		Store: store, Registry: reg, Mailer: mailer, Organizations: opts.orgs,
		PublicURL: "https://onboard.test", Now: clk.Now, Blobs: files, Links: signer,
		RegistryRetries: []time.Duration{time.Millisecond},
		SessionKey:      bytes.Repeat([]byte{9}, 32), MaxUploadBytes: opts.maxUpload,
		PageCounter: pdf.PageCount, Logger: opts.logger,
	}
	if o.Organizations == nil {
		o.Organizations = testOrganizations(t)
	}
	o.Webhooks = opts.transport
	if opts.webhooks != nil {
		if o.Webhooks == nil {
			o.Webhooks = notify.NewWebhooks(notify.WebhookOptions{UserAgent: "onboard/test", Timeout: 2 * time.Second, AllowPrivate: true, AllowHTTP: true})
		}
		o.RetrySchedule = opts.webhooks
		o.WebhookTimeout = 2 * time.Second
	}
	if !opts.reflectViews {
		o.AppendView = AppendView
	}
	if opts.deterministic {
		o.Random = rand.NewChaCha8([32]byte{1, 2, 3})
	}
	passes, sweeps := newJobPasses(), newJobPasses()
	o.RegistryDocumentsIdle = passes.end
	o.RFIExpiryIdle = sweeps.end
	svc, err := onboarding.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if opts.maxJSON == 0 {
		opts.maxJSON = 1 << 20
	}
	sessions, err := form.NewSignedSessions(o.SessionKey)
	if err != nil {
		t.Fatal(err)
	}
	pages := form.New(form.Options{Service: svc, Sessions: sessions, SessionTimeout: opts.sessionTimeout, Now: clk.Now, PublicURL: "https://onboard.test",
		Logger: opts.logger})
	var responses ResponseStore = store
	if opts.responses != nil {
		responses = opts.responses(store)
	}
	srv := New(Options{Service: svc, Responses: responses, Pages: pages, RatePerSecond: opts.rate, Burst: opts.burst, MaxJSONBytes: opts.maxJSON, Now: clk.Now,
		Sandbox: !opts.production, Logger: opts.logger, Metrics: opts.metrics})
	// Every exchange with the API is checked against its OpenAPI document.
	e := &env{h: contractChecked(t, srv.Handler()), unchecked: srv.Handler(), svc: svc, store: store, mail: mail, clock: clk, keys: map[string]string{}, blobs: files, blobsDir: blobsDir, data: data}
	e.passes, e.sweeps = passes, sweeps
	if opts.rfiExpiry {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = svc.RunRFIExpiry(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	if opts.jobs {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = svc.RunRegistryDocuments(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done }) // before the store closes
	}
	if opts.webhooks != nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = notify.RunWebhooks(ctx, svc)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
	}
	if opts.restart != nil {
		e.keys = opts.restart.keys
		return e
	}
	for name, spec := range map[string]onboarding.KeySpec{
		"acme":        {OrgID: "acme", Name: "acme all"},
		"acme-read":   {OrgID: "acme", Name: "acme read", Scopes: []string{"applications:read"}},
		"acme-create": {OrgID: "acme", Name: "acme create", Scopes: []string{"applications:create"}},
		"acme-write":  {OrgID: "acme", Name: "acme write", Scopes: []string{"applications:write"}},
		"globex":      {OrgID: "globex", Name: "globex all"},
		"empty":       {OrgID: "empty", Name: "empty org"},
		"revoked":     {OrgID: "acme", Name: "revoked"},
		"expiring":    {OrgID: "acme", Name: "expiring", ExpiresIn: time.Hour},
	} {
		key, k, err := svc.CreateAPIKey(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		e.keys[name] = key
		if name == "revoked" {
			if _, err := svc.RevokeAPIKey(context.Background(), k.ClientID); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

// do sends a request through the real router; key names an env key, or is
// used as the raw Authorization header when it starts with "raw:".
func (e *env) do(method, path, key, body string) *httptest.ResponseRecorder {
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	switch {
	case strings.HasPrefix(key, "raw:"):
		r.Header.Set("Authorization", strings.TrimPrefix(key, "raw:"))
	case key != "":
		k, ok := e.keys[key]
		if !ok {
			panic("unknown test key " + key)
		}
		r.Header.Set("Authorization", "Bearer "+k)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

// decode parses a JSON response body into a generic value for cmp.Diff.
func decode(t testing.TB, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("response %d is not a JSON object: %v\n%s", w.Code, err, w.Body)
	}
	return v
}

// wantError asserts status and the exact error body.
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, body map[string]any) {
	t.Helper()
	if w.Code != status {
		t.Errorf("status = %d, want %d; body %s", w.Code, status, w.Body)
	}
	if diff := cmp.Diff(body, decode(t, w)); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
}

func errBody(msg string) map[string]any { return map[string]any{"error": msg} }

// create makes an application for acme (Northwind, GB) and returns its id.
func (e *env) create(t testing.TB, key, body string) string {
	t.Helper()
	if body == "" {
		body = `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`
	}
	w := e.do("POST", "/api/external/applications", key, body)
	if w.Code != http.StatusCreated {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	return decode(t, w)["application_id"].(string)
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	var pretty map[string]any
	if err := json.Unmarshal(got, &pretty); err != nil {
		t.Fatal(err)
	}
	got, _ = json.MarshalIndent(pretty, "", "  ")
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
