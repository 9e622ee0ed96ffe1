package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// servingPattern finds the address serve bound in its "onboard serving" log
// line, text or (--log-format json) JSON.
var servingPattern = regexp.MustCompile(`(?:msg="onboard serving" .*listen=|"msg":"onboard serving".*"listen":")(127\.0\.0\.1:\d+)`)

// sandboxKeyPattern finds a full key in serve's output.
var sandboxKeyPattern = regexp.MustCompile(`(?m)^svc_[a-z0-9]{16}\.[A-Za-z0-9]{43}$`)

// serveProc is a running `onboard serve`.
type serveProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed when the process has exited and its output is read
	base           string        // http://127.0.0.1:PORT
}

// startServe starts `onboard serve` with args plus a loopback listen address
// on a free port, and waits (at most 20 seconds) until it serves. The process
// is killed at the end of the test if it still runs.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startServeOn(t, "127.0.0.1:0", "http://127.0.0.1:1", args...)
}

// startServeOn is startServe with the listen address and public URL given.
func startServeOn(t *testing.T, listen, publicURL string, args ...string) *serveProc {
	t.Helper()
	return startServeEnv(t, listen, publicURL, nil, args...)
}

// startServeEnv is startServeOn with the variables env (NAME=value) added
// to the child's environment.
func startServeEnv(t *testing.T, listen, publicURL string, env []string, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	args = append([]string{"serve", "--listen", listen, "--public-url", publicURL}, args...)
	p.cmd = exec.Command(binary, args...)
	p.cmd.Env = append(childEnv(), env...)
	p.cmd.Dir = t.TempDir()
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start onboard serve: %v", err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Errorf("onboard serve (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
		}
	})
	deadline := time.After(20 * time.Second)
	for {
		if m := servingPattern.FindStringSubmatch(p.stderr.String()); m != nil {
			p.base = "http://" + m[1]
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("onboard serve exited early (code %d)\nstderr:\n%s", p.cmd.ProcessState.ExitCode(), p.stderr.String())
		case <-deadline:
			t.Fatalf("onboard serve did not log \"onboard serving\" within 20s\nstderr:\n%s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and returns the exit code, failing the test unless the
// process exits within 10 seconds.
func (p *serveProc) stop(t *testing.T) int {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	return p.wait(t)
}

// wait waits (at most 10 seconds) for the process to exit and returns its exit code.
func (p *serveProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		t.Fatalf("onboard serve did not exit within 10s\nstderr:\n%s", p.stderr.String())
		return -1
	}
}

// waitForLog waits (at most within) until serve's log shows a line matching
// pattern, and returns the match.
func (p *serveProc) waitForLog(t *testing.T, pattern *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	deadline := time.After(within)
	for {
		if m := pattern.FindStringSubmatch(p.stderr.String()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("onboard serve exited (code %d) before logging %s\nstderr:\n%s", p.cmd.ProcessState.ExitCode(), pattern, p.stderr.String())
		case <-deadline:
			t.Fatalf("onboard serve did not log %s within %v\nstderr:\n%s", pattern, within, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitForKey waits (at most 10 seconds) until serve's stdout shows the
// sandbox key, and returns it.
func (p *serveProc) waitForKey(t *testing.T) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if keys := sandboxKeyPattern.FindAllString(p.stdout.String(), -1); len(keys) > 0 {
			if len(keys) > 1 {
				t.Errorf("serve printed %d keys, want 1:\n%s", len(keys), p.stdout.String())
			}
			return keys[0]
		}
		select {
		case <-deadline:
			t.Fatalf("serve printed no sandbox key within 10s\nstdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

// call sends one API request and returns the status and the body.
func (p *serveProc) call(t *testing.T, method, path, key, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, string(b)
}

// wantStatus fails the test unless a request answers status.
func (p *serveProc) wantStatus(t *testing.T, status int, method, path, key, body string) string {
	t.Helper()
	got, b := p.call(t, method, path, key, body)
	if got != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, status, b)
	}
	return b
}

const createBody = `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`

// TestServeSandbox runs the binary as an operator would: first start, API
// calls, key administration through the admin socket while serving, a
// second server refused, graceful stop and restart on the same data.
func TestServeSandbox(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)

	// First start of an empty data directory: one key, printed once.
	key := p.waitForKey(t)
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications", key, "")

	// The admin socket is owner-only.
	sock := filepath.Join(data, "admin.sock")
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin.sock mode = %v, want a socket with mode 0600", fi.Mode())
	}

	// keys create while serving goes through admin.sock (the store is
	// locked by serve) and the key works at once.
	live := createKey(t, "--data-dir", data, "--org", "default", "--name", "live")
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications", live, "")
	keys := listKeys(t, "--data-dir", data)
	if len(keys) != 2 || keys[1].ClientID != clientIDOf(live) || keys[0].ClientID != clientIDOf(key) {
		t.Errorf("keys list through the socket = %+v; want the sandbox key and %s", keys, clientIDOf(live))
	}

	// keys revoke through the socket: the very next request is refused.
	mustRun(t, "keys", "revoke", "--data-dir", data, clientIDOf(live))
	status, body := p.call(t, http.MethodGet, "/api/external/applications", live, "")
	if status != http.StatusUnauthorized {
		t.Errorf("revoked key: status %d, want 401", status)
	}
	if diff := cmp.Diff(map[string]any{"error": "Invalid API key"}, decodeJSON(t, body)); diff != "" {
		t.Errorf("revoked key: body (-want +got):\n%s", diff)
	}
	if r := runBinary(t, "keys", "revoke", "--data-dir", data, "x"); r.code != 1 || r.stderr != "onboard: API key 'x' not found\n" {
		t.Errorf("revoke of an unknown key through the socket: exit %d, stderr %q", r.code, r.stderr)
	}

	// A second server on the same data directory fails fast, and leaves
	// the first one's socket alone.
	second := runBinary(t, "serve", "--data-dir", data, "--listen", "127.0.0.1:0")
	if second.code != 1 || !strings.Contains(second.stderr, "data directory "+data+" is in use by another onboard process") {
		t.Errorf("second serve: exit %d, stderr %q; want 1 saying the data directory is in use", second.code, second.stderr)
	}
	if second.stdout != "" {
		t.Errorf("second serve stdout = %q, want nothing", second.stdout)
	}
	listKeys(t, "--data-dir", data) // still reaches the first server

	// Create an application: the sandbox outbox receives the invite.
	var created struct {
		ApplicationID string `json:"application_id"`
		Link          string `json:"link"`
	}
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)), &created); err != nil {
		t.Fatal(err)
	}
	if created.ApplicationID == "" || !strings.HasPrefix(created.Link, "http://127.0.0.1:1/") {
		t.Errorf("create answered %+v; want an id and a link under the public URL", created)
	}
	mails := outboxMails(t, data)
	if len(mails) != 1 {
		t.Fatalf("outbox holds %d messages, want 1", len(mails))
	}
	if !strings.Contains(mails[0], created.Link) {
		t.Errorf("outbox message does not contain the link %s:\n%s", created.Link, mails[0])
	}

	// The registry documents job runs in serve: Northwind's three filings
	// are fetched into the blob store and download through signed links.
	// The job logs the outcome once it is stored.
	p.waitForLog(t, regexp.MustCompile(`msg="registry documents fetched" .*application_id=`+created.ApplicationID), 20*time.Second)
	app := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+created.ApplicationID, key, ""))
	docs, _ := app["registry_documents"].([]any)
	if app["registry_documents_status"] != "complete" || len(docs) != 3 {
		t.Fatalf("registry documents = %v %v, want complete with 3", app["registry_documents_status"], docs)
	}
	link := docs[0].(map[string]any)["download_url"].(string)
	if status, body := p.call(t, http.MethodGet, strings.TrimPrefix(link, "http://127.0.0.1:1"), "", ""); status != http.StatusOK || !strings.HasPrefix(body, "%PDF-") {
		t.Errorf("download %s = %d %.20q, want 200 and a PDF", link, status, body)
	}
	if fi, err := os.Stat(filepath.Join(data, "secrets", "download-signing.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("generated signing key: %v, mode %v; want a 0600 file", err, fi)
	}

	// SIGTERM while a request is in flight: the request completes, then
	// serve exits 0.
	inflight := startSlowPatch(t, p, key, created.ApplicationID)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if status, body := inflight(); status != http.StatusOK {
		t.Errorf("in-flight PATCH during shutdown: status %d, body %s; want 200", status, body)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("serve exit code after SIGTERM = %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), `msg="onboard stopped"`) {
		t.Errorf("serve did not log its stop:\n%s", p.stderr.String())
	}
	if n := len(sandboxKeyPattern.FindAllString(p.stdout.String(), -1)); n != 1 {
		t.Errorf("first start printed %d keys, want 1:\n%s", n, p.stdout.String())
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("admin.sock after stop: %v; want it removed", err)
	}

	// Restart on the same data: no key printed, the data is still there.
	p2 := startServe(t, "--data-dir", data)
	got := decodeJSON(t, p2.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+created.ApplicationID, key, ""))
	if !strings.Contains(fmt.Sprint(got), "https://northwind.example") {
		t.Errorf("after restart, the application lacks the PATCHed website: %v", got)
	}
	p2.wantStatus(t, http.StatusUnauthorized, http.MethodGet, "/api/external/applications", live, "")
	if code := p2.stop(t); code != 0 {
		t.Errorf("second start: exit code %d, want 0", code)
	}
	if p2.stdout.String() != "" {
		t.Errorf("second start printed %q; want nothing on stdout", p2.stdout.String())
	}
}

