package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// TestClientHangUpIs499: a request whose client hangs up while it is
// served (its context ends: net/http cancels it when the connection
// closes) is no server error. Its log line and its count in
// onboard_http_requests_total carry 499, and no ERROR line is written,
// whether the handler failed on the ended context (a PATCH's commit, the
// form's save) or turned it into another error (a create's registry
// check).
func TestClientHangUpIs499(t *testing.T) {
	logs := &lockedBuffer{}
	reg := prometheus.NewRegistry()
	e := newEnv(t, envOptions{metrics: reg, logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	a.get("/s/company")

	api := func(method, path, body string) *http.Request {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
		return r
	}
	formPost := func(path string, form url.Values) *http.Request {
		form.Set("csrf", a.csrf)
		r := httptest.NewRequest("POST", a.base+path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	tests := []struct {
		name, route, method string
		req                 *http.Request
		send                func(*http.Request) *httptest.ResponseRecorder
	}{
		{"patch", "/api/external/applications/:id", "PATCH",
			api("PATCH", "/api/external/applications/"+id, `{"fields":{"business_description":"x"}}`), e.serve},
		{"create", "/api/external/applications", "POST",
			api("POST", "/api/external/applications", `{"primary_contact":{"email":"ciara@emerald.example"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`), e.serve},
		{"form save", "/a/:slug/s/:stage", "POST",
			formPost("/s/company", url.Values{"industry": {"retail"}, "action": {"save"}}), a.send},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, hangUp := context.WithCancel(context.Background())
			hangUp()
			logs.mu.Lock()
			logs.b.Reset()
			logs.mu.Unlock()
			w := tt.send(tt.req.WithContext(ctx))
			if w.Code != 499 {
				t.Errorf("status = %d %s, want 499", w.Code, w.Body)
			}
			var lines []string
			for _, l := range logs.lines(t) {
				if l["level"] == "ERROR" || l["msg"] == "request" {
					lines = append(lines, fmt.Sprint(l["level"], " ", l["msg"], " ", l["route"], " ", l["status"]))
				}
			}
			want := []string{"INFO request " + tt.route + " 499"}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("ERROR and request lines (-want +got):\n%s", diff)
			}
		})
	}
	got := map[string]float64{}
	for k, v := range series(t, scrape(t, e.unchecked, "/metrics"), "onboard_http_requests_total") {
		if !strings.HasPrefix(k, "2") && !strings.HasPrefix(k, "3") {
			got[k] = v
		}
	}
	want := map[string]float64{
		"499 PATCH /api/external/applications/:id": 1,
		"499 POST /api/external/applications":      1,
		"499 POST /a/:slug/s/:stage":               1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("onboard_http_requests_total other than 2xx and 3xx (-want +got):\n%s", diff)
	}
}

// serve sends r through the real router without the contract check: a
// 499 is an answer nobody reads, which the contract does not list.
func (e *env) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.unchecked.ServeHTTP(w, r)
	return w
}
