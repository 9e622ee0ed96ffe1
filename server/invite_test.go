package server

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestResendInvite checks resend invite (docs/api.md): a failed invite is resent with the
// same link and moves the application to sent (with its event); five
// resends a day at most; statuses that cannot have one; every message.
func TestResendInvite(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mail.mu.Lock()
	e.mail.fail = errors.New("relay down")
	e.mail.mu.Unlock()
	id := e.create(t, "acme", "")
	if st := e.apiApp(t, id)["status"]; st != "created" {
		t.Fatalf("status after a failed invite = %v", st)
	}
	path := "/api/external/applications/" + id + "/invite"

	// The relay is still down: the resend is counted, with a warning.
	w := e.do("POST", path, "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("resend = %d %s", w.Code, w.Body)
	}
	if diff := cmp.Diff(map[string]any{"success": true, "application_id": id, "status": "created", "warning": onboarding.ResendWarning}, decode(t, w)); diff != "" {
		t.Errorf("resend while mail fails (-want +got):\n%s", diff)
	}

	e.mail.mu.Lock()
	e.mail.fail = nil
	e.mail.mu.Unlock()
	w = e.do("POST", path, "acme", "")
	if diff := cmp.Diff(map[string]any{"success": true, "application_id": id, "status": "sent"}, decode(t, w)); diff != "" || w.Code != http.StatusOK {
		t.Errorf("resend (-want +got):\n%s", diff)
	}
	msgs := e.mail.messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, e.primaryLink(t, id)) {
		t.Errorf("sent %d messages; want one with the application's link", len(msgs))
	}
	if page := e.events(t, "acme", "?type=application.sent"); len(page.Events) != 1 {
		t.Errorf("%d application.sent events, want 1", len(page.Events))
	}
	if n := e.activity(t, id, onboarding.ActionInviteResendRequested); n != 2 {
		t.Errorf("%d resend entries in the activity log, want 2", n)
	}

	// Five a day: three more are fine, the sixth is refused, and a day
	// later there is room again.
	for range 3 {
		if w := e.do("POST", path, "acme", ""); w.Code != http.StatusOK {
			t.Fatalf("resend = %d %s", w.Code, w.Body)
		}
	}
	w = e.do("POST", path, "acme", "")
	wantError(t, w, http.StatusTooManyRequests, map[string]any{"error": "Rate limit exceeded", "retryable": true})
	if got := w.Header().Get("Retry-After"); got != "86400" {
		t.Errorf("Retry-After = %q, want 86400 (the first resend of the window leaves it in 24 h)", got)
	}
	e.clock.Advance(24*time.Hour + time.Second)
	if w := e.do("POST", path, "acme", ""); w.Code != http.StatusOK {
		t.Errorf("resend a day later = %d %s", w.Code, w.Body)
	}

	submitted := e.create(t, "acme", "")
	e.setStatus(t, submitted, onboarding.StatusSubmitted)
	tests := []struct {
		name, key, path string
		status          int
		msg             string
	}{
		{"submitted", "acme", "/api/external/applications/" + submitted + "/invite", 400, "Cannot resend the invite for application in submitted status"},
		{"unknown", "acme", "/api/external/applications/00000000-0000-4000-8000-000000000000/invite", 404, "Application not found"},
		{"another organization's", "globex", path, 404, "Application not found"},
		{"missing scope", "acme-read", path, 401, "API key missing required scopes: applications:create"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", tt.path, tt.key, ""), tt.status, errBody(tt.msg))
		})
	}
}

// TestResendInviteNonCanonicalID: like every other application endpoint,
// resend invite answers 404 for an id that is not in the canonical form
// the API hands out ("one resource has one path",
// onboarding.Service.application), although the store lookup accepts any
// form uuid.Parse does (upper case, braces, urn:uuid:).
func TestResendInviteNonCanonicalID(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	for _, alias := range []string{strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id} {
		if w := e.do("GET", "/api/external/applications/"+alias, "acme", ""); w.Code != http.StatusNotFound {
			t.Fatalf("get %s = %d, want 404 (the premise of this test)", alias, w.Code)
		}
		wantError(t, e.do("POST", "/api/external/applications/"+alias+"/invite", "acme", ""), http.StatusNotFound, errBody("Application not found"))
	}
}
