package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestResendInviteNonCanonicalID_review: every other application endpoint
// answers 404 for an id that is not in the canonical form the API hands
// out ("one resource has one path", onboarding.Service.application), but
// resend invite goes straight to updateOwnApplication, whose store lookup
// accepts any form uuid.Parse does (upper case, braces, urn:uuid:), and so
// resends the invite, counts the resend and logs it.
func TestResendInviteNonCanonicalID_review(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	for _, alias := range []string{strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id} {
		if w := e.do("GET", "/api/external/applications/"+alias, "acme", ""); w.Code != http.StatusNotFound {
			t.Fatalf("get %s = %d, want 404 (the premise of this test)", alias, w.Code)
		}
		wantError(t, e.do("POST", "/api/external/applications/"+alias+"/invite", "acme", ""), http.StatusNotFound, errBody("Application not found"))
	}
}
