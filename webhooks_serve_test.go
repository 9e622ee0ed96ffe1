package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"onboard/notify/webhooktest"
)

// deliveryLine is one line of `webhooks deliveries --json` (docs/cli.md).
type deliveryLine struct {
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	EndpointID string `json:"endpoint_id"`
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	StatusCode int    `json:"status_code"`
	LatencyMS  int64  `json:"latency_ms"`
	Error      string `json:"error"`
	Success    bool   `json:"success"`
}

func deliveries(t *testing.T, args ...string) []deliveryLine {
	t.Helper()
	r := mustRun(t, append([]string{"webhooks", "deliveries", "--json"}, args...)...)
	var out []deliveryLine
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("webhooks deliveries --json: %v\n%s", err, r.stdout)
	}
	return out
}

// TestServeWebhooksSurviveSIGKILL runs the binary as a partner's operator
// would meet an outage: the receiver is down when events commit, the
// server is killed with SIGKILL in the middle of the retry schedule, and
// once the receiver is back and the server restarted, every event still
// arrives, in order, signed, with the attempts before the kill in the log.
func TestServeWebhooksSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	config := filepath.Join(dir, "onboard.toml")
	schedule := `["0s", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms", "300ms"]`
	if err := os.WriteFile(config, []byte("[webhooks]\nretry_schedule = "+schedule+"\ntimeout = \"2s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The receiver's address, refusing connections until it is back.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	p := startServe(t, "--config", config, "--data-dir", data)
	key := p.waitForKey(t)
	add := mustRun(t, "webhooks", "add", "--config", config, "--data-dir", data, "--org", "default", "--url", "http://"+addr+"/hooks")
	secret := strings.TrimSpace(add.stdout)
	body := p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)
	appID := decodeJSON(t, body)["application_id"].(string)

	// Wait until attempts have failed against the absent receiver, then
	// kill the server without letting it shut down.
	deadline := time.Now().Add(20 * time.Second)
	for len(deliveries(t, "--config", config, "--data-dir", data, "--failed")) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempts logged\n%s", p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t)

	back, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the receiver's port %s was taken meanwhile: %v", addr, err)
	}
	rcv := webhooktest.NewOn(t, back, secret)
	startServe(t, "--config", config, "--data-dir", data)
	var got []string
	for range 2 {
		d := rcv.Next(t, 20*time.Second)
		if len(d.Verified) != 1 {
			t.Errorf("%s delivery does not verify with the endpoint's secret", d.Event.Type)
		}
		var app struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(d.Event.Data, &app)
		if app.ID != appID {
			t.Errorf("%s is about %s, want %s", d.Event.Type, app.ID, appID)
		}
		got = append(got, d.Event.Type)
	}
	if want := []string{"application.created", "application.sent"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("deliveries after the restart %v, want %v", got, want)
	}

	// The log keeps the attempts made before the kill, and the success
	// after it continues their count.
	deadline = time.Now().Add(20 * time.Second)
	for {
		lines := deliveries(t, "--config", config, "--data-dir", data)
		var created []deliveryLine
		for _, l := range lines {
			if l.EventType == "application.created" {
				created = append(created, l)
			}
		}
		if len(created) > 0 && created[0].Success {
			last := created[len(created)-1]
			if created[0].Attempt != len(created) || last.Attempt != 1 || last.Success || last.Error == "" {
				t.Errorf("created event's attempts, newest first: %+v", created)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log shows no successful delivery of the created event: %+v", lines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
