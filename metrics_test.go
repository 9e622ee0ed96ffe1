package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"onboard/config"
	"onboard/metrics"
	"onboard/notify"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/server"
)

// requiredFamilies are the metric families docs/operations.md names, with the
// Go runtime's and the process's.
func requiredFamilies() []string {
	return []string{
		"onboard_http_requests_total", "onboard_http_request_duration_seconds",
		"onboard_registry_requests_total", "onboard_outbox_pending",
		"onboard_webhook_attempts_total", "onboard_mail_sent_total",
		"onboard_webhook_endpoints_disabled",
		"onboard_storage_writes_refused", "onboard_storage_free_bytes", "onboard_storage_reserve_bytes",
		"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes",
	}
}

// scrapeURL gets url and parses it as the Prometheus text format.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("GET %s: Content-Type %q, want the text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// gather collects reg as a scrape would.
func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	list, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]*dto.MetricFamily{}
	for _, f := range list {
		fams[f.GetName()] = f
	}
	return fams
}

// metricSeries maps each series of family name (its label values joined
// by spaces, in label-name order) to its value: a counter's or gauge's,
// a histogram's sample count.
func metricSeries(t *testing.T, fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		labels := m.GetLabel()
		sort.Slice(labels, func(i, j int) bool { return labels[i].GetName() < labels[j].GetName() })
		var vals []string
		for _, l := range labels {
			vals = append(vals, l.GetValue())
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Histogram != nil:
			v = float64(m.GetHistogram().GetSampleCount())
		}
		out[strings.Join(vals, " ")] = v
	}
	return out
}

