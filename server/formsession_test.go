package server

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"onboard/server/form"
)

var sessionSecondsPattern = regexp.MustCompile(`<meta name="session-seconds" content="([0-9]+)" data-keepalive="([^"]+)">`)

// sessionSeconds reads the seconds left that the last page told its
// timeout warning, and the keep-alive address; "" when it has none.
func (a *applicant) sessionSeconds() (int, string) {
	m := sessionSecondsPattern.FindStringSubmatch(a.last.Body.String())
	if m == nil {
		return 0, ""
	}
	n, _ := strconv.Atoi(m[1])
	return n, m[2]
}

// TestFormSessionTimeout: a signed-in page tells its warning how long the
// session has left; "Stay signed in" renews it in full; a post after the
// end says the applicant was signed out (not that the page expired) and
// leads to signing in again; the verification page has no warning.
func TestFormSessionTimeout(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.get("")
	if n, _ := a.sessionSeconds(); n != 0 {
		t.Errorf("the verification page warns of a session ending in %d s", n)
	}
	a.signIn()
	n, keepalive := a.sessionSeconds()
	if n != int(form.DefaultSessionTimeout.Seconds()) || keepalive != a.base+"/session" {
		t.Fatalf("signed-in page: %d s left, keep-alive %q; want %d s and %s/session", n, keepalive, int(form.DefaultSessionTimeout.Seconds()), a.base)
	}

	// Five minutes later the page counts from the session's end, not from
	// the visit (the token is renewed only after ten minutes).
	e.clock.Advance(5 * time.Minute)
	a.get("/s/company")
	if n, _ := a.sessionSeconds(); n != int((form.DefaultSessionTimeout - 5*time.Minute).Seconds()) {
		t.Errorf("after 5 minutes the page says %d s left, want %d", n, int((form.DefaultSessionTimeout - 5*time.Minute).Seconds()))
	}
	// "Stay signed in" renews the session in full, keeping its CSRF token.
	before := a.csrf
	w := a.post("/session", nil)
	if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != strconv.Itoa(int(form.DefaultSessionTimeout.Seconds())) {
		t.Fatalf("stay signed in = %d %q, want 200 and %d", w.Code, w.Body, int(form.DefaultSessionTimeout.Seconds()))
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("stay signed in Cache-Control = %q", cc)
	}
	e.clock.Advance(form.DefaultSessionTimeout - time.Minute)
	wantPage(t, a.get("/s/company"), http.StatusOK, "Company details")
	if a.csrf != before {
		t.Error("renewing the session changed the CSRF token of open pages")
	}
	// Without the CSRF token it is refused, as every post is.
	wantPage(t, a.post("/session", url.Values{"csrf": {"forged"}}), http.StatusForbidden, "This page has expired.")

	// After the end, a post says so and leads to signing in again.
	e.clock.Advance(form.DefaultSessionTimeout + time.Second)
	w = a.post("/s/company", url.Values{"industry": {"software"}})
	wantPage(t, w, http.StatusUnauthorized, "<title>You have been signed out – Acme Payments</title>",
		`<p data-session-ended>Your session has ended. Confirm your email address to continue.</p>`,
		`<a href="`+a.base+`" id="start">Confirm your email address</a>`)
	if strings.Contains(w.Body.String(), "This page has expired") {
		t.Error("an ended session is reported as an expired page")
	}
	if got := e.apiApp(t, id)["data"].(map[string]any)["industry"]; got != nil {
		t.Errorf("the post of an ended session saved industry = %v", got)
	}
	// So does the keep-alive: the page's warning then reloads the page.
	wantPage(t, a.post("/session", nil), http.StatusUnauthorized, "Your session has ended.")
}

// TestRFISessionTimeout: the RFI page warns of its session's end too.
func TestRFISessionTimeout(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, _ := e.signedInRFI(t)
	a.get("")
	n, keepalive := a.sessionSeconds()
	if n == 0 || keepalive != a.base+"/session" {
		t.Fatalf("RFI page: %d s left, keep-alive %q", n, keepalive)
	}
	e.clock.Advance(time.Hour)
	if w := a.post("/session", nil); w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != strconv.Itoa(int(form.DefaultSessionTimeout.Seconds())) {
		t.Errorf("stay signed in = %d %q", w.Code, w.Body)
	}
}

// TestFormShortSessions: a session of seconds (the browser tests' 10 s)
// signs in, renews and ends at its own timeout.
func TestFormShortSessions(t *testing.T) {
	e := newEnv(t, envOptions{sessionTimeout: 10 * time.Second})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	if n, _ := a.sessionSeconds(); n != 10 {
		t.Fatalf("signed-in page: %d s left, want 10", n)
	}
	if a.cookie.MaxAge != 10 {
		t.Errorf("cookie MaxAge = %d, want 10", a.cookie.MaxAge)
	}
	e.clock.Advance(9 * time.Second)
	wantPage(t, a.get("/s/company"), http.StatusOK, "Company details")
	if n, _ := a.sessionSeconds(); n != 10 {
		t.Errorf("a visit after 9 s leaves %d s, want the session renewed to 10", n)
	}
	e.clock.Advance(11 * time.Second)
	wantRedirect(t, a.get("/s/company"), a.base)
}
