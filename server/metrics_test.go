package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"onboard/server/web"
)

// meteredEnv is newEnv's stack served by a Server with metrics on reg and
// its log lines, JSON, in the returned buffer (at level). Requests run
// synchronously through ServeHTTP, so the buffer needs no lock.
func meteredEnv(t testing.TB, reg *prometheus.Registry, level slog.Level) (*env, *bytes.Buffer) {
	t.Helper()
	e := newEnv(t, envOptions{})
	logs := &bytes.Buffer{}
	srv := New(Options{Service: e.svc, Responses: e.store, Now: e.clock.Now, Metrics: reg,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level}))})
	e.h = srv.Handler()
	return e, logs
}

// scrape gets path from h and parses it as the Prometheus text format.
func scrape(t *testing.T, h http.Handler, path string) map[string]*dto.MetricFamily {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return fams
}

// series maps each series of family name (its label values joined by
// spaces, in label-name order) to its value: a counter's or gauge's value,
// a histogram's sample count.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string) map[string]float64 {
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
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			v = m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			v = m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			v = float64(m.GetHistogram().GetSampleCount())
		default:
			t.Fatalf("%s: unexpected type %v", name, f.GetType())
		}
		out[strings.Join(vals, " ")] = v
	}
	return out
}

// TestMetricsCountRequestsByRoute scrapes /metrics after real requests:
// each is counted under its route pattern (never its path), its method and
// its status; requests no route matched share one label.
func TestMetricsCountRequestsByRoute(t *testing.T) {
	reg := prometheus.NewRegistry()
	e, _ := meteredEnv(t, reg, slog.LevelInfo)
	id := e.create(t, "acme", "")
	for range 2 {
		if w := e.do("GET", "/api/external/applications/"+id, "acme", ""); w.Code != http.StatusOK {
			t.Fatalf("get = %d %s", w.Code, w.Body)
		}
	}
	requests := []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/api/external/applications/00000000-0000-4000-8000-000000000000", "acme", 404},
		{"GET", "/api/external/applications/" + id, "", 401},
		{"DELETE", "/api/external/applications", "acme", 405},
		{"GET", "/nope/" + id, "", 404},
		{"GET", "/api/external/nope", "acme", 404},
		{"BREW", "/nope", "", 404},
		{"GET", "/healthz", "", 200},
		{"GET", "/readyz", "", 200},
	}
	for _, r := range requests {
		if w := e.do(r.method, r.path, r.key, ""); w.Code != r.status {
			t.Fatalf("%s %s = %d, want %d: %s", r.method, r.path, w.Code, r.status, w.Body)
		}
	}

	fams := scrape(t, e.h, "/metrics")
	// Labels in name order: code, method, route.
	want := map[string]float64{
		"201 POST /api/external/applications":    1,
		"200 GET /api/external/applications/:id": 2,
		"404 GET /api/external/applications/:id": 1,
		"401 GET /api/external/applications/:id": 1,
		"405 DELETE /api/external/applications":  1,
		"404 GET " + unmatchedRoute:              2,
		"404 other " + unmatchedRoute:            1,
		"200 GET /healthz":                       1,
		"200 GET /readyz":                        1,
	}
	if diff := cmp.Diff(want, series(t, fams, "onboard_http_requests_total")); diff != "" {
		t.Errorf("onboard_http_requests_total (-want +got):\n%s", diff)
	}
	// Labels: method, route.
	wantDurations := map[string]float64{
		"POST /api/external/applications":    1,
		"GET /api/external/applications/:id": 4,
		"DELETE /api/external/applications":  1,
		"GET " + unmatchedRoute:              2,
		"other " + unmatchedRoute:            1,
		"GET /healthz":                       1,
		"GET /readyz":                        1,
	}
	if diff := cmp.Diff(wantDurations, series(t, fams, "onboard_http_request_duration_seconds")); diff != "" {
		t.Errorf("onboard_http_request_duration_seconds sample counts (-want +got):\n%s", diff)
	}
	h := fams["onboard_http_request_duration_seconds"]
	if got := h.GetType(); got != dto.MetricType_HISTOGRAM {
		t.Errorf("onboard_http_request_duration_seconds is a %v, want a histogram", got)
	}
	if got := len(h.GetMetric()[0].GetHistogram().GetBucket()); got != 15 {
		t.Errorf("histogram buckets = %d, want 15 (14 bounds and +Inf)", got)
	}

	// The scrape itself is counted once it is answered.
	if got := series(t, scrape(t, e.h, "/metrics"), "onboard_http_requests_total")["200 GET /metrics"]; got != 1 {
		t.Errorf("scrapes counted = %v, want 1", got)
	}
}

