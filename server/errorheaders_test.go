package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/server/form"
)

// TestErrorAnswersCarrySecurityHeaders checks that every answer of the
// router, error or not, is neither sniffed nor (unless it is a cacheable
// asset or document) stored: unknown paths, wrong methods, the probes, a
// bad signed download link, API errors, and the assets, whose directory
// is not listed and whose missing files are the server's usual 404.
func TestErrorAnswersCarrySecurityHeaders(t *testing.T) {
	e := newEnv(t, envOptions{})
	notFound := `{"error":"Not found"}`
	tests := []struct {
		method, path, key string
		status            int
		cache             string
		body              string // the whole body; empty: not compared
	}{
		{"GET", "/nope", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/a/", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/api/external/nope", "acme", http.StatusNotFound, "no-store", notFound},
		{"DELETE", "/api/external/applications", "acme", http.StatusMethodNotAllowed, "no-store", `{"error":"Method not allowed"}`},
		{"GET", "/api/external/applications", "", http.StatusUnauthorized, "no-store", `{"error":"Missing API key"}`},
		{"GET", "/healthz", "", http.StatusOK, "no-store", `{"status":"ok"}`},
		{"GET", "/readyz", "", http.StatusOK, "no-store", `{"status":"ok","checks":{}}`},
		{"GET", "/files/0b6f3c2e?exp=1&sig=AAAA", "", http.StatusForbidden, "no-store", `{"error":"Invalid or expired link"}`},
		{"HEAD", "/files/0b6f3c2e?exp=1&sig=AAAA", "", http.StatusForbidden, "no-store", ""},
		// The assets: files only, no listing, the server's 404 otherwise.
		{"GET", "/assets/", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/assets/.", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/assets/nope.js", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/assets/../server.go", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/assets/form.css/", "", http.StatusNotFound, "no-store", notFound},
		{"GET", "/assets/form.css", "", http.StatusOK, "public, max-age=3600", ""},
		{"GET", "/favicon.ico", "", http.StatusOK, "public, max-age=86400", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			w := e.do(tt.method, tt.path, tt.key, "")
			got := map[string]string{
				"status":  http.StatusText(w.Code),
				"nosniff": w.Header().Get("X-Content-Type-Options"),
				"cache":   w.Header().Get("Cache-Control"),
			}
			want := map[string]string{"status": http.StatusText(tt.status), "nosniff": "nosniff", "cache": tt.cache}
			if tt.body != "" {
				got["body"], want["body"] = strings.TrimSpace(w.Body.String()), tt.body
				got["type"], want["type"] = w.Header().Get("Content-Type"), "application/json"
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFormPostTooLarge checks that a form post over form.MaxPostBytes gets 413
// and a page saying what to do, not that the page has expired, and that
// nothing of it is saved.
func TestFormPostTooLarge(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	w := a.post("/s/business", url.Values{"business_description": {strings.Repeat("a", form.MaxPostBytes)}})
	wantPage(t, w, http.StatusRequestEntityTooLarge, "What you sent is too large. Go back, make your answers shorter and try again.")
	if strings.Contains(w.Body.String(), "expired") {
		t.Errorf("the page speaks of expiry:\n%s", pageText(w.Body.String()))
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "X-Frame-Options": "DENY"} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); fields["business_description"] != nil {
		t.Errorf("business_description saved: %v", fields["business_description"])
	}
	// A post of ordinary size is saved.
	small := url.Values{"business_description": {"Payments"}}
	if w := a.post("/s/business", small); w.Code != http.StatusSeeOther {
		t.Errorf("small post = %d %s", w.Code, pageText(w.Body.String()))
	}
}
