package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"onboard/notify/webhooktest"
	"onboard/storage/postgres/pgtest"
)

// TestCLIOnSharedBackends: with PostgreSQL and S3 the commands need no
// server, no admin socket and no data directory: they connect to the
// database themselves. A server started afterwards sees what they did;
// while it runs they go through its socket (a revoked key stops working at
// its next request), and a second server on its data directory is refused.
func TestCLIOnSharedBackends(t *testing.T) {
	t.Parallel()
	blobs, env := s3Config(t)
	config := writeFile(t, "onboard.toml", fmt.Sprintf("[storage]\nbackend = \"postgres\"\npostgres_url = %q\n\n", pgtest.URL(t))+blobs)
	cli := func(dataDir string, args ...string) result {
		t.Helper()
		return runBinaryEnv(t, env, append([]string{"--config", config, "--data-dir", dataDir}, args...)...)
	}
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	created := cli(nowhere, "keys", "create", "--org", "default", "--name", "ci")
	if created.code != 0 || !sandboxKeyPattern.MatchString(created.stdout) {
		t.Fatalf("keys create: exit %d, stdout %q, stderr %q", created.code, created.stdout, created.stderr)
	}
	key := strings.TrimSpace(created.stdout)
	clientID, _, _ := strings.Cut(strings.TrimPrefix(key, "svc_"), ".")
	if list := cli(nowhere, "keys", "list"); list.code != 0 || !strings.Contains(list.stdout, clientID) {
		t.Errorf("keys list: exit %d, stdout %q, stderr %q", list.code, list.stdout, list.stderr)
	}
	wantRun(t, cli(nowhere, "blobs", "sweep"), 0, "0 files, 0 removed (no record refers to them), 0 newer than 1h0m0s left alone\n", "")

	data := filepath.Join(t.TempDir(), "data")
	p := startServeEnv(t, "127.0.0.1:0", "http://127.0.0.1:1", env, "--config", config, "--data-dir", data)
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications", key, "")
	if out := p.stdout.String(); out != "" {
		t.Errorf("serve printed %q; a store with a key gets no sandbox key", out)
	}
	if r := cli(data, "keys", "revoke", key); r.code != 0 {
		t.Fatalf("keys revoke: exit %d, stderr %q", r.code, r.stderr)
	}
	p.wantStatus(t, http.StatusUnauthorized, http.MethodGet, "/api/external/applications", key, "")

	second := cli(data, "serve", "--listen", "127.0.0.1:0")
	if second.code != 1 || !strings.Contains(second.stderr, "onboard: data directory "+data+" is in use by another onboard process\n") {
		t.Errorf("a second serve on the data directory: exit %d, stderr %q", second.code, second.stderr)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
}

// TestServeHearsDeliveriesQueuedElsewhere: on PostgreSQL a delivery that
// another process queues (a command with no server on its own data
// directory, as another instance would) is sent by the running server at
// once: it listens for the commits of every process on the database.
func TestServeHearsDeliveriesQueuedElsewhere(t *testing.T) {
	t.Parallel()
	config := writeFile(t, "onboard.toml", fmt.Sprintf("[storage]\nbackend = \"postgres\"\npostgres_url = %q\n", pgtest.URL(t)))
	p := startServe(t, "--config", config, "--data-dir", filepath.Join(t.TempDir(), "data"))
	p.waitForKey(t)
	rcv := webhooktest.New(t)
	elsewhere := t.TempDir() // an empty data directory: no server, no socket
	add := mustRun(t, "--config", config, "--data-dir", elsewhere, "webhooks", "add", "--org", "default", "--url", rcv.URL+"/hooks")
	m := regexp.MustCompile(`Added webhook endpoint (\S+) `).FindStringSubmatch(add.stderr)
	if m == nil {
		t.Fatalf("webhooks add said %q", add.stderr)
	}
	rcv.SetSecrets(strings.TrimSpace(add.stdout))
	queued := mustRun(t, "--config", config, "--data-dir", elsewhere, "webhooks", "test", m[1])
	if want := "a server on the same database delivers it at once"; !strings.Contains(queued.stderr, want) {
		t.Errorf("webhooks test said %q, want it to say %q", queued.stderr, want)
	}
	d := rcv.NextOf(t, "webhook.test", 20*time.Second)
	if d.Event.ID != strings.TrimSpace(queued.stdout) || len(d.Verified) != 1 {
		t.Errorf("delivered event %s (verified %d), want %s signed with the endpoint's secret", d.Event.ID, len(d.Verified), strings.TrimSpace(queued.stdout))
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
}
