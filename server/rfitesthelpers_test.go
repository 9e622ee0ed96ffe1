package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest"
)

func rfiHelperPath(id, action string) string {
	return "/api/external/test-helpers/rfi-requests/" + id + "/" + action
}

// TestRFITestHelpers: complete acts as the contact (opened, uploads,
// completed), expire as the sweep; both refuse a request that is no
// longer active, and both keep to the key's scope and organization.
func TestRFITestHelpers(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.createRFI(t, "acme", "")["request_id"].(string)
	w := e.do("POST", rfiHelperPath(id, "complete"), "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("complete = %d %s", w.Code, w.Body)
	}
	got := decode(t, w)
	if got["status"] != "completed" || got["opened_at"] == nil || got["completed_at"] == nil {
		t.Errorf("completed = %v", got)
	}
	var fields []any
	for _, d := range got["documents"].([]any) {
		fields = append(fields, d.(map[string]any)["field_id"])
		if d.(map[string]any)["status"] != "accepted" || d.(map[string]any)["download_url"] == nil {
			t.Errorf("document %v", d)
		}
	}
	if diff := cmp.Diff([]any{"bank_statement", "proof_of_address"}, fields); diff != "" {
		t.Errorf("documents in the agent's order (-want +got):\n%s", diff)
	}
	get := decode(t, e.do("GET", "/api/external/rfi-requests/"+id, "acme", ""))
	for _, m := range []map[string]any{got, get} {
		for _, d := range m["documents"].([]any) {
			delete(d.(map[string]any), "download_url")
		}
	}
	if diff := cmp.Diff(get, got); diff != "" {
		t.Errorf("complete's answer differs from get (-get +complete):\n%s", diff)
	}
	var types []string
	for _, ev := range e.events(t, "acme", "").Events {
		types = append(types, ev.Type)
	}
	if diff := cmp.Diff([]string{"rfi_request.completed", "rfi_request.opened", "rfi_request.created"}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// The activity log names the key, not the contact.
	log, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range log {
		if a.Action == onboarding.ActionRFICompleted && a.Actor.Type != onboarding.ActorAPIKey {
			t.Errorf("completed by %+v, want the API key", a.Actor)
		}
	}

	other := e.createRFI(t, "acme", "")["request_id"].(string)
	w = e.do("POST", rfiHelperPath(other, "expire"), "acme", "")
	if w.Code != http.StatusOK || decode(t, w)["status"] != "expired" {
		t.Fatalf("expire = %d %s", w.Code, w.Body)
	}

	errorsTests := []struct {
		name, key, path string
		status          int
		msg             string
	}{
		{"complete a completed request", "acme", rfiHelperPath(id, "complete"), 400, "Cannot complete RFI request in completed status"},
		{"expire a completed request", "acme", rfiHelperPath(id, "expire"), 400, "Cannot expire RFI request in completed status"},
		{"complete an expired request", "acme", rfiHelperPath(other, "complete"), 400, "Cannot complete RFI request in expired status"},
		{"expire an expired request", "acme", rfiHelperPath(other, "expire"), 400, "Cannot expire RFI request in expired status"},
		{"unknown request", "acme", rfiHelperPath("9f9f9f9f-0000-4000-8000-000000000000", "complete"), 404, "RFI request not found"},
		{"another organization's", "globex", rfiHelperPath(id, "expire"), 404, "RFI request not found"},
		{"no scope", "acme-read", rfiHelperPath(id, "complete"), 401, "API key missing required scopes: rfi:create"},
	}
	for _, tt := range errorsTests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", tt.path, tt.key, ""), tt.status, errBody(tt.msg))
		})
	}

	// A request past its expires_at that the sweep has not reached yet
	// cannot be completed either.
	late := e.createRFI(t, "acme", "")["request_id"].(string)
	e.clock.Advance(15 * 24 * time.Hour)
	wantError(t, e.do("POST", rfiHelperPath(late, "complete"), "acme", ""), 400, errBody("Cannot complete RFI request in expired status"))
}
