package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newTestOutbox returns an outbox in a fresh directory (not yet existing)
// and the buffer its JSON log lines go to.
func newTestOutbox(t *testing.T) (*Outbox, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	dir := filepath.Join(t.TempDir(), "outbox", "mail")
	o, err := NewOutbox(dir, "Onboarding <no-reply@example.com>", slog.New(slog.NewJSONHandler(&logs, nil)), testNow)
	if err != nil {
		t.Fatalf("NewOutbox: %v", err)
	}
	return o, &logs
}

// outboxFiles lists the names in dir.
func outboxFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestOutboxSend(t *testing.T) {
	o, logs := newTestOutbox(t)
	fi, err := os.Stat(o.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("outbox directory mode = %v, want drwx------", fi.Mode())
	}

	m := Email{
		To: "zoe@example.org", ToName: "Zoë Ångström",
		Subject: "Vérifiez votre adresse",
		Text:    "Bonjour Zoë,\n\nvotre code : 123456\nhttps://onboard.example/v/xyz\n",
		Link:    "https://onboard.example/v/xyz",
	}
	if err := o.sendEmail(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}

	names := outboxFiles(t, o.Dir())
	if len(names) != 1 {
		t.Fatalf("outbox holds %q, want exactly one file and no temporary files", names)
	}
	if !regexp.MustCompile(`^20250102T020405\.000000000Z-[0-9a-f]{16}\.eml$`).MatchString(names[0]) {
		t.Errorf("file name %q, want <UTC timestamp>-<hex>.eml", names[0])
	}
	path := filepath.Join(o.Dir(), names[0])
	fi, err = os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o600 {
		t.Errorf("file mode = %v, want -rw-------", fi.Mode())
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, body := parseMessage(t, raw)
	if diff := cmp.Diff(crlf(m.Text), body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != m.ToName || to[0].Address != m.To {
		t.Errorf("To = %v, %v", to, err)
	}
	if got := h.Get("Date"); got != "Thu, 02 Jan 2025 03:04:05 +0100" {
		t.Errorf("Date = %q", got)
	}

	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logs, err)
	}
	delete(line, "time")
	want := map[string]any{
		"level":   "INFO",
		"msg":     "mail written to sandbox outbox",
		"to":      m.To,
		"subject": m.Subject,
		"file":    path,
	}
	if diff := cmp.Diff(want, line); diff != "" {
		t.Errorf("log line (-want +got):\n%s", diff)
	}
}

func TestOutboxConcurrentSends(t *testing.T) {
	o, logs := newTestOutbox(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- o.sendEmail(context.Background(), testMessage()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	names := outboxFiles(t, o.Dir())
	if len(names) != n {
		t.Errorf("outbox holds %d files, want %d", len(names), n)
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".eml") || strings.HasPrefix(name, ".") {
			t.Errorf("unexpected file %q", name)
		}
	}
	if got := strings.Count(logs.String(), "mail written to sandbox outbox"); got != n {
		t.Errorf("%d log lines, want %d", got, n)
	}
}

func TestOutboxRefusals(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		edit func(*Email)
		want string
	}{
		{"LF in To", context.Background(), func(m *Email) { m.To += "\nBcc: eve@example.org" }, "recipient address contains a line break"},
		{"CR in ToName", context.Background(), func(m *Email) { m.ToName = "Ada\rBcc: eve@example.org" }, "recipient name contains a line break"},
		{"CRLF in Subject", context.Background(), func(m *Email) { m.Subject += "\r\nBcc: eve@example.org" }, "subject contains a line break"},
		{"canceled", canceled, func(*Email) {}, "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, logs := newTestOutbox(t)
			m := testMessage()
			tt.edit(&m)
			err := o.sendEmail(tt.ctx, m)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Send error = %v, want %q", err, tt.want)
			}
			if names := outboxFiles(t, o.Dir()); len(names) != 0 {
				t.Errorf("refused message left files %q", names)
			}
			if logs.Len() != 0 {
				t.Errorf("refused message logged %s", logs)
			}
		})
	}
}

func TestNewOutbox(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, from, want string
	}{
		{"dir is a file", file, "no-reply@example.com", "notify: outbox:"},
		{"below a file", filepath.Join(file, "mail"), "no-reply@example.com", "notify: outbox:"},
		{"empty dir", "", "no-reply@example.com", "directory is empty"},
		{"bad from", t.TempDir(), "no-reply", "from address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOutbox(tt.dir, tt.from, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewOutbox error = %v, want %q", err, tt.want)
			}
		})
	}

	// Nil logger and clock are allowed; an existing directory is reused.
	dir := t.TempDir()
	o, err := NewOutbox(dir, "no-reply@example.com", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.sendEmail(context.Background(), testMessage()); err != nil {
		t.Fatal(err)
	}
	if names := outboxFiles(t, dir); len(names) != 1 {
		t.Errorf("outbox holds %q, want one file", names)
	}
}

// TestOutboxKeepsTheNewest: the outbox keeps its newest messages and
// removes the oldest as more are written, so that a long-running sandbox
// does not fill its disk.
func TestOutboxKeepsTheNewest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	tick := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Second)
		return tick
	}
	o, err := NewOutbox(dir, "Onboarding <no-reply@example.com>", nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	o.Keep(50)
	var all []string
	for i := range 2*outboxPruneEvery + 5 {
		if err := o.sendEmail(context.Background(), testMessage()); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if i == 2*outboxPruneEvery-1 {
			all = outboxFiles(t, dir)
		}
	}
	if len(all) != 50 {
		t.Fatalf("after %d messages the outbox holds %d, want the newest 50", 2*outboxPruneEvery, len(all))
	}
	got := outboxFiles(t, dir)
	if len(got) != 55 || got[0] != all[0] {
		t.Errorf("after 5 more: %d files from %s, want 55 from %s", len(got), got[0], all[0])
	}
	if !strings.HasPrefix(all[0], "20261126T090231") { // the 151st message, at 09:00:00 + 151 s
		t.Errorf("the oldest kept is %s, want the 151st", all[0])
	}
}
