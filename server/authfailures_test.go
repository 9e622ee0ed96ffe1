package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/server/form"
)

// attempt is one API request from a client address, perhaps through a
// proxy that names it in X-Forwarded-For.
type attempt struct {
	from, forwardedFor string
	key                string // an env key name, "raw:…" for a raw header, or "" for none
}

// send makes the attempt at GET /api/external/applications through h.
func (a attempt) send(e *env, h http.Handler) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/api/external/applications", nil)
	r.RemoteAddr = a.from + ":40000"
	if a.forwardedFor != "" {
		r.Header.Set("X-Forwarded-For", a.forwardedFor)
	}
	switch {
	case len(a.key) > 4 && a.key[:4] == "raw:":
		r.Header.Set("Authorization", a.key[4:])
	case a.key != "":
		r.Header.Set("Authorization", "Bearer "+e.keys[a.key])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// answer is what the tests compare of an answer: its status, its
// Retry-After and its error.
type answer struct {
	Status     int
	RetryAfter string
	Error      string
}

func answerOf(t *testing.T, w *httptest.ResponseRecorder) answer {
	t.Helper()
	a := answer{Status: w.Code, RetryAfter: w.Header().Get("Retry-After")}
	if w.Code != http.StatusOK {
		a.Error, _ = decode(t, w)["error"].(string)
	}
	return a
}

var (
	authOK      = answer{Status: http.StatusOK}
	authInvalid = answer{Status: http.StatusUnauthorized, Error: "Invalid API key"}
	authMissing = answer{Status: http.StatusUnauthorized, Error: "Missing API key"}
)

func authLocked(retryAfter string) answer {
	return answer{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Error: "Rate limit exceeded"}
}

// TestAuthFailuresLimited checks the lockout of an address that fails to
// authenticate too often: 10 failures, then 429 with Retry-After for any
// key, valid ones too, from that address only (X-Forwarded-For from a
// client is not believed); one more attempt each 6 seconds, and all 10
// again after a minute. Missing keys and valid keys count nothing.
func TestAuthFailuresLimited(t *testing.T) {
	e := newEnv(t, envOptions{})
	const guesser, other = "192.0.2.7", "198.51.100.20"
	bad := attempt{from: guesser, key: "raw:Bearer " + e.keys["acme"] + "x"} // a real key's id, a wrong secret
	steps := []struct {
		name    string
		advance time.Duration
		try     attempt
		times   int
		want    answer
	}{
		{"missing keys count nothing", 0, attempt{from: guesser}, 20, authMissing},
		{"valid keys count nothing", 0, attempt{from: guesser, key: "acme"}, 20, authOK},
		{"revoked key", 0, attempt{from: guesser, key: "revoked"}, 1, authInvalid},
		{"not bearer", 0, attempt{from: guesser, key: "raw:Basic dXNlcjpwYXNz"}, 1, authInvalid},
		{"the rest of 10 failures", 0, bad, 8, authInvalid},
		{"locked out", 0, bad, 1, authLocked("6")},
		{"locked out, even with a valid key", 0, attempt{from: guesser, key: "acme"}, 1, authLocked("6")},
		{"locked out, whatever it forwards", 0, attempt{from: guesser, forwardedFor: "203.0.113.1", key: "acme"}, 1, authLocked("6")},
		{"another address is not", 0, attempt{from: other, key: "acme"}, 1, authOK},
		{"another address may fail", 0, attempt{from: other, key: bad.key}, 1, authInvalid},
		{"later", 5 * time.Second, attempt{from: guesser, key: "acme"}, 1, authLocked("1")},
		{"one more try after 6 s", time.Second, bad, 1, authInvalid},
		{"then locked again", 0, attempt{from: guesser, key: "acme"}, 1, authLocked("6")},
		{"a minute later, all is forgotten", time.Minute, attempt{from: guesser, key: "acme"}, 1, authOK},
		{"and 10 failures are allowed again", 0, bad, 10, authInvalid},
		{"but not 11", 0, bad, 1, authLocked("6")},
	}
	for _, s := range steps {
		e.clock.Advance(s.advance)
		for i := range s.times {
			if diff := cmp.Diff(s.want, answerOf(t, s.try.send(e, e.h))); diff != "" {
				t.Fatalf("%s, attempt %d (-want +got):\n%s", s.name, i+1, diff)
			}
		}
	}
}

// TestAuthFailuresBehindTrustedProxy checks that, behind a proxy named in
// Options.TrustedProxies, failures count by the client X-Forwarded-For
// names, so that one guesser does not lock out everyone behind the proxy;
// and that an IPv6 guesser is counted by its /64.
func TestAuthFailuresBehindTrustedProxy(t *testing.T) {
	e := newEnv(t, envOptions{})
	sessions, err := form.NewSignedSessions(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	pages := form.New(form.Options{Service: e.svc, Sessions: sessions, Now: e.clock.Now})
	h := New(Options{Service: e.svc, Responses: e.store, Pages: pages, Now: e.clock.Now, Sandbox: true,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}).Handler()
	const proxy = "10.1.2.3"
	wrong := "raw:Bearer svc_aaaaaaaaaaaaaaaa.wrong" // no such key
	tries := []struct {
		name  string
		try   attempt
		times int
		want  answer
	}{
		{"guesser behind the proxy", attempt{from: proxy, forwardedFor: "203.0.113.9", key: wrong}, 10, authInvalid},
		{"guesser locked out", attempt{from: proxy, forwardedFor: "203.0.113.9", key: "acme"}, 1, authLocked("6")},
		{"a client it spoofs is locked out", attempt{from: proxy, forwardedFor: "203.0.113.9, 10.9.9.9", key: "acme"}, 1, authLocked("6")},
		{"another client of the proxy is not", attempt{from: proxy, forwardedFor: "203.0.113.10", key: "acme"}, 1, authOK},
		{"an untrusted peer's X-Forwarded-For is not believed", attempt{from: "192.0.2.50", forwardedFor: "203.0.113.10", key: wrong}, 10, authInvalid},
		{"so it locks out that peer", attempt{from: "192.0.2.50", forwardedFor: "203.0.113.11", key: "acme"}, 1, authLocked("6")},
		{"and not whom it named", attempt{from: proxy, forwardedFor: "203.0.113.10", key: "acme"}, 1, authOK},
		{"IPv6 guesser", attempt{from: "[2001:db8:1:2::1]", key: wrong}, 10, authInvalid},
		{"its /64 is locked out", attempt{from: "[2001:db8:1:2:ffff::9]", key: "acme"}, 1, authLocked("6")},
		{"the next /64 is not", attempt{from: "[2001:db8:1:3::1]", key: "acme"}, 1, authOK},
	}
	for _, tt := range tries {
		for i := range tt.times {
			if diff := cmp.Diff(tt.want, answerOf(t, tt.try.send(e, h))); diff != "" {
				t.Fatalf("%s, attempt %d (-want +got):\n%s", tt.name, i+1, diff)
			}
		}
	}
}

// TestAuthLockoutLogged checks that a lockout is logged once, with the
// client address, when it starts: not for the failures before it, nor for
// each attempt it refuses.
func TestAuthLockoutLogged(t *testing.T) {
	e := newEnv(t, envOptions{})
	sessions, err := form.NewSignedSessions(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pages := form.New(form.Options{Service: e.svc, Sessions: sessions, Now: e.clock.Now, Logger: log})
	h := New(Options{Service: e.svc, Responses: e.store, Pages: pages, Now: e.clock.Now, Sandbox: true,
		Logger: log}).Handler()
	bad := attempt{from: "192.0.2.7", key: "raw:Bearer svc_aaaaaaaaaaaaaaaa.wrong"}
	lockouts := func() []string {
		var lines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "locked out") {
				lines = append(lines, l[strings.Index(l, "level="):])
			}
		}
		return lines
	}
	for range 9 {
		bad.send(e, h)
	}
	if got := lockouts(); len(got) != 0 {
		t.Fatalf("logged before the lockout: %q", got)
	}
	bad.send(e, h) // the 10th failure: locked out from now on
	for range 5 {
		if got := answerOf(t, bad.send(e, h)); got.Status != http.StatusTooManyRequests {
			t.Fatalf("after 10 failures: %+v", got)
		}
	}
	want := []string{`level=WARN msg="client address locked out after failed API keys" client=192.0.2.7`}
	if diff := cmp.Diff(want, lockouts()); diff != "" {
		t.Errorf("lockout log (-want +got):\n%s", diff)
	}
}
