package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// setStatus moves a stored application to st, as the applicant would have.
func (e *env) setStatus(t *testing.T, id string, st onboarding.Status) {
	t.Helper()
	if _, err := e.store.UpdateApplication(context.Background(), id, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = st
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) decide(t *testing.T, id, body string) map[string]any {
	t.Helper()
	w := e.do("POST", "/api/external/applications/"+id+"/decision", "acme", body)
	if w.Code != http.StatusOK {
		t.Fatalf("decision %s = %d %s", body, w.Code, w.Body)
	}
	return decode(t, w)
}

// TestDecisionErrors checks every decision error in its order.
func TestDecisionErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	e.setStatus(t, id, onboarding.StatusSubmitted)
	sent := e.create(t, "acme", "")
	path := "/api/external/applications/" + id + "/decision"
	big := `{"type":"application.approved","data":{"x":"` + strings.Repeat("a", 16<<10) + `"}}`
	tests := []struct {
		name, key, path, body string
		status                int
		msg                   string
	}{
		{"not JSON", "acme", path, `{"type":`, 400, "Invalid JSON body"},
		{"not an object", "acme", path, `["application.approved"]`, 400, "Invalid JSON body"},
		{"invalid JSON before a bad type", "acme", path, `{"type":"nope",}`, 400, "Invalid JSON body"},
		{"no type", "acme", path, `{}`, 400, "Invalid decision type: must be one of application.approved, application.rejected, application.referred"},
		{"empty body", "acme", path, ``, 400, "Invalid decision type: must be one of application.approved, application.rejected, application.referred"},
		{"unknown type", "acme", path, `{"type":"approved"}`, 400, "Invalid decision type: must be one of application.approved, application.rejected, application.referred"},
		{"type not a string", "acme", path, `{"type":1}`, 400, "Invalid decision type: must be one of application.approved, application.rejected, application.referred"},
		{"type before application_id", "acme", path, `{"type":"x","application_id":"other"}`, 400, "Invalid decision type: must be one of application.approved, application.rejected, application.referred"},
		{"another application's id", "acme", path, `{"type":"application.approved","application_id":"` + sent + `"}`, 400, "application_id does not match the path"},
		{"application_id before timestamp", "acme", path, `{"type":"application.approved","application_id":1,"timestamp":"x"}`, 400, "application_id does not match the path"},
		{"timestamp not RFC 3339", "acme", path, `{"type":"application.approved","timestamp":"23/11/2026"}`, 400, "Invalid timestamp"},
		{"timestamp not a string", "acme", path, `{"type":"application.approved","timestamp":1700000000}`, 400, "Invalid timestamp"},
		{"timestamp before data", "acme", path, `{"type":"application.approved","timestamp":"x","data":[]}`, 400, "Invalid timestamp"},
		{"data not an object", "acme", path, `{"type":"application.approved","data":"ok"}`, 400, "data must be an object of at most 16 KiB"},
		{"data over 16 KiB", "acme", path, big, 400, "data must be an object of at most 16 KiB"},
		{"unknown application", "acme", "/api/external/applications/00000000-0000-4000-8000-000000000000/decision", `{"type":"application.approved"}`, 404, "Application not found"},
		{"another organization's application", "globex", path, `{"type":"application.approved"}`, 404, "Application not found"},
		{"not yet submitted", "acme", "/api/external/applications/" + sent + "/decision", `{"type":"application.approved"}`, 400, "Cannot record a decision for application in sent status"},
		{"missing scope", "acme-read", path, `{"type":"application.approved"}`, 401, "API key missing required scopes: applications:write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", tt.path, tt.key, tt.body), tt.status, errBody(tt.msg))
		})
	}
}