// startSlowPatch sends a PATCH whose body arrives in two parts, so that it
// is in flight when the caller signals the server. It returns once the
// server is reading the body (it answers the request's "Expect:
// 100-continue" when the body is first read). The returned function waits
// until the server has begun shutting down (it refuses new connections),
// then sends the rest and returns the response.
func startSlowPatch(t *testing.T, p *serveProc, key, id string) func() (int, string) {
	t.Helper()
	addr := strings.TrimPrefix(p.base, "http://")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	body := `{"fields":{"website":"https://northwind.example"}}`
	head := fmt.Sprintf("PATCH /api/external/applications/%s HTTP/1.1\r\nHost: onboard\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n", id, key, len(body))
	if _, err := io.WriteString(conn, head+body[:10]); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("in-flight PATCH: %v", err)
	}
	if resp.StatusCode != http.StatusContinue {
		t.Fatalf("in-flight PATCH: status %d before the body was sent, want 100", resp.StatusCode)
	}
	return func() (int, string) {
		t.Helper()
		waitRefused(t, addr)
		if _, err := io.WriteString(conn, body[10:]); err != nil {
			t.Fatalf("in-flight PATCH: write the rest of the body: %v", err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("in-flight PATCH: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// waitRefused waits (at most 10 seconds) until addr refuses connections: a
// server that closed its listener to shut down.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return
		case err == nil:
			conn.Close()
		case errors.Is(err, syscall.ECONNRESET): // queued as the listener closed
		default:
			t.Fatalf("dial %s: %v; want it accepted or refused", addr, err)
		}
		select {
		case <-deadline:
			t.Fatalf("%s still accepts connections after 10s", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// outboxMails returns the decoded bodies of the sandbox outbox's messages.
func outboxMails(t *testing.T, data string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(data, "outbox", "mail", "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := mail.ReadMessage(f)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, string(body))
	}
	return out
}

func decodeJSON(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return v
}

// TestServeBootstrapKeyAfterKeysList: a data directory first opened by
// another command still gets its sandbox key on the first serve, and one
// where the operator already created a key gets none.
func TestServeBootstrapKey(t *testing.T) {
	t.Parallel()
	t.Run("after keys list", func(t *testing.T) {
		t.Parallel()
		data := newDataDir(t)
		mustRun(t, "keys", "list", "--data-dir", data)
		p := startServe(t, "--data-dir", data)
		key := p.waitForKey(t)
		p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications", key, "")
		if code := p.stop(t); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("after keys create", func(t *testing.T) {
		t.Parallel()
		data := newDataDir(t)
		createKey(t, "--data-dir", data, "--org", "default", "--name", "ops")
		p := startServe(t, "--data-dir", data)
		if code := p.stop(t); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		if out := p.stdout.String(); out != "" {
			t.Errorf("serve printed %q; want no key when one exists", out)
		}
	})
}

// TestServeProduction: production never prints a key, even on the first start.
func TestServeProduction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte(productionConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	p := startServe(t, "--config", config, "--data-dir", data)
	if !strings.Contains(p.stderr.String(), "environment=production") {
		t.Errorf("serve log does not show production:\n%s", p.stderr.String())
	}
	p.wantStatus(t, http.StatusUnauthorized, http.MethodGet, "/api/external/applications", "", "")
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
	if out := p.stdout.String(); out != "" {
		t.Errorf("production serve printed %q; want nothing", out)
	}
	if keys := listKeys(t, "--config", config, "--data-dir", data); len(keys) != 0 {
		t.Errorf("production start created keys: %+v", keys)
	}
}

// TestServeExampleConfig serves config.example.toml: the sandbox key goes to
// its first organization, and both its configurations (the built-in form
// and the kyb-lite form file) take applications, with links on the custom
// domain.
func TestServeExampleConfig(t *testing.T) {
	t.Parallel()
	example, err := filepath.Abs("config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--config", example, "--data-dir", data)
	key := p.waitForKey(t)
	if !strings.Contains(p.stdout.String(), `organization "acme"`) {
		t.Errorf("sandbox key not announced for organization acme:\n%s", p.stdout.String())
	}
	for _, configID := range []string{"acme-standard", "acme-lite"} {
		body := strings.Replace(createBody, "{", `{"config_id":"`+configID+`",`, 1)
		var created struct {
			Link string `json:"link"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, body)), &created); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(created.Link, "https://onboarding.acme.example/") {
			t.Errorf("%s: link %q is not on the custom domain", configID, created.Link)
		}
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}
