package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// secretPattern is a signing secret as webhooks add and rotate-secret
// print it (docs/cli.md): whsec_ and the standard base64 of 32 bytes.
var secretPattern = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)

// eventIDPattern is an event id: evt_ and a ULID.
var eventIDPattern = regexp.MustCompile(`^evt_[0-9A-HJKMNP-TV-Z]{26}$`)

// listedEndpoint is an item of webhooks list --json, with exactly the keys
// of docs/cli.md.
type listedEndpoint struct {
	ID             string    `json:"id"`
	OrgID          string    `json:"org"`
	URL            string    `json:"url"`
	Description    string    `json:"description"`
	Events         []string  `json:"events"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
}

// listedAttempt is an item of webhooks deliveries --json, with exactly the
// keys of docs/cli.md.
type listedAttempt struct {
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	EndpointID string    `json:"endpoint_id"`
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code"`
	LatencyMS  int64     `json:"latency_ms"`
	Error      string    `json:"error"`
	Success    bool      `json:"success"`
}

// decodeList decodes the one JSON array a --json command prints into out,
// failing the test unless every item has exactly the keys of T (no null
// where T has a list).
func decodeList[T any](t *testing.T, stdout string) []T {
	t.Helper()
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil || raw == nil {
		t.Fatalf("want one JSON array: %v\n%s", err, stdout)
	}
	var zero T
	b, err := json.Marshal(zero)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	out := make([]T, 0, len(raw))
	for i, item := range raw {
		var keys, wantKeys []string
		for k, v := range item {
			keys = append(keys, k)
			if string(v) == "null" {
				t.Errorf("item %d: %s is null", i, k)
			}
		}
		for k := range want {
			wantKeys = append(wantKeys, k)
		}
		slices.Sort(keys)
		slices.Sort(wantKeys)
		if diff := cmp.Diff(wantKeys, keys); diff != "" {
			t.Errorf("item %d keys (-want +got):\n%s", i, diff)
		}
		b, _ := json.Marshal(item)
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		out = append(out, v)
	}
	return out
}

// listEndpoints runs webhooks list --json.
func listEndpoints(t *testing.T, args ...string) []listedEndpoint {
	t.Helper()
	return decodeList[listedEndpoint](t, mustRun(t, append([]string{"webhooks", "list", "--json"}, args...)...).stdout)
}

// listAttempts runs webhooks deliveries --json.
func listAttempts(t *testing.T, args ...string) []listedAttempt {
	t.Helper()
	return decodeList[listedAttempt](t, mustRun(t, append([]string{"webhooks", "deliveries", "--json"}, args...)...).stdout)
}

// checkSecret fails the test unless s is a signing secret whose key is 32 bytes.
func checkSecret(t *testing.T, s string) {
	t.Helper()
	if !secretPattern.MatchString(s) {
		t.Errorf("secret %q does not match %s", s, secretPattern)
		return
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_")); err != nil || len(key) != 32 {
		t.Errorf("secret %q: key of %d bytes (%v), want 32", s, len(key), err)
	}
}

// oneLine returns the single line of out, failing the test unless out is
// exactly one line.
func oneLine(t *testing.T, what, out string) string {
	t.Helper()
	line, ok := strings.CutSuffix(out, "\n")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("%s stdout = %q; want exactly one line", what, out)
	}
	return line
}

// addEndpoint runs webhooks add and checks its output contract: the secret
// alone on stdout, the endpoint's id and details on stderr. It returns the
// secret and the endpoint id.
func addEndpoint(t *testing.T, args ...string) (secret, id string) {
	t.Helper()
	r := mustRun(t, append([]string{"webhooks", "add"}, args...)...)
	secret = oneLine(t, "webhooks add", r.stdout)
	checkSecret(t, secret)
	m := regexp.MustCompile(`^Added webhook endpoint (we_[0-9A-Z]{26}) for organization "default": `).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("webhooks add stderr does not name the endpoint:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "shown only once") || strings.Contains(r.stderr, secret) {
		t.Errorf("webhooks add stderr should say the secret is shown once, and not repeat it:\n%s", r.stderr)
	}
	return secret, m[1]
}

