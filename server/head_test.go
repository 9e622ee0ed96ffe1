package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/server/form"
	"onboard/server/web/webtest"
)

// rawServer is a second real router over e's service and store, without
// the OpenAPI contract check newEnv wraps around its own (the document
// lists no HEAD operations, which every GET route answers).
func rawServer(t *testing.T, e *env) *Server {
	t.Helper()
	sessions, err := form.NewSignedSessions(bytes.Repeat([]byte{9}, 32)) // newEnv's session key
	if err != nil {
		t.Fatal(err)
	}
	pages := form.New(form.Options{Service: e.svc, Sessions: sessions, Now: e.clock.Now, PublicURL: "https://onboard.test"})
	return New(Options{Service: e.svc, Responses: e.store, Pages: pages, Now: e.clock.Now, Sandbox: true})
}

// routeExample fills a route pattern's parameters with values from
// params ("*" for the wildcard).
func routeExample(pattern string, params map[string]string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = params[name]
		} else if p == "*" {
			parts[i] = params["*"]
		}
	}
	return strings.Join(parts, "/")
}

// comparableHeaders are a response's headers without those that differ
// from one request to the next (the request id, a renewed session cookie)
// or that only a HEAD answer computes (Content-Length).
func comparableHeaders(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range []string{"X-Request-Id", "Set-Cookie", "Content-Length"} {
		h.Del(k)
	}
	return h
}

// TestHeadAnswersLikeGet sends GET then HEAD to every GET route of the
// router, signed in at an applicant's link and with an API key: each
// HEAD gets the GET's status and headers, a Content-Length of the GET's
// body, and no body.
func TestHeadAnswersLikeGet(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	srv := rawServer(t, e)
	params := map[string]string{
		"slug": strings.TrimPrefix(a.base, "/a/"), "id": id, "docId": "certificate_of_incorporation",
		"stage": "business", "*": "form.css",
	}
	send := func(method, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		r.Host = a.host
		r.AddCookie(a.cookie)
		r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		return w
	}
	statuses := map[int]int{}
	routes := srv.e.Routes()
	for _, route := range routes {
		if route.Method != http.MethodGet {
			continue
		}
		path := routeExample(route.Path, params)
		t.Run(route.Path, func(t *testing.T) {
			get, head := send("GET", path), send("HEAD", path)
			statuses[get.Code]++
			if head.Code != get.Code {
				t.Errorf("HEAD %s = %d, GET = %d", path, head.Code, get.Code)
			}
			if diff := cmp.Diff(comparableHeaders(get.Header()), comparableHeaders(head.Header())); diff != "" {
				t.Errorf("HEAD %s headers (-GET +HEAD):\n%s", path, diff)
			}
			if _, ok := get.Header()["Set-Cookie"]; ok != (head.Header().Get("Set-Cookie") != "") {
				t.Errorf("HEAD %s Set-Cookie %q, GET's %q", path, head.Header().Get("Set-Cookie"), get.Header().Get("Set-Cookie"))
			}
			if head.Body.Len() != 0 {
				t.Errorf("HEAD %s has a %d-byte body", path, head.Body.Len())
			}
			if want := strconv.Itoa(get.Body.Len()); get.Code != http.StatusNotModified && head.Header().Get("Content-Length") != want {
				t.Errorf("HEAD %s Content-Length = %q, want the GET's %s", path, head.Header().Get("Content-Length"), want)
			}
		})
	}
	// The routes above answer pages and documents, not only errors.
	if statuses[http.StatusOK] < 15 {
		t.Errorf("GET statuses %v: want most routes to answer 200", statuses)
	}
}

// TestHeadErrors checks HEAD where there is nothing to GET: an unknown
// path is 404 and a POST-only route 405, with their headers and no body;
// the log and the metrics would say HEAD (the request is HEAD again when
// the answer is done).
func TestHeadErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := rawServer(t, e)
	tests := []struct {
		path   string
		status int
		allow  string
	}{
		{"/nope", http.StatusNotFound, ""},
		{"/api/external/applications/x/decision", http.StatusMethodNotAllowed, "OPTIONS, POST"},
	}
	// A GET route's 405 names HEAD, which it answers.
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest("DELETE", "/api/external/applications/x", nil))
	if got := w.Header().Get("Allow"); w.Code != http.StatusMethodNotAllowed || got != "OPTIONS, GET, HEAD, PATCH" {
		t.Errorf("DELETE an application = %d, Allow %q, want 405 and OPTIONS, GET, HEAD, PATCH", w.Code, got)
	}
	// So does its OPTIONS answer.
	for path, want := range map[string]string{
		"/api/external/applications":            "OPTIONS, GET, HEAD, POST",
		"/api/external/applications/x":          "OPTIONS, GET, HEAD, PATCH",
		"/api/external/applications/x/decision": "OPTIONS, POST",
	} {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest("OPTIONS", path, nil))
		if got := w.Header().Get("Allow"); w.Code != http.StatusNoContent || got != want {
			t.Errorf("OPTIONS %s = %d, Allow %q, want 204 and %s", path, w.Code, got, want)
		}
	}
	for _, tt := range tests {
		r := httptest.NewRequest("HEAD", tt.path, nil)
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		got := map[string]any{"status": w.Code, "allow": w.Header().Get("Allow"), "body": w.Body.String(), "method": r.Method,
			"nosniff": w.Header().Get("X-Content-Type-Options"), "cache": w.Header().Get("Cache-Control")}
		want := map[string]any{"status": tt.status, "allow": tt.allow, "body": "", "method": "HEAD", "nosniff": "nosniff", "cache": "no-store"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("HEAD %s (-want +got):\n%s", tt.path, diff)
		}
	}
}

// TestHeadOverTheWire checks HEAD of the real router's pages through a
// real HTTP server, which frames the answer itself: a page larger than
// the server's buffer still gets its whole length as Content-Length, and
// no chunked body.
func TestHeadOverTheWire(t *testing.T) {
	e := newEnv(t, envOptions{})
	webtest.HeadOverTheWire(t, rawServer(t, e).Handler(), "/api/external/openapi.json", "/assets/form.js", "/healthz", "/nope")
}