// TestDecisionLifecycle records a referral, then an approval, checks the
// answers, the idempotent repeat, the application, its events and what
// stays closed after a terminal decision.
func TestDecisionLifecycle(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	e.setStatus(t, id, onboarding.StatusSubmitted)

	referred := e.decide(t, id, `{"type":"application.referred","timestamp":"2026-11-21T08:00:00+01:00","application_id":"`+id+`","data":{"reason":"manual review","score":42}}`)
	want := map[string]any{"success": true, "application_id": id, "type": "application.referred", "status": "review",
		"recorded_at": "2026-11-21T09:30:00.000Z", "already_recorded": false}
	refID := referred["decision_id"]
	delete(referred, "decision_id")
	if diff := cmp.Diff(want, referred); diff != "" || refID == "" {
		t.Errorf("referral (-want +got):\n%s", diff)
	}
	// The same type again changes nothing.
	again := e.decide(t, id, `{"type":"application.referred"}`)
	if again["already_recorded"] != true || again["decision_id"] != refID || again["status"] != "review" {
		t.Errorf("repeat = %v", again)
	}
	approved := e.decide(t, id, `{"type":"application.approved"}`)
	if approved["status"] != "approved" || approved["already_recorded"] != false || approved["decision_id"] == refID {
		t.Errorf("approval = %v", approved)
	}
	app := e.apiApp(t, id)
	if app["status"] != "approved" || app["completed_at"] != "2026-11-21T09:30:00.000Z" {
		t.Errorf("application: status %v, completed_at %v", app["status"], app["completed_at"])
	}
	wantDecisions := []any{
		map[string]any{"id": refID, "type": "application.referred", "timestamp": "2026-11-21T07:00:00.000Z", "recorded_at": "2026-11-21T09:30:00.000Z",
			"data": map[string]any{"reason": "manual review", "score": float64(42)}, "api_key_name": "acme all"},
		map[string]any{"id": approved["decision_id"], "type": "application.approved", "timestamp": "2026-11-21T09:30:00.000Z", "recorded_at": "2026-11-21T09:30:00.000Z",
			"data": nil, "api_key_name": "acme all"},
	}
	if diff := cmp.Diff(wantDecisions, app["decisions"]); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if n := e.activity(t, id, onboarding.ActionDecisionRecorded); n != 2 {
		t.Errorf("%d decision entries in the activity log, want 2", n)
	}
	// One event per status move: the repeat emitted none.
	var types []string
	for _, ev := range e.events(t, "acme", "").Events {
		if strings.HasPrefix(ev.Type, "application.") && ev.Type != "application.created" && ev.Type != "application.sent" {
			types = append(types, ev.Type)
		}
	}
	if diff := cmp.Diff([]string{"application.approved", "application.referred"}, types); diff != "" {
		t.Errorf("decision events, newest first (-want +got):\n%s", diff)
	}

	// Approved is terminal: another decision, PATCH and refresh pre-auth are refused.
	wantError(t, e.do("POST", "/api/external/applications/"+id+"/decision", "acme", `{"type":"application.rejected"}`),
		http.StatusBadRequest, errBody("Cannot record a decision for application in approved status"))
	if again := e.decide(t, id, `{"type":"application.approved"}`); again["already_recorded"] != true {
		t.Errorf("repeating the approval = %v", again)
	}
	wantError(t, e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software"}}`),
		http.StatusBadRequest, errBody("Cannot update application in approved status"))
	if w := e.do("POST", "/api/external/applications/"+id+"/pre-auth", "acme", ""); w.Code != http.StatusConflict {
		t.Errorf("refresh pre-auth after approval = %d %s", w.Code, w.Body)
	}
}

// TestDecisionRejectFromSubmitted checks a rejection straight from
// submitted, with its event.
func TestDecisionRejectFromSubmitted(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	e.setStatus(t, id, onboarding.StatusSubmitted)
	if got := e.decide(t, id, `{"type":"application.rejected","data":{}}`); got["status"] != "rejected" {
		t.Errorf("rejection = %v", got)
	}
	if page := e.events(t, "acme", "?type=application.rejected"); len(page.Events) != 1 || !strings.Contains(string(page.Events[0].Data), `"status":"rejected"`) {
		t.Errorf("rejected events = %+v", page.Events)
	}
}
