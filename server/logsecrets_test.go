package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// lockedBuffer is a log destination for a server whose background work
// (group commits, mail) may log beside a request.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines parses the JSON log lines written so far.
func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// codePanicMailer is the recording mailbox, except that sending a
// verification code panics while armed: a bug in a form handler's call.
type codePanicMailer struct {
	*mailbox
	armed atomic.Bool
}

func (m *codePanicMailer) Send(ctx context.Context, msg onboarding.Message) error {
	if _, ok := msg.(onboarding.VerificationCode); ok && m.armed.Load() {
		panic("mailer bug")
	}
	return m.mailbox.Send(ctx, msg)
}

// TestLinkSlugsStayOutOfLogs drives the applicant form and the RFI page
// through the real router with every log (the Service's, the API
// server's, the form's) captured at debug level: pages, posts, links
// mangled in transit, a handler that panics and pages that fail because
// the store is closed. No line may hold a link's slug or pre-auth code;
// the failures are logged as ERROR lines naming the route's pattern.
func TestLinkSlugsStayOutOfLogs(t *testing.T) {
	logs := &lockedBuffer{}
	m := &codePanicMailer{mailbox: &mailbox{}}
	e := newEnv(t, envOptions{mailer: m, logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.mail = m.mailbox

	a := e.applicantAt(t, e.primaryLink(t, e.create(t, "acme", "")))
	formSlug := strings.TrimPrefix(a.base, "/a/")
	rfi := e.rfiRequest(t, "acme", true)
	r := e.applicantAt(t, rfiLinkOf(rfi))
	rfiSlug := strings.TrimPrefix(r.base, "/r/")
	secrets := []string{formSlug, rfiSlug, rfi.PreAuthCode}

	a.get("")
	m.armed.Store(true)
	if w := a.post("/verify/send", nil); w.Code != http.StatusInternalServerError {
		t.Errorf("send code with a panicking mailer = %d, want 500", w.Code)
	}
	m.armed.Store(false)
	e.clock.Advance(time.Minute) // the failed send counted: the next may follow after 30 s
	a.signIn()
	a.get("/s/company")
	a.get("/nope")
	wantRedirect(t, r.get("?auth_code="+rfi.PreAuthCode), r.base)
	r.get("")
	for _, path := range []string{"/a/" + formSlug + "/", "//a/" + formSlug, "/A/" + formSlug + "/s", "/x/r/" + rfiSlug} {
		e.do("GET", path, "", "")
	}

	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	if w := a.get(""); w.Code != http.StatusInternalServerError {
		t.Errorf("form page with the store closed = %d, want 500", w.Code)
	}
	if w := r.get(""); w.Code != http.StatusInternalServerError {
		t.Errorf("RFI page with the store closed = %d, want 500", w.Code)
	}

	out := logs.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the log holds the secret %q:\n%s", s, out)
		}
	}
	var failures []string
	for _, l := range logs.lines(t) {
		if l["level"] == "ERROR" {
			failures = append(failures, fmt.Sprint(l["msg"], " ", l["route"]))
		}
	}
	want := []string{"request failed /a/:slug/verify/send", "form request failed /a/:slug", "form request failed /r/:slug"}
	if diff := cmp.Diff(want, failures); diff != "" {
		t.Errorf("ERROR lines (-want +got):\n%s", diff)
	}
}