// jsonLogLine waits (at most 10 seconds) for the JSON log line of p whose
// member key is value, and returns it parsed.
func jsonLogLine(t *testing.T, p *serveProc, key, value string) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		for _, l := range strings.Split(p.stderr.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m[key] == value {
				return m
			}
		}
		select {
		case <-deadline:
			t.Fatalf("no log line with %s %q within 10s\nstderr:\n%s", key, value, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// getWithID sends GET base+path with key and, when set, an X-Request-Id,
// and returns the status and the X-Request-Id answered.
func getWithID(t *testing.T, url, key, id string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Request-Id")
}

// TestServeMetrics runs the binary with JSON logs: /metrics on the API
// listener after real requests, /readyz, request ids echoed or generated,
// and each request's log line.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	p := startServe(t, "--data-dir", filepath.Join(t.TempDir(), "data"), "--log-format", "json")
	key := p.waitForKey(t)
	var created struct {
		ApplicationID string `json:"application_id"`
	}
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, "POST", "/api/external/applications", key, createBody)), &created); err != nil {
		t.Fatal(err)
	}
	status, id := getWithID(t, p.base+"/api/external/applications/"+created.ApplicationID, key, "op-7")
	if status != http.StatusOK || id != "op-7" {
		t.Errorf("get: status %d, X-Request-Id %q; want 200 and op-7 echoed", status, id)
	}
	status, generated := getWithID(t, p.base+"/nope/"+created.ApplicationID, "", "bad id!")
	if status != http.StatusNotFound || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(generated) {
		t.Errorf("unknown path: status %d, X-Request-Id %q; want 404 and a generated id", status, generated)
	}

	line := jsonLogLine(t, p, "request_id", "op-7")
	if ms, ok := line["latency_ms"].(float64); !ok || ms < 0 {
		t.Errorf("latency_ms = %v, want a number", line["latency_ms"])
	}
	if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["time"])); err != nil {
		t.Errorf("time = %v: %v", line["time"], err)
	}
	delete(line, "latency_ms")
	delete(line, "time")
	delete(line, "key") // the bootstrap key's client id
	want := map[string]any{"level": "INFO", "msg": "request", "method": "GET", "route": "/api/external/applications/:id",
		"status": float64(200), "request_id": "op-7", "org": "default"}
	if diff := cmp.Diff(want, line); diff != "" {
		t.Errorf("request log line (-want +got):\n%s", diff)
	}
	line = jsonLogLine(t, p, "request_id", generated)
	if line["route"] != "unmatched" || line["path"] != "/nope/"+created.ApplicationID || line["status"] != float64(404) {
		t.Errorf("unmatched request's log line = %v", line)
	}

	fams := scrapeURL(t, p.base+"/metrics")
	for _, name := range requiredFamilies() {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	requests := metricSeries(t, fams, "onboard_http_requests_total")
	for _, s := range []string{"201 POST /api/external/applications", "200 GET /api/external/applications/:id", "404 GET unmatched"} {
		if requests[s] != 1 {
			t.Errorf("onboard_http_requests_total{%s} = %v, want 1 (all: %v)", s, requests[s], requests)
		}
	}
	if diff := cmp.Diff(map[string]float64{"sent": 1, "failed": 0}, metricSeries(t, fams, "onboard_mail_sent_total")); diff != "" {
		t.Errorf("onboard_mail_sent_total (-want +got):\n%s", diff)
	}
	// Create checked the company against the recorded registry.
	if calls := metricSeries(t, fams, "onboard_registry_requests_total"); calls["ok uk"] < 1 || calls["error uk"] != 0 || len(calls) != 10 {
		t.Errorf("onboard_registry_requests_total = %v, want uk ok calls and every series", calls)
	}
	if diff := cmp.Diff(map[string]float64{"": 0}, metricSeries(t, fams, "onboard_outbox_pending")); diff != "" {
		t.Errorf("onboard_outbox_pending (-want +got):\n%s", diff)
	}

	body := p.wantStatus(t, http.StatusOK, "GET", "/readyz", "", "")
	wantReady := map[string]any{"status": "ok", "checks": map[string]any{"store": "ok", "disk": "ok", "registry_documents": "ok", "webhook_delivery": "ok", "rfi_expiry": "ok", "blob_sweep": "ok"}}
	if diff := cmp.Diff(wantReady, decodeJSON(t, body)); diff != "" {
		t.Errorf("readyz (-want +got):\n%s", diff)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// metricsPattern finds the address of the metrics listener in serve's
// "onboard serving" log line.
var metricsPattern = regexp.MustCompile(`msg="onboard serving" .*metrics=(127\.0\.0\.1:\d+)`)

// TestServeMetricsListener runs the binary with [metrics] listen on a
// free port: /metrics is served there, and not on the API listener.
func TestServeMetricsListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte("[metrics]\nlisten = \"127.0.0.1:0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "--config", config, "--data-dir", filepath.Join(dir, "data"))
	m := p.waitForLog(t, metricsPattern, 10*time.Second)
	if m[1] == strings.TrimPrefix(p.base, "http://") {
		t.Fatalf("metrics on the API's address %s", m[1])
	}
	status, body := p.call(t, "GET", "/metrics", "", "")
	if status != http.StatusNotFound || body != `{"error":"Not found"}` {
		t.Errorf("API listener /metrics = %d %s, want 404", status, body)
	}
	p.wantStatus(t, http.StatusOK, "GET", "/healthz", "", "")

	fams := scrapeURL(t, "http://"+m[1]+"/metrics")
	for _, name := range requiredFamilies() {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	requests := metricSeries(t, fams, "onboard_http_requests_total")
	if diff := cmp.Diff(map[string]float64{"200 GET /healthz": 1, "404 GET unmatched": 1}, requests); diff != "" {
		t.Errorf("onboard_http_requests_total (-want +got):\n%s", diff)
	}
	resp, err := client.Get("http://" + m[1] + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("metrics listener /readyz = %d, want 404: it serves /metrics only", resp.StatusCode)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestServeMetricsListenerTaken: a metrics address that cannot be bound
// stops serve before it prints the one-time sandbox key.
func TestServeMetricsListenerTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte("[metrics]\nlisten = \""+taken.Addr().String()+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, "serve", "--config", config, "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	if r.code != 1 || !strings.Contains(r.stderr, "metrics: listen on "+taken.Addr().String()) || r.stdout != "" {
		t.Errorf("serve with its metrics address taken: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// readyz gets /readyz from h.
func readyz(t *testing.T, h http.Handler) (int, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("readyz body %q: %v", w.Body, err)
	}
	return w.Code, body
}

// TestReadyzFollowsJobsAndStore runs serve's real jobs on a real data
// directory: /readyz is 503 before they start, 200 while they run, 503
// naming the job once one stops, and the store once it is closed.
func TestReadyzFollowsJobsAndStore(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	discard := slog.New(slog.DiscardHandler)
	a, err := openMeteredApp(cfg, discard, metrics.New())
	if err != nil {
		t.Fatal(err)
	}
	defer a.close(io.Discard)
	j := newJobs(discard)
	h := server.New(server.Options{Service: a.svc, Responses: a.store, Readiness: []server.Probe{
		{Name: "store", Check: a.store.Ping},
		j.probe(jobRegistryDocuments), j.probe(jobWebhookDelivery), j.probe(jobRFIExpiry),
	}}).Handler()
	want := func(status int, failed []any, checks map[string]any) {
		t.Helper()
		body := map[string]any{"status": "ok", "checks": checks}
		if failed != nil {
			body["status"], body["failed"] = "unavailable", failed
		}
		gotStatus, got := readyz(t, h)
		if gotStatus != status {
			t.Errorf("readyz = %d, want %d", gotStatus, status)
		}
		if diff := cmp.Diff(body, got); diff != "" {
			t.Errorf("readyz body (-want +got):\n%s", diff)
		}
	}

	want(503, []any{"registry_documents", "webhook_delivery", "rfi_expiry"}, map[string]any{
		"store": "ok", "registry_documents": "not started", "webhook_delivery": "not started", "rfi_expiry": "not started"})

	ctx, stopAll := context.WithCancel(context.Background())
	defer stopAll()
	webhooksCtx, stopWebhooks := context.WithCancel(ctx)
	j.start(jobRegistryDocuments, func() error { return a.svc.RunRegistryDocuments(ctx) })
	j.start(jobWebhookDelivery, func() error { return notify.RunWebhooks(webhooksCtx, a.svc) })
	j.start(jobRFIExpiry, func() error { return a.svc.RunRFIExpiry(ctx) })
	want(200, nil, map[string]any{"store": "ok", "registry_documents": "ok", "webhook_delivery": "ok", "rfi_expiry": "ok"})

	// The webhook job stops: readyz says so once it has returned.
	stopWebhooks()
	deadline := time.Now().Add(10 * time.Second)
	for code, _ := readyz(t, h); code == http.StatusOK; code, _ = readyz(t, h) {
		if time.Now().After(deadline) {
			t.Fatal("readyz still 200 10s after the webhook job was stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	want(503, []any{"webhook_delivery"}, map[string]any{
		"store": "ok", "registry_documents": "ok", "webhook_delivery": "stopped: context canceled", "rfi_expiry": "ok"})

	stopAll()
	j.wait()
	if err := a.store.Close(); err != nil {
		t.Fatal(err)
	}
	want(503, []any{"store", "registry_documents", "webhook_delivery", "rfi_expiry"}, map[string]any{
		"store": "the store is closed", "registry_documents": "stopped: context canceled",
		"webhook_delivery": "stopped: context canceled", "rfi_expiry": "stopped: context canceled"})
}

// TestJobStoppedByError: a job that fails is reported with its error.
func TestJobStoppedByError(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	a, err := openApp(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close(io.Discard)
	// A Service without a webhook transport cannot run the delivery job.
	svc, err := onboarding.New(onboarding.Options{Store: a.store, PageCounter: pdf.PageCount})
	if err != nil {
		t.Fatal(err)
	}
	j := newJobs(log)
	j.start(jobWebhookDelivery, func() error { return notify.RunWebhooks(context.Background(), svc) })
	j.wait()
	err = j.probe(jobWebhookDelivery).Check(context.Background())
	if got, want := fmt.Sprint(err), "stopped: webhooks: no transport is configured"; got != want {
		t.Errorf("probe = %q, want %q", got, want)
	}
	if !strings.Contains(logs.String(), `msg="webhook delivery job stopped" err="webhooks: no transport is configured"`) {
		t.Errorf("log %q does not say the job stopped", logs.String())
	}
}

// TestOutboxGauges reads the outbox and the disabled endpoints of a real
// store at scrape time; the outbox count lasts its refresh.
func TestOutboxGauges(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close(io.Discard)
	now := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewStoreCollector(a.store, time.Minute, func() time.Time { return now }))
	want := func(pending float64, disabled map[string]float64) {
		t.Helper()
		fams := gather(t, reg)
		if got := metricSeries(t, fams, "onboard_outbox_pending")[""]; got != pending {
			t.Errorf("onboard_outbox_pending = %v, want %v", got, pending)
		}
		if diff := cmp.Diff(disabled, metricSeries(t, fams, "onboard_webhook_endpoints_disabled")); diff != "" {
			t.Errorf("onboard_webhook_endpoints_disabled (-want +got):\n%s", diff)
		}
	}
	want(0, map[string]float64{"operator": 0, "gone": 0, "failing": 0})

	var ids []string
	for range 3 {
		_, ep, err := a.svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "default", URL: "http://127.0.0.1:9/hook"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ep.ID)
		if _, err := a.svc.TestEndpoint(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	want(0, map[string]float64{"operator": 0, "gone": 0, "failing": 0}) // the count of a minute ago
	now = now.Add(time.Minute)
	want(3, map[string]float64{"operator": 0, "gone": 0, "failing": 0})

	if _, _, err := a.svc.DisableEndpoint(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	for i, reason := range []string{onboarding.DisabledGone, fmt.Sprintf("%d events in a row failed every delivery attempt", onboarding.DisableAfterExhausted)} {
		if _, err := a.store.UpdateEndpoint(ctx, ids[i+1], func(ep *onboarding.Endpoint) error {
			ep.Enabled, ep.DisabledReason = false, reason
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	want(3, map[string]float64{"operator": 1, "gone": 1, "failing": 1})
	now = now.Add(time.Minute)
	want(0, map[string]float64{"operator": 1, "gone": 1, "failing": 1}) // disabling dropped their queues
}

// TestCountingTransports counts real webhook attempts and emails by
// outcome, through the wrappers the root puts around notify's transports.
func TestCountingTransports(t *testing.T) {
	m := metrics.New()
	hooks := m.Webhooks(notify.NewWebhooks(notify.WebhookOptions{Timeout: 5 * time.Second, AllowPrivate: true, AllowHTTP: true}))
	answer := func(status int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/hook"
	closed.Close()
	for _, url := range []string{answer(200), answer(204), answer(410), answer(500), answer(429), closedURL, "ftp://example.com/hook"} {
		_, _ = hooks.Send(context.Background(), onboarding.WebhookRequest{URL: url, EventID: "evt_01JD0000000000000000000000",
			Body: []byte(`{}`), Keys: [][]byte{bytes.Repeat([]byte{1}, 32)}, Timestamp: time.Now()})
	}
	if err := hooks.CheckURL(context.Background(), "ftp://example.com/hook"); err == nil {
		t.Error("CheckURL of an ftp URL passed: the wrapper must keep the transport's check")
	}

	outbox, err := notify.NewOutbox(t.TempDir(), "Onboarding <onboarding@example.com>", slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	smtpURL := "smtp://" + refused.Addr().String()
	refused.Close()
	smtp, err := notify.NewSMTP(smtpURL, "onboarding@example.com", notify.SMTPOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	invite := onboarding.Invite{To: onboarding.Recipient{Email: "jane@example.com"}, OrgName: "Acme", Link: "https://onboard.test/a/x"}
	if err := m.Mailer(outbox).Send(context.Background(), invite); err != nil {
		t.Fatal(err)
	}
	if err := m.Mailer(smtp).Send(context.Background(), invite); err == nil {
		t.Fatal("SMTP to a closed port sent the message")
	}
	if got := m.Mailer(nil); got != nil {
		t.Errorf("mailer(nil) = %v, want nil: no transport stays none", got)
	}

	reg, err := newRegistry(config.Default(), m.RegistryCounter())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.VerifyCompany(context.Background(), "GB", "10000001", ""); err != nil {
		t.Fatal(err)
	}

	fams := gather(t, m.Registry())
	wantHooks := map[string]float64{"delivered": 2, "gone": 1, "http_error": 2, "no_answer": 2}
	if diff := cmp.Diff(wantHooks, metricSeries(t, fams, "onboard_webhook_attempts_total")); diff != "" {
		t.Errorf("onboard_webhook_attempts_total (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"sent": 1, "failed": 1}, metricSeries(t, fams, "onboard_mail_sent_total")); diff != "" {
		t.Errorf("onboard_mail_sent_total (-want +got):\n%s", diff)
	}
	calls := metricSeries(t, fams, "onboard_registry_requests_total")
	wantCalls := map[string]float64{}
	for _, r := range []string{"uk", "ie"} {
		for _, o := range []string{"ok", "not_found", "throttled", "unavailable", "error"} {
			wantCalls[o+" "+r] = 0
		}
	}
	wantCalls["ok uk"] = 1
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("onboard_registry_requests_total (-want +got):\n%s", diff)
	}
}

// BenchmarkOutboxCount is what the collector does when its count has
// lapsed: walk the delivery queue of a real store, here 5,000 queued
// deliveries (a scrape within the refresh skips it).
func BenchmarkOutboxCount(b *testing.B) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer a.close(io.Discard)
	_, ep, err := a.svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "default", URL: "http://127.0.0.1:9/hook"})
	if err != nil {
		b.Fatal(err)
	}
	const queued = 5000
	for range queued {
		if _, err := a.svc.TestEndpoint(ctx, ep.ID); err != nil {
			b.Fatal(err)
		}
	}
	c := metrics.NewStoreCollector(a.store, 0, time.Now)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n, err := c.QueuedDeliveries(ctx)
		if err != nil || n != queued {
			b.Fatalf("queued = %d, %v; want %d", n, err, queued)
		}
	}
}

// BenchmarkScrape serves a whole scrape of serve's registry: Go runtime,
// process, counters and the store's gauges within the outbox refresh.
func BenchmarkScrape(b *testing.B) {
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	m := metrics.New()
	a, err := openMeteredApp(cfg, slog.New(slog.DiscardHandler), m)
	if err != nil {
		b.Fatal(err)
	}
	defer a.close(io.Discard)
	m.WatchStore(a.store)
	h := server.New(server.Options{Service: a.svc, Responses: a.store, Metrics: m.Registry()}).Handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != http.StatusOK {
			b.Fatalf("metrics = %d", w.Code)
		}
	}
}

// TestServeLogFormatFlag: only text and json are log formats.
func TestServeLogFormatFlag(t *testing.T) {
	t.Parallel()
	r := runBinary(t, "serve", "--log-format", "xml", "--data-dir", filepath.Join(t.TempDir(), "data"))
	if r.code != 2 || !strings.HasPrefix(r.stderr, `onboard: --log-format must be one of "text","json" but got "xml"`+"\n") || r.stdout != "" {
		t.Errorf("serve --log-format xml: code %d, stdout %q, stderr %q; want 2 and the choices", r.code, r.stdout, r.stderr)
	}
}