// TestMetricsSharedRegistry serves two Servers from one registry: the
// second shares the first's collectors instead of failing to register.
func TestMetricsSharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, _ := meteredEnv(t, reg, slog.LevelInfo)
	b, _ := meteredEnv(t, reg, slog.LevelInfo)
	a.do("GET", "/healthz", "", "")
	b.do("GET", "/healthz", "", "")
	if got := series(t, scrape(t, a.h, "/metrics"), "onboard_http_requests_total")["200 GET /healthz"]; got != 2 {
		t.Errorf("healthz requests = %v, want 2", got)
	}
}

// TestNoMetricsWithoutRegistry checks that a Server built without a
// registry has no /metrics.
func TestNoMetricsWithoutRegistry(t *testing.T) {
	e := newEnv(t, envOptions{})
	wantError(t, e.do("GET", "/metrics", "", ""), http.StatusNotFound, errBody("Not found"))
}

// TestRequestID checks that the real router answers with web.RequestID's
// X-Request-Id: a sane id the client sent is echoed, and one is generated
// when none was sent. server/web's TestRequestID holds the rules (which
// ids are echoed, which replaced) through the same middleware.
func TestRequestID(t *testing.T) {
	e := newEnv(t, envOptions{})
	sent := "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13"
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Header.Set("X-Request-Id", sent)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if got := w.Header().Get("X-Request-Id"); got != sent {
		t.Errorf("X-Request-Id = %q, want %q echoed", got, sent)
	}
	if got := e.do("GET", "/healthz", "", "").Header().Get("X-Request-Id"); len(got) != 16 || strings.Trim(got, "0123456789abcdef") != "" {
		t.Errorf("X-Request-Id = %q, want 16 generated hex digits", got)
	}
}

// TestRequestLogLines parses the JSON log lines of requests: each carries
// method, route (the pattern, not the path), status, latency and request
// id, with the path only when no route matched. Successful probes are
// logged at debug level only.
func TestRequestLogLines(t *testing.T) {
	e, logs := meteredEnv(t, prometheus.NewRegistry(), slog.LevelInfo)
	id := e.create(t, "acme", "")
	logs.Reset()

	r := httptest.NewRequest("GET", "/api/external/applications/"+id, nil)
	r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
	r.Header.Set("X-Request-Id", "req-42")
	e.h.ServeHTTP(httptest.NewRecorder(), r)
	e.do("GET", "/nope", "", "")
	e.do("GET", "/healthz", "", "")
	e.do("GET", "/readyz", "", "")

	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		if _, ok := m["latency_ms"].(float64); !ok {
			t.Errorf("log line %s: latency_ms is not a number", l)
		}
		delete(m, "time")
		delete(m, "latency_ms")
		lines = append(lines, m)
	}
	k, err := e.svc.Authenticate(t.Context(), e.keys["acme"])
	if err != nil {
		t.Fatal(err)
	}
	unmatchedID := "" // generated: read from the line
	if len(lines) == 2 {
		unmatchedID, _ = lines[1]["request_id"].(string)
	}
	want := []map[string]any{
		{"level": "INFO", "msg": "request", "method": "GET", "route": "/api/external/applications/:id", "status": float64(200),
			"request_id": "req-42", "key": k.ClientID, "org": "acme"},
		{"level": "INFO", "msg": "request", "method": "GET", "route": unmatchedRoute, "status": float64(404),
			"request_id": unmatchedID, "path": "/nope"},
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
	if len(unmatchedID) != 16 {
		t.Errorf("generated request id %q in the log, want 16 hex digits", unmatchedID)
	}

	// At debug level the probes are logged too.
	e, logs = meteredEnv(t, prometheus.NewRegistry(), slog.LevelDebug)
	e.do("GET", "/healthz", "", "")
	var probe map[string]any
	if err := json.Unmarshal(logs.Bytes(), &probe); err != nil {
		t.Fatalf("probe log %q: %v", logs.String(), err)
	}
	if probe["level"] != "DEBUG" || probe["route"] != "/healthz" || probe["status"] != float64(200) {
		t.Errorf("probe log line = %v", probe)
	}
}

