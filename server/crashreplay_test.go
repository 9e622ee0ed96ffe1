package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"onboard/storage/storetest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// lostSaves is a ResponseStore whose saves never reach the disk and never
// finish: the process dies after a request's work committed and its
// answer was sent, before the answer was saved.
type lostSaves struct{ storetest.Store }

func (lostSaves) SaveResponse(string, string, json.RawMessage, time.Duration, func(error)) {}

// written counts what the API shows was written: applications, RFI
// requests and events of acme.
func (e *env) written(t *testing.T) map[string]int {
	t.Helper()
	n := map[string]int{}
	for name, path := range map[string]string{
		"applications": "/api/external/applications?limit=100",
		"rfi_requests": "/api/external/rfi-requests?limit=100",
		"events":       "/api/external/events?limit=100",
	} {
		w := e.do("GET", path, "acme", "")
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, w.Code, w.Body)
		}
		n[name] = len(decode(t, w)[name].([]any))
	}
	return n
}

// TestIdempotencyAcrossACrash: for every POST of the API, a request with
// an Idempotency-Key whose work committed but whose answer was never
// saved (the process died in between), retried with the same key on the
// restarted server, answers what the first answered, marked replayed, and
// writes and sends nothing again: no second application, RFI request,
// event, decision, pre-auth code or email.
func TestIdempotencyAcrossACrash(t *testing.T) {
	createBody := `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`
	submit := func(t *testing.T, e *env, id string) {
		if w := e.do("POST", "/api/external/test-helpers/applications/"+id+"/submit", "acme", ""); w.Code != http.StatusOK {
			t.Fatalf("submit = %d %s", w.Code, w.Body)
		}
	}
	tests := []struct {
		name  string
		route string // the route's pattern
		// setup prepares the first server and returns the request's path.
		setup    func(t *testing.T, e *env) string
		body     string
		status   int
		mailDown bool // the first request's emails fail
	}{
		{name: "create application", route: "/api/external/applications", status: http.StatusCreated, body: createBody,
			setup: func(*testing.T, *env) string { return "/api/external/applications" }},
		{name: "create application with a pre-auth code", route: "/api/external/applications", status: http.StatusCreated,
			body:  strings.Replace(createBody, `"country"`, `"pre_auth":true,"country"`, 1),
			setup: func(*testing.T, *env) string { return "/api/external/applications" }},
		{name: "create application whose invite failed", route: "/api/external/applications", status: http.StatusCreated, body: createBody, mailDown: true,
			setup: func(*testing.T, *env) string { return "/api/external/applications" }},
		{name: "resend invite that failed", route: "/api/external/applications/:id/invite", status: http.StatusOK, mailDown: true,
			setup: func(t *testing.T, e *env) string {
				return "/api/external/applications/" + e.create(t, "acme", "") + "/invite"
			}},
		{name: "refresh pre-auth", route: "/api/external/applications/:id/pre-auth", status: http.StatusCreated,
			setup: func(t *testing.T, e *env) string {
				return "/api/external/applications/" + e.create(t, "acme", "") + "/pre-auth"
			}},
		{name: "record decision", route: "/api/external/applications/:id/decision", status: http.StatusOK, body: `{"type":"application.approved"}`,
			setup: func(t *testing.T, e *env) string {
				id := e.create(t, "acme", "")
				submit(t, e, id)
				return "/api/external/applications/" + id + "/decision"
			}},
		{name: "resend invite", route: "/api/external/applications/:id/invite", status: http.StatusOK,
			setup: func(t *testing.T, e *env) string {
				return "/api/external/applications/" + e.create(t, "acme", "") + "/invite"
			}},
		{name: "create RFI request", route: "/api/external/rfi-requests", status: http.StatusCreated, body: rfiBody,
			setup: func(*testing.T, *env) string { return "/api/external/rfi-requests" }},
		{name: "create pre-authenticated RFI request", route: "/api/external/rfi-requests", status: http.StatusCreated,
			body:  strings.Replace(rfiBody, `}}`, `},"pre_authenticated":true}`, 1),
			setup: func(*testing.T, *env) string { return "/api/external/rfi-requests" }},
		{name: "test helper: submit", route: "/api/external/test-helpers/applications/:id/submit", status: http.StatusOK,
			setup: func(t *testing.T, e *env) string {
				return "/api/external/test-helpers/applications/" + e.create(t, "acme", "") + "/submit"
			}},
		{name: "test helper: complete RFI request", route: "/api/external/test-helpers/rfi-requests/:id/complete", status: http.StatusOK,
			setup: func(t *testing.T, e *env) string {
				return "/api/external/test-helpers/rfi-requests/" + e.createRFI(t, "acme", "")["request_id"].(string) + "/complete"
			}},
		{name: "test helper: expire RFI request", route: "/api/external/test-helpers/rfi-requests/:id/expire", status: http.StatusOK,
			setup: func(t *testing.T, e *env) string {
				return "/api/external/test-helpers/rfi-requests/" + e.createRFI(t, "acme", "")["request_id"].(string) + "/expire"
			}},
	}
	// Every POST of the API is in the table.
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.route] = true
	}
	for _, r := range New(Options{Sandbox: true, Metrics: prometheus.NewRegistry()}).e.Routes() {
		if r.Method == http.MethodPost && strings.HasPrefix(r.Path, "/api/external/") && !covered[r.Path] {
			t.Errorf("POST %s is not tested across a crash", r.Path)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := newEnv(t, envOptions{responses: func(s storetest.Store) ResponseStore { return lostSaves{s} }})
			path := tt.setup(t, first)
			sentBefore := len(first.mail.messages())
			if tt.mailDown {
				first.mail.fail = errors.New("relay down")
			}
			answered := first.doWithKey("POST", path, "acme", "key-1", tt.body)
			if answered.Code != tt.status {
				t.Fatalf("first request = %d %s", answered.Code, answered.Body)
			}
			sent := len(first.mail.messages()) - sentBefore
			written := first.written(t)

			// The process dies; the restarted server gets the retry.
			again := newEnv(t, envOptions{restart: first})
			// What the work committed under the key holds nothing
			// personal, and no secret in clear.
			k, err := again.svc.Authenticate(context.Background(), again.keys["acme"])
			if err != nil {
				t.Fatal(err)
			}
			rec, err := again.store.SavedResponse(context.Background(), k.ClientID, "key-1")
			if err != nil {
				t.Fatalf("nothing stored under the key by the first request: %v", err)
			}
			secrets := []string{"northwind.example", "Jane"}
			if code, ok := decode(t, answered)["pre_auth_code"].(string); ok {
				secrets = append(secrets, code)
			}
			for _, secret := range secrets {
				if bytes.Contains(rec, []byte(secret)) {
					t.Errorf("the stored outcome holds %q: %s", secret, rec)
				}
			}
			retry := again.doWithKey("POST", path, "acme", "key-1", tt.body)
			if retry.Code != tt.status || retry.Header().Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry = %d (Idempotent-Replayed %q) %s; want the first answer, replayed", retry.Code, retry.Header().Get("Idempotent-Replayed"), retry.Body)
			}
			if diff := cmp.Diff(decode(t, answered), decode(t, retry)); diff != "" {
				t.Errorf("retry answered (-first +retry):\n%s", diff)
			}
			if diff := cmp.Diff(written, again.written(t)); diff != "" {
				t.Errorf("written after the retry (-before +after):\n%s", diff)
			}
			if n := len(again.mail.messages()); n != 0 {
				t.Errorf("the retry sent %d emails; the first sent %d, want none again", n, sent)
			}
			// The rebuilt answer is saved like any other: the next retry
			// replays it.
			if w := again.doWithKey("POST", path, "acme", "key-1", tt.body); w.Body.String() != retry.Body.String() {
				t.Errorf("second retry = %d %s, want %s", w.Code, w.Body, retry.Body)
			}
			// Another request with the key is still refused.
			wantError(t, again.doWithKey("POST", path, "acme", "key-1", `{"other":true}`),
				http.StatusUnprocessableEntity, errBody("This Idempotency-Key was already used with a different request"))
		})
	}
}
