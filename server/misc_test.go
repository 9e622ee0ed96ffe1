package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestUnknownRoutesAndMethods(t *testing.T) {
	e := newEnv(t, envOptions{})
	wantError(t, e.do("GET", "/nope", "", ""), http.StatusNotFound, errBody("Not found"))
	wantError(t, e.do("GET", "/api/external/nope", "acme", ""), http.StatusNotFound, errBody("Not found"))
	w := e.do("DELETE", "/api/external/applications", "acme", "")
	wantError(t, w, http.StatusMethodNotAllowed, errBody("Method not allowed"))
	if w := e.do("GET", "/healthz", "", ""); w.Code != http.StatusOK || w.Body.String() != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s", w.Code, w.Body)
	}
	if id := e.do("GET", "/healthz", "", "").Header().Get("X-Request-Id"); len(id) != 16 {
		t.Errorf("X-Request-Id = %q", id)
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, envOptions{rate: 1, burst: 2})
	for i := 0; i < 2; i++ {
		w := e.do("GET", "/api/external/applications", "acme", "")
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: status = %d", i, w.Code)
		}
		if got, want := w.Header().Get("RateLimit-Remaining"), strconv.Itoa(1-i); got != want {
			t.Errorf("request %d: RateLimit-Remaining = %s, want %s", i, got, want)
		}
		if got := w.Header().Get("RateLimit-Limit"); got != "2" {
			t.Errorf("RateLimit-Limit = %s, want 2", got)
		}
	}
	w := e.do("GET", "/api/external/applications", "acme", "")
	wantError(t, w, http.StatusTooManyRequests, map[string]any{"error": "Rate limit exceeded", "retryable": true})
	if got := w.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	// Buckets are per key: another key is unaffected.
	if w := e.do("GET", "/api/external/applications", "acme-read", ""); w.Code != http.StatusOK {
		t.Errorf("other key: status = %d, want 200", w.Code)
	}
	e.clock.Advance(1_000_000_000)
	if w := e.do("GET", "/api/external/applications", "acme", ""); w.Code != http.StatusOK {
		t.Errorf("after a second: status = %d, want 200", w.Code)
	}
}

func TestUnexpectedFailureIsA500WithoutDetails(t *testing.T) {
	var logBuf bytes.Buffer
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	srv := New(Options{Service: e.svc, Responses: e.store, Logger: slog.New(slog.NewTextHandler(&logBuf, nil)), Now: e.clock.Now})
	e.h = srv.Handler()
	// Authenticate once so that the key is cached, then take the store away.
	if w := e.do("GET", "/api/external/applications/"+id, "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("before: %d", w.Code)
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/external/applications/" + id, "/api/external/applications", "/api/external/applications/" + id + "/fields"} {
		wantError(t, e.do("GET", path, "acme", ""), http.StatusInternalServerError, errBody("Internal server error"))
	}
	wantError(t, e.do("POST", "/api/external/applications/"+id+"/pre-auth", "acme", ""), http.StatusInternalServerError, errBody("Internal server error"))
	if !strings.Contains(logBuf.String(), "request failed") || !strings.Contains(logBuf.String(), "err=") {
		t.Errorf("the cause is not logged:\n%s", logBuf.String())
	}
}