// TestUnmatchedPathHidesSlug: a link mangled in transit matches no route,
// and its line shows the path without the slug, a credential.
func TestUnmatchedPathHidesSlug(t *testing.T) {
	e, logs := meteredEnv(t, prometheus.NewRegistry(), slog.LevelInfo)
	link := e.primaryLink(t, e.create(t, "acme", ""))
	slug := link[strings.LastIndex(link, "/")+1:]
	logs.Reset()
	e.do("GET", "/a/"+slug+"/", "", "")
	e.do("GET", "/r/"+slug+"x/y?auth_code=ABC", "", "")
	if strings.Contains(logs.String(), slug) || strings.Contains(logs.String(), "ABC") {
		t.Errorf("the log holds the slug or the code:\n%s", logs)
	}
	for _, want := range []string{`"path":"/a/:slug/"`, `"path":"/r/:slug/y"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
	for path, want := range map[string]string{"/a/": "/a/:slug", "/a/s": "/a/:slug", "/nope": "/nope", "/api/a/x": "/api/a/:slug",
		"//a/s/x": "//a/:slug/x", "/A/s": "/A/:slug", "/prefix/r/s/y": "/prefix/r/:slug/y", "/a/a/s": "/a/:slug/:slug"} {
		if got := web.LoggedPath(path); got != want {
			t.Errorf("LoggedPath(%q) = %q, want %q", path, got, want)
		}
	}
}

// BenchmarkGetApplicationMetrics is BenchmarkGetApplication with and
// without the HTTP metrics, for the cost of counting each request.
func BenchmarkGetApplicationMetrics(b *testing.B) {
	for _, metered := range []bool{false, true} {
		name := "without_metrics"
		if metered {
			name = "with_metrics"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, envOptions{})
			opts := Options{Service: e.svc, Responses: e.store, Now: e.clock.Now}
			if metered {
				opts.Metrics = prometheus.NewRegistry()
			}
			e.h = New(opts).Handler()
			id := e.create(b, "acme", "")
			benchRequest(b, e, "GET", "/api/external/applications/"+id, "")
		})
	}
}

// BenchmarkObserveRequest is the metrics' own share of a request: the
// route label and one count in the counter and the histogram.
func BenchmarkObserveRequest(b *testing.B) {
	e := newEnv(b, envOptions{})
	srv := New(Options{Service: e.svc, Responses: e.store, Now: e.clock.Now, Metrics: prometheus.NewRegistry()})
	c := srv.e.NewContext(httptest.NewRequest("GET", "/api/external/applications/x", nil), httptest.NewRecorder())
	c.SetPath("/api/external/applications/:id")
	b.ReportAllocs()
	for b.Loop() {
		srv.metrics.observe(srv.routeOf(c), "GET", http.StatusOK, time.Millisecond)
	}
}

// BenchmarkMetricsScrape serves GET /metrics after requests on a dozen
// routes: the HTTP metrics in the text format.
func BenchmarkMetricsScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	e, _ := meteredEnv(b, reg, slog.LevelInfo)
	id := e.create(b, "acme", "")
	for _, p := range []string{"", "/fields", "/documents/x"} {
		e.do("GET", "/api/external/applications/"+id+p, "acme", "")
	}
	e.do("GET", "/api/external/applications", "acme", "")
	e.do("GET", "/nope", "", "")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != http.StatusOK {
			b.Fatalf("metrics = %d", w.Code)
		}
	}
}

// TestFailedRequestLogCarriesRequestID: the line that logs an unexpected
// failure's cause carries the request's id, like its request line.
func TestFailedRequestLogCarriesRequestID(t *testing.T) {
	e, logs := meteredEnv(t, prometheus.NewRegistry(), slog.LevelInfo)
	id := e.create(t, "acme", "")
	if w := e.do("GET", "/api/external/applications/"+id, "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("before: %d", w.Code) // caches the key, so that the failure is the read
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	r := httptest.NewRequest("GET", "/api/external/applications/"+id, nil)
	r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
	r.Header.Set("X-Request-Id", "fail-1")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	wantError(t, w, http.StatusInternalServerError, errBody("Internal server error"))
	var got []string
	for _, l := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		got = append(got, fmt.Sprintf("%v %v %v", m["level"], m["msg"], m["request_id"]))
	}
	want := []string{"ERROR request failed fail-1", "INFO request fail-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}
