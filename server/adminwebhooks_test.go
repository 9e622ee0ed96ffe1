package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/admin"
	"onboard/server/web"
)

// TestAdminWebhooks drives the webhook routes of the admin socket's
// handler: the JSON answers and statuses the CLI relays.
func TestAdminWebhooks(t *testing.T) {
	e := newEnv(t, envOptions{webhooks: []time.Duration{0}})
	h := admin.NewHandler(admin.Options{Service: e.svc, Answer: web.ErrorAnswer})
	call := func(method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	notFound := errBody("webhook endpoint 'we_nope' not found")
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		want                     map[string]any
	}{
		{"bad JSON", "POST", "/webhooks", `{"org":`, http.StatusBadRequest, errBody("Invalid JSON body")},
		{"unknown organization", "POST", "/webhooks", `{"org":"nope","url":"http://127.0.0.1:1/x"}`, http.StatusBadRequest,
			errBody("unknown organization 'nope'")},
		{"no URL", "POST", "/webhooks", `{"org":"acme"}`, http.StatusBadRequest, errBody("a webhook URL is required")},
		{"list an unknown organization", "GET", "/webhooks?org=nope", "", http.StatusBadRequest, errBody("unknown organization 'nope'")},
		{"remove unknown", "DELETE", "/webhooks/we_nope", "", http.StatusNotFound, notFound},
		{"enable unknown", "POST", "/webhooks/we_nope/enable", "", http.StatusNotFound, notFound},
		{"disable unknown", "POST", "/webhooks/we_nope/disable", "", http.StatusNotFound, notFound},
		{"test unknown", "POST", "/webhooks/we_nope/test", "", http.StatusNotFound, notFound},
		{"rotate unknown", "POST", "/webhooks/we_nope/rotate-secret", "", http.StatusNotFound, notFound},
		{"limit not a number", "GET", "/webhook-deliveries?limit=x", "", http.StatusBadRequest, errBody("Invalid limit 'x'")},
		{"negative limit", "GET", "/webhook-deliveries?limit=-1", "", http.StatusBadRequest, errBody("Invalid limit -1: it must be positive")},
		{"redeliver bad JSON", "POST", "/events/evt_nope/redeliver", `[`, http.StatusBadRequest, errBody("Invalid JSON body")},
		{"redeliver unknown", "POST", "/events/evt_nope/redeliver", `{}`, http.StatusNotFound,
			errBody("event 'evt_nope' not found (events are kept 30 days)")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, call(tt.method, tt.path, tt.body), tt.status, tt.want)
		})
	}

	// The views carry exactly the keys of docs/cli.md; an endpoint with no
	// event filter has events [], never null.
	w := call("POST", "/webhooks", `{"org":"acme","url":"http://127.0.0.1:1/x","description":"CRM"}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("add = %d %s", w.Code, w.Body)
	}
	var added struct {
		Secret   string                     `json:"secret"`
		Endpoint map[string]json.RawMessage `json:"endpoint"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &added); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(added.Secret, "whsec_") || len(added.Secret) != len("whsec_")+44 {
		t.Errorf("secret %q, want whsec_ and base64 of 32 bytes", added.Secret)
	}
	var keys []string
	for k := range added.Endpoint {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"created_at", "description", "disabled_reason", "enabled", "events", "id", "org", "url"}, keys); diff != "" {
		t.Errorf("endpoint keys (-want +got):\n%s", diff)
	}
	if string(added.Endpoint["events"]) != "[]" {
		t.Errorf("events = %s, want []", added.Endpoint["events"])
	}
	var id string
	_ = json.Unmarshal(added.Endpoint["id"], &id)

	list := func(query string) []admin.Endpoint {
		t.Helper()
		w := call("GET", "/webhooks"+query, "")
		var out []admin.Endpoint
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &out) != nil {
			t.Fatalf("list = %d %s", w.Code, w.Body)
		}
		return out
	}
	eps := list("?org=acme")
	if len(eps) != 1 || eps[0].ID != id || eps[0].OrgID != "acme" || eps[0].Description != "CRM" || !eps[0].Enabled {
		t.Errorf("list = %+v; want the endpoint added", eps)
	}
	if got := list("?org=globex"); len(got) != 0 {
		t.Errorf("globex's endpoints = %+v, want none", got)
	}

	w = call("POST", "/webhooks/"+id+"/rotate-secret", "")
	var rotated admin.RotatedSecret
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &rotated) != nil {
		t.Fatalf("rotate = %d %s", w.Code, w.Body)
	}
	if rotated.Secret == added.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Endpoint.ID != id {
		t.Errorf("rotate answered %+v", rotated)
	}
	if d := time.Until(rotated.PreviousUntil); d < 24*time.Hour-time.Minute || d > 24*time.Hour {
		t.Errorf("previous secret signs until %v, want 24 hours from now", rotated.PreviousUntil)
	}

	endpoint := func(action string) admin.Endpoint {
		t.Helper()
		w := call("POST", "/webhooks/"+id+"/"+action, "")
		var ep admin.Endpoint
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &ep) != nil {
			t.Fatalf("%s = %d %s", action, w.Code, w.Body)
		}
		return ep
	}
	if ep := endpoint("disable"); ep.Enabled || ep.DisabledReason != "disabled by the operator" {
		t.Errorf("disable answered %+v", ep)
	}
	wantError(t, call("POST", "/webhooks/"+id+"/test", ""), http.StatusConflict,
		errBody("webhook endpoint '"+id+"' is disabled (disabled by the operator); enable it first"))
	if ep := endpoint("enable"); !ep.Enabled || ep.DisabledReason != "" {
		t.Errorf("enable answered %+v", ep)
	}

	w = call("POST", "/webhooks/"+id+"/test", "")
	var queued admin.TestEvent
	if w.Code != http.StatusAccepted || json.Unmarshal(w.Body.Bytes(), &queued) != nil || !strings.HasPrefix(queued.EventID, "evt_") || queued.EndpointID != id {
		t.Fatalf("test = %d %s", w.Code, w.Body)
	}
	w = call("POST", "/events/"+queued.EventID+"/redeliver", `{"endpoint_id":"`+id+`"}`)
	var again admin.Redelivery
	if w.Code != http.StatusAccepted || json.Unmarshal(w.Body.Bytes(), &again) != nil {
		t.Fatalf("redeliver = %d %s", w.Code, w.Body)
	}
	if diff := cmp.Diff(admin.Redelivery{EventID: queued.EventID, Endpoints: []string{id}}, again); diff != "" {
		t.Errorf("redeliver (-want +got):\n%s", diff)
	}

	w = call("DELETE", "/webhooks/"+id, "")
	if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Errorf("remove = %d %q, want 204 and no body", w.Code, w.Body)
	}
	if got := list(""); len(got) != 0 {
		t.Errorf("after remove, list = %+v", got)
	}
	if w := call("GET", "/webhooks", ""); strings.TrimSpace(w.Body.String()) != "[]" {
		t.Errorf("empty list = %s, want []", w.Body)
	}
}