// validEventTypes is the list the unknown event type message gives.
const validEventTypes = "application.created, application.sent, application.opened, application.submitted, application.referred, " +
	"application.approved, application.rejected, application.registry_documents_updated, rfi_request.created, " +
	"rfi_request.opened, rfi_request.completed, rfi_request.expired, webhook.test"

func TestWebhooksUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // substring
	}{
		{"add without --url", []string{"webhooks", "add", "--org", "default"}, 2, "onboard: missing flags: --url=URL"},
		{"add without --org", []string{"webhooks", "add", "--url", "http://127.0.0.1/x"}, 2, "onboard: missing flags: --org=ORG"},
		{"remove without ID", []string{"webhooks", "remove"}, 2, `onboard: expected "<ID>"`},
		{"redeliver without EVENT_ID", []string{"webhooks", "redeliver"}, 2, `onboard: expected "<EVENT_ID>"`},
		{"limit zero", []string{"webhooks", "deliveries", "--limit", "0"}, 1, "onboard: --limit must be at least 1\n"},
		{"limit not a number", []string{"webhooks", "deliveries", "--limit", "many"}, 2, "--limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, append(tt.args, "--data-dir", filepath.Join(t.TempDir(), "data"))...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, nothing, and %q", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
	help := mustRun(t, "webhooks", "--help").stdout
	for _, cmd := range []string{"add", "list", "remove", "enable", "disable", "test", "rotate-secret", "deliveries", "redeliver"} {
		if !strings.Contains(help, "webhooks "+cmd+" ") {
			t.Errorf("webhooks --help does not list %s:\n%s", cmd, help)
		}
	}
	if help := mustRun(t, "keys", "create", "--help").stdout; !strings.Contains(help, "events:read") {
		t.Errorf("keys create --help does not list the events:read scope:\n%s", help)
	}
}

// TestWebhooksDirect runs the webhooks commands with no server: they open
// the data directory themselves, and nothing is delivered.
func TestWebhooksDirect(t *testing.T) {
	t.Parallel()
	webhooksScenario(t, newDataDir(t), nil)
}

// TestWebhooksWhileServing runs the webhooks commands while serve holds the
// data directory: they go through admin.sock, and serve delivers.
func TestWebhooksWhileServing(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	webhooksScenario(t, data, p)
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
}

// webhooksScenario drives every webhooks command against data: through
// the running server p, or directly when p is nil.
func webhooksScenario(t *testing.T, data string, p *serveProc) {
	dd := []string{"--data-dir", data}
	received := make(chan string, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received <- r.Header.Get("webhook-id")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	hooks := receiver.URL + "/hooks" // http://127.0.0.1:PORT: accepted in sandbox

	if r := mustRun(t, append([]string{"webhooks", "list", "--json"}, dd...)...); r.stdout != "[]\n" {
		t.Errorf("webhooks list --json with no endpoint = %q, want []", r.stdout)
	}
	start := time.Now().UTC().Truncate(time.Second)
	secret, all := addEndpoint(t, append([]string{"--org", "default", "--url", hooks}, dd...)...)
	_, some := addEndpoint(t, append([]string{"--org", "default", "--url", hooks + "/crm", "--event", "application.submitted",
		"--event", "application.approved,application.rejected", "--description", " CRM sync "}, dd...)...)

	eps := listEndpoints(t, dd...)
	if diff := cmp.Diff(eps, listEndpoints(t, append([]string{"--org", "default"}, dd...)...)); diff != "" {
		t.Errorf("webhooks list --org default differs from webhooks list (-all +org):\n%s", diff)
	}
	for _, ep := range eps {
		if ep.CreatedAt.Before(start) || ep.CreatedAt.After(time.Now()) {
			t.Errorf("endpoint %s created at %v, want now", ep.ID, ep.CreatedAt)
		}
	}
	want := []listedEndpoint{
		{ID: all, OrgID: "default", URL: hooks, Events: []string{}, Enabled: true},
		{ID: some, OrgID: "default", URL: hooks + "/crm", Description: "CRM sync", Enabled: true,
			Events: []string{"application.submitted", "application.approved", "application.rejected"}},
	}
	if diff := cmp.Diff(want, eps, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".CreatedAt" }, cmp.Ignore())); diff != "" {
		t.Errorf("webhooks list --json (-want +got):\n%s", diff)
	}
	table := mustRun(t, append([]string{"webhooks", "list"}, dd...)...).stdout
	rows := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "ID ") {
		t.Fatalf("webhooks list table:\n%s\nwant a header and two rows", table)
	}
	for i, wantRow := range [][]string{{all, "default", hooks, "all"}, {some, "default", hooks + "/crm", "application.submitted,application.approved,application.rejected"}} {
		if f := strings.Fields(rows[i+1]); len(f) < 6 || !slices.Equal(f[:4], wantRow) || f[5] != "enabled" {
			t.Errorf("webhooks list row %q: want %v, enabled", rows[i+1], wantRow)
		}
	}

	errorCases := []struct {
		name string
		args []string
		want string
	}{
		{"add to an unknown organization", []string{"add", "--org", "nope", "--url", hooks}, "onboard: unknown organization 'nope'\n"},
		{"add with a blank URL", []string{"add", "--org", "default", "--url", " "}, "onboard: a webhook URL is required\n"},
		{"add with an unknown event type", []string{"add", "--org", "default", "--url", hooks, "--event", "application.created", "--event", "bogus"},
			"onboard: unknown event type 'bogus' (valid types: " + validEventTypes + ")\n"},
		{"add with an empty event type", []string{"add", "--org", "default", "--url", hooks, "--event", ""},
			"onboard: an event type is required after --event (leave --event out to receive every type)\n"},
		{"add with a long description", []string{"add", "--org", "default", "--url", hooks, "--description", strings.Repeat("x", 201)},
			"onboard: a description is at most 200 characters\n"},
		{"add with an escape sequence in the description", []string{"add", "--org", "default", "--url", hooks, "--description", "ops \x1b[31mteam"},
			"onboard: a description must be one line, without control characters\n"},
		{"list an unknown organization", []string{"list", "--org", "nope"}, "onboard: unknown organization 'nope'\n"},
		{"remove an unknown endpoint", []string{"remove", "we_nope"}, "onboard: webhook endpoint 'we_nope' not found\n"},
		{"enable an unknown endpoint", []string{"enable", "we_nope"}, "onboard: webhook endpoint 'we_nope' not found\n"},
		{"disable an unknown endpoint", []string{"disable", "we_nope"}, "onboard: webhook endpoint 'we_nope' not found\n"},
		{"test an unknown endpoint", []string{"test", "we_nope"}, "onboard: webhook endpoint 'we_nope' not found\n"},
		{"rotate the secret of an unknown endpoint", []string{"rotate-secret", "we_nope"}, "onboard: webhook endpoint 'we_nope' not found\n"},
		{"redeliver an unknown event", []string{"redeliver", "evt_nope"}, "onboard: event 'evt_nope' not found (events are kept 30 days)\n"},
		{"redeliver to an unknown endpoint", []string{"redeliver", "evt_nope", "--endpoint", "we_nope"}, "onboard: webhook endpoint 'we_nope' not found\n"},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			wantFailure(t, runBinary(t, append(append([]string{"webhooks"}, tt.args...), dd...)...), tt.want)
		})
	}
	if n := len(listEndpoints(t, dd...)); n != 2 {
		t.Errorf("after the refused commands, %d endpoints, want 2", n)
	}

	// rotate-secret: a new secret alone on stdout; the old one signs for
	// 24 hours more, as stderr says.
	before := time.Now().UTC().Truncate(time.Second)
	r := mustRun(t, append([]string{"webhooks", "rotate-secret", all}, dd...)...)
	rotated := oneLine(t, "webhooks rotate-secret", r.stdout)
	checkSecret(t, rotated)
	if rotated == secret {
		t.Errorf("rotate-secret printed the old secret again")
	}
	m := regexp.MustCompile(`keeps signing deliveries beside the new one for 24 hours, until (\S+)\.\n`).FindStringSubmatch(r.stderr)
	if m == nil || strings.Contains(r.stderr, rotated) {
		t.Fatalf("rotate-secret stderr should say until when the old secret signs, without the new one:\n%s", r.stderr)
	}
	if until, err := time.Parse(time.RFC3339, m[1]); err != nil || until.Before(before.Add(24*time.Hour)) || until.After(time.Now().Add(24*time.Hour)) {
		t.Errorf("the old secret signs until %s, want 24 hours from now", m[1])
	}
	if diff := cmp.Diff(eps, listEndpoints(t, dd...)); diff != "" {
		t.Errorf("webhooks list changed by rotate-secret (-before +after):\n%s", diff)
	}

	// disable, then test is refused; enable, and test queues an event.
	// Disabling or enabling twice is no error, and says so.
	for _, want := range []string{
		"Disabled webhook endpoint " + all + " (" + hooks + "); its queued deliveries were dropped.\n",
		"Webhook endpoint " + all + " (" + hooks + ") is already disabled (disabled by the operator).\n",
	} {
		r := mustRun(t, append([]string{"webhooks", "disable", all}, dd...)...)
		if r.stdout != want || r.stderr != "" {
			t.Errorf("webhooks disable: stdout %q, stderr %q; want %q, nothing", r.stdout, r.stderr, want)
		}
	}
	if got := listEndpoints(t, dd...)[0]; got.Enabled || got.DisabledReason != "disabled by the operator" {
		t.Errorf("after disable, endpoint = %+v; want disabled by the operator", got)
	}
	if table := mustRun(t, append([]string{"webhooks", "list"}, dd...)...).stdout; !strings.Contains(table, " disabled: by the operator ") {
		t.Errorf("webhooks list does not show the endpoint disabled by the operator:\n%s", table)
	}
	wantFailure(t, runBinary(t, append([]string{"webhooks", "test", all}, dd...)...),
		"onboard: webhook endpoint '"+all+"' is disabled (disabled by the operator); enable it first\n")
	r = mustRun(t, append([]string{"webhooks", "enable", all}, dd...)...)
	if want := "Enabled webhook endpoint " + all + " (" + hooks + ").\n"; r.stdout != want || !strings.Contains(r.stderr, "Events committed while it was disabled are not sent") {
		t.Errorf("webhooks enable: stdout %q, stderr %q; want %q and the note on missed events", r.stdout, r.stderr, want)
	}
	r = mustRun(t, append([]string{"webhooks", "enable", all}, dd...)...)
	if want := "Webhook endpoint " + all + " (" + hooks + ") is already enabled.\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("webhooks enable, twice: stdout %q, stderr %q; want %q, nothing", r.stdout, r.stderr, want)
	}
	if got := listEndpoints(t, dd...)[0]; !got.Enabled || got.DisabledReason != "" {
		t.Errorf("after enable, endpoint = %+v; want enabled, no reason", got)
	}

	r = mustRun(t, append([]string{"webhooks", "test", all}, dd...)...)
	eventID := oneLine(t, "webhooks test", r.stdout)
	if !eventIDPattern.MatchString(eventID) {
		t.Errorf("webhooks test printed %q, want an event id", eventID)
	}
	if said := strings.Contains(r.stderr, "the delivery happens when `onboard serve` runs"); said != (p == nil) {
		t.Errorf("webhooks test stderr (serving: %v):\n%s", p != nil, r.stderr)
	}

	if p == nil {
		// Nothing delivers without a server: the log is empty, and the
		// queued event can be queued again.
		if r := mustRun(t, append([]string{"webhooks", "deliveries", "--json"}, dd...)...); r.stdout != "[]\n" {
			t.Errorf("webhooks deliveries --json without a server = %q, want []", r.stdout)
		}
		r = mustRun(t, append([]string{"webhooks", "redeliver", eventID}, dd...)...)
		if want := "Queued event " + eventID + " for delivery to " + all + ".\n"; r.stdout != want || !strings.Contains(r.stderr, "`onboard serve`") {
			t.Errorf("webhooks redeliver: stdout %q, stderr %q; want %q and a word on serve", r.stdout, r.stderr, want)
		}
	} else {
		// serve delivers the test event, and the log shows the attempt.
		if got := waitReceived(t, received); got != eventID {
			t.Errorf("the receiver got event %q, want %q", got, eventID)
		}
		lines := waitAttempts(t, 1, append([]string{"--event", eventID}, dd...)...)
		if diff := cmp.Diff(listedAttempt{EventID: eventID, EventType: "webhook.test", EndpointID: all, Attempt: 1, StatusCode: 204, Success: true},
			lines[0], cmp.FilterPath(func(p cmp.Path) bool { s := p.Last().String(); return s == ".At" || s == ".LatencyMS" }, cmp.Ignore())); diff != "" {
			t.Errorf("delivery log (-want +got):\n%s", diff)
		}
		r = mustRun(t, append([]string{"webhooks", "redeliver", eventID, "--endpoint", all}, dd...)...)
		if want := "Queued event " + eventID + " for delivery to " + all + ".\n"; r.stdout != want || r.stderr != "" {
			t.Errorf("webhooks redeliver: stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
		}
		if got := waitReceived(t, received); got != eventID {
			t.Errorf("the redelivery carried event %q, want %q", got, eventID)
		}
		lines = waitAttempts(t, 2, append([]string{"--endpoint", all}, dd...)...)
		if !lines[0].At.After(lines[1].At) && !lines[0].At.Equal(lines[1].At) {
			t.Errorf("delivery log not newest first: %+v", lines)
		}
		if failed := listAttempts(t, append([]string{"--failed"}, dd...)...); len(failed) != 0 {
			t.Errorf("webhooks deliveries --failed = %+v, want none", failed)
		}
		if n := len(listAttempts(t, append([]string{"--limit", "1"}, dd...)...)); n != 1 {
			t.Errorf("webhooks deliveries --limit 1 gave %d lines", n)
		}
		table := mustRun(t, append([]string{"webhooks", "deliveries"}, dd...)...).stdout
		rows := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
		if len(rows) != 3 || !strings.HasPrefix(rows[0], "AT ") {
			t.Fatalf("webhooks deliveries table:\n%s\nwant a header and two rows", table)
		}
		if f := strings.Fields(rows[1]); len(f) != 8 || f[1] != eventID || f[2] != "webhook.test" || f[3] != all || f[5] != "204" || f[7] != "ok" {
			t.Errorf("webhooks deliveries row %q: want the test event's successful attempt", rows[1])
		}
	}

	r = mustRun(t, append([]string{"webhooks", "remove", some}, dd...)...)
	if want := "Removed webhook endpoint " + some + "; its queued deliveries were dropped.\n"; r.stdout != want {
		t.Errorf("webhooks remove: stdout %q, want %q", r.stdout, want)
	}
	if got := listEndpoints(t, dd...); len(got) != 1 || got[0].ID != all {
		t.Errorf("after remove, endpoints %+v; want only %s", got, all)
	}
	wantFailure(t, runBinary(t, append([]string{"webhooks", "remove", some}, dd...)...), "onboard: webhook endpoint '"+some+"' not found\n")
}

