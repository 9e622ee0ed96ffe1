package server

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/onboarding"
)

func TestRefreshPreAuth(t *testing.T) {
	e := newEnv(t, envOptions{})
	created := decode(t, e.do("POST", "/api/external/applications", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`))
	id := created["application_id"].(string)
	first := created["pre_auth_code"].(string)
	primary := created["participants"].([]any)[0].(map[string]any)

	w := e.do("POST", "/api/external/applications/"+id+"/pre-auth", "acme", "")
	if w.Code != http.StatusCreated {
		t.Fatalf("status = %d: %s", w.Code, w.Body)
	}
	res := decode(t, w)
	code := res["pre_auth_code"].(string)
	if !codePattern.MatchString(code) || code == first {
		t.Errorf("pre_auth_code = %q, want a new 32-character code", code)
	}
	want := map[string]any{
		"pre_auth_code":    code,
		"link":             created["link"].(string) + "?auth_code=" + code,
		"expires_at":       "2026-11-24T09:30:00.000Z",
		"participant_id":   primary["id"],
		"already_verified": false,
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	// Only the SHA-256 of the newest code is kept: the first code is revoked.
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(code))
	if got := app.Primary().PreAuthHash; string(got) != string(sum[:]) {
		t.Errorf("stored hash is not SHA-256 of the new code")
	}
	if strings.Contains(string(mustJSON(t, app)), code) {
		t.Errorf("the plain code is stored")
	}
	if app.Status != onboarding.StatusSent {
		t.Errorf("status = %s, want sent (refresh does not change it)", app.Status)
	}
}

func TestRefreshPreAuthErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	setStatus := func(id string, st onboarding.Status) {
		if _, err := e.store.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = st
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	approved, rejected, submitted, orphan := e.create(t, "acme", ""), e.create(t, "acme", ""), e.create(t, "acme", ""), e.create(t, "acme", "")
	setStatus(approved, onboarding.StatusApproved)
	setStatus(rejected, onboarding.StatusRejected)
	setStatus(submitted, onboarding.StatusSubmitted)
	if _, err := e.store.UpdateApplication(ctx, orphan, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Participants[0].Role = onboarding.RoleCollaborator
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		id     string
		status int
		want   string
	}{
		{"unknown", uuid.NewString(), 404, "Application not found"},
		{"not a uuid", "nope", 404, "Application not found"},
		{"approved", approved, 409, "Application is in a terminal status and pre-auth is no longer applicable"},
		{"rejected", rejected, 409, "Application is in a terminal status and pre-auth is no longer applicable"},
		{"no primary participant", orphan, 400, "No primary participant found for this application"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", "/api/external/applications/"+tt.id+"/pre-auth", "acme", ""), tt.status, errBody(tt.want))
		})
	}
	if w := e.do("POST", "/api/external/applications/"+submitted+"/pre-auth", "acme", ""); w.Code != http.StatusCreated {
		t.Errorf("submitted: status = %d, want 201 (not terminal)", w.Code)
	}
}
