package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHealthz checks that the process answers while it runs, whatever the
// state of its store.
func TestHealthz(t *testing.T) {
	e := newEnv(t, envOptions{})
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	w := e.do("GET", "/healthz", "", "")
	if w.Code != http.StatusOK || w.Body.String() != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s, want 200 {\"status\":\"ok\"}", w.Code, w.Body)
	}
}

// TestReadyz checks GET /readyz against the real store: ready while it is
// open, 503 naming the failed checks once it is closed or a check fails.
func TestReadyz(t *testing.T) {
	e := newEnv(t, envOptions{})
	var jobErr error
	probes := []Probe{
		{Name: "store", Check: e.store.Ping},
		{Name: "webhook_delivery", Check: func(context.Context) error { return jobErr }},
	}
	e.h = New(Options{Service: e.svc, Responses: e.store, Now: e.clock.Now, Readiness: probes}).Handler()

	w := e.do("GET", "/readyz", "", "")
	if w.Code != http.StatusOK {
		t.Errorf("readyz = %d, want 200", w.Code)
	}
	if diff := cmp.Diff(map[string]any{"status": "ok", "checks": map[string]any{"store": "ok", "webhook_delivery": "ok"}}, decode(t, w)); diff != "" {
		t.Errorf("readyz body (-want +got):\n%s", diff)
	}
	if got := w.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}

	jobErr = errors.New("stopped: webhooks: no transport is configured")
	wantError(t, e.do("GET", "/readyz", "", ""), http.StatusServiceUnavailable, map[string]any{
		"status": "unavailable", "failed": []any{"webhook_delivery"},
		"checks": map[string]any{"store": "ok", "webhook_delivery": "stopped: webhooks: no transport is configured"},
	})

	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do("GET", "/readyz", "", ""), http.StatusServiceUnavailable, map[string]any{
		"status": "unavailable", "failed": []any{"store", "webhook_delivery"},
		"checks": map[string]any{"store": "the store is closed", "webhook_delivery": "stopped: webhooks: no transport is configured"},
	})
}

// TestReadyzWithoutChecks: a Server given no checks is ready.
func TestReadyzWithoutChecks(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.do("GET", "/readyz", "", "")
	if w.Code != http.StatusOK {
		t.Errorf("readyz = %d, want 200", w.Code)
	}
	if diff := cmp.Diff(map[string]any{"status": "ok", "checks": map[string]any{}}, decode(t, w)); diff != "" {
		t.Errorf("readyz body (-want +got):\n%s", diff)
	}
}

// BenchmarkReadyz answers GET /readyz with the store's check.
func BenchmarkReadyz(b *testing.B) {
	e := newEnv(b, envOptions{})
	e.h = New(Options{Service: e.svc, Responses: e.store, Readiness: []Probe{{Name: "store", Check: e.store.Ping}}}).Handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		if w.Code != http.StatusOK {
			b.Fatalf("readyz = %d %s", w.Code, w.Body)
		}
	}
}