// waitReceived waits (at most 20 seconds) for a delivery to the receiver
// and returns its webhook-id.
func waitReceived(t *testing.T, received <-chan string) string {
	t.Helper()
	select {
	case id := <-received:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery within 20s")
		return ""
	}
}

// waitAttempts waits (at most 20 seconds) until webhooks deliveries with
// args shows n lines, and returns them.
func waitAttempts(t *testing.T, n int, args ...string) []listedAttempt {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		lines := listAttempts(t, args...)
		if len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks deliveries %v: %d lines after 20s, want %d", args, len(lines), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWebhooksProduction: production refuses endpoint URLs that are not
// https, or that are loopback addresses.
func TestWebhooksProduction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte(productionConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	dd := []string{"--config", config, "--data-dir", newDataDir(t)}
	for _, tt := range []struct {
		url  string
		want string // in the message, after its prefix
	}{
		{"http://example.com/x", "https"},
		{"https://127.0.0.1/x", "loopback"},
	} {
		t.Run(tt.url, func(t *testing.T) {
			r := runBinary(t, append([]string{"webhooks", "add", "--org", "default", "--url", tt.url}, dd...)...)
			msg, ok := strings.CutPrefix(r.stderr, "onboard: Invalid webhook URL: ")
			if r.code != 1 || r.stdout != "" || !ok || !strings.Contains(msg, tt.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, and one line \"onboard: Invalid webhook URL: ...%s...\"", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
	if got := listEndpoints(t, dd...); len(got) != 0 {
		t.Errorf("refused URLs were registered: %+v", got)
	}
}
