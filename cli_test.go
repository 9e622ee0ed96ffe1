package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// keyPattern is a full API key as keys create prints it (docs/cli.md).
var keyPattern = regexp.MustCompile(`^svc_[a-z0-9]{16}\.[A-Za-z0-9]{43}$`)

// clientIDOf returns the client id of a full key.
func clientIDOf(key string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(key, "svc_"), ".")
	return id
}

func TestCLIUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // regexp; "" means empty
		stderrHas  []string
		stderrNone bool
	}{
		{name: "version", args: []string{"version"}, stdout: `^onboard \S+.*\n$`, stderrNone: true},
		{name: "help", args: []string{"--help"}, stdout: `(?s)^Usage: onboard <command>.*serve.*keys create.*keys revoke`, stderrNone: true},
		{name: "keys create help", args: []string{"keys", "create", "--help"}, stdout: `(?s)^Usage: onboard keys create --org=STRING --name=STRING.*--scope`, stderrNone: true},
		{name: "unknown command", args: []string{"bogus"}, code: 2,
			stderrHas: []string{"onboard: unexpected argument bogus", "Usage: onboard <command>"}},
		{name: "no command", args: nil, code: 2,
			stderrHas: []string{"onboard: expected one of", "Usage: onboard <command>"}},
		{name: "keys create without --org", args: []string{"keys", "create", "--name", "ci"}, code: 2,
			stderrHas: []string{"onboard: missing flags: --org=STRING", "Usage: onboard keys create"}},
		{name: "keys revoke without KEY_ID", args: []string{"keys", "revoke"}, code: 2,
			stderrHas: []string{"onboard: expected \"<KEY_ID>\""}},
		{name: "bad --expires-in", args: []string{"keys", "create", "--org", "default", "--name", "ci", "--expires-in", "soon"}, code: 2,
			stderrHas: []string{"--expires-in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runBinary(t, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", r.code, tt.code, r.stderr)
			}
			if tt.stdout == "" {
				if r.stdout != "" {
					t.Errorf("stdout = %q, want nothing", r.stdout)
				}
			} else if !regexp.MustCompile(tt.stdout).MatchString(r.stdout) {
				t.Errorf("stdout = %q, want a match of %s", r.stdout, tt.stdout)
			}
			if tt.stderrNone && r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr does not contain %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}

// listedKey is what the tests compare of a key in keys list --json.
type listedKey struct {
	ClientID  string     `json:"client_id"`
	OrgID     string     `json:"org"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// listKeys runs keys list --json and decodes its output.
func listKeys(t *testing.T, args ...string) []listedKey {
	t.Helper()
	r := mustRun(t, append([]string{"keys", "list", "--json"}, args...)...)
	var keys []listedKey
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("keys list --json: %v\n%s", err, r.stdout)
	}
	for _, m := range raw {
		var k listedKey
		if err := json.Unmarshal(m, &k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// createKey runs keys create and checks its output contract: the key alone
// on stdout, the details on stderr.
func createKey(t *testing.T, args ...string) string {
	t.Helper()
	r := mustRun(t, append([]string{"keys", "create"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 1 || !strings.HasSuffix(r.stdout, "\n") || !keyPattern.MatchString(lines[0]) {
		t.Fatalf("keys create stdout = %q; want exactly one line matching %s", r.stdout, keyPattern)
	}
	key := lines[0]
	if want := "Created API key " + clientIDOf(key) + " "; !strings.Contains(r.stderr, want) {
		t.Errorf("keys create stderr does not contain %q:\n%s", want, r.stderr)
	}
	if strings.Contains(r.stderr, key) {
		t.Errorf("keys create printed the key on stderr too:\n%s", r.stderr)
	}
	return key
}

// TestCLIKeysDirect runs the keys commands with no server running: they open
// the data directory themselves.
func TestCLIKeysDirect(t *testing.T) {
	t.Parallel()
	data := newDataDir(t)
	dd := []string{"--data-dir", data}

	ci := createKey(t, append([]string{"--org", "default", "--name", "ci"}, dd...)...)
	if r := runBinary(t, append([]string{"keys", "create", "--org", "default", "--name", "reader", "--scope", "applications:read", "--expires-in", "720h"}, dd...)...); r.code != 0 {
		t.Fatalf("keys create --scope: exit %d\n%s", r.code, r.stderr)
	}

	errorCases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown organization", []string{"keys", "create", "--org", "nope", "--name", "x"}, "onboard: unknown organization 'nope'\n"},
		{"unknown scope", []string{"keys", "create", "--org", "default", "--name", "x", "--scope", "bogus"},
			"onboard: unknown scope 'bogus' (valid scopes: applications:create, applications:read, applications:write, rfi:create, events:read, rfi:read)\n"},
		{"empty name", []string{"keys", "create", "--org", "default", "--name", " "}, "onboard: a key name is required\n"},
		{"revoke unknown", []string{"keys", "revoke", "x"}, "onboard: API key 'x' not found\n"},
		{"list unknown organization", []string{"keys", "list", "--org", "nope"}, "onboard: unknown organization 'nope'\n"},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			wantFailure(t, runBinary(t, append(tt.args, dd...)...), tt.want)
		})
	}

	all := []string{"applications:create", "applications:read", "applications:write", "rfi:create", "events:read", "rfi:read"}
	keys := listKeys(t, dd...)
	if diff := cmp.Diff(keys, listKeys(t, append([]string{"--org", "default"}, dd...)...)); diff != "" {
		t.Errorf("keys list --org default differs from keys list (-all +org):\n%s", diff)
	}
	// The reader key's id and expiry are not known in advance: check their
	// shape, then compare the rest.
	got := slices.Clone(keys)
	if len(got) == 2 {
		if !regexp.MustCompile(`^[a-z0-9]{16}$`).MatchString(got[1].ClientID) {
			t.Errorf("reader key client id %q is not 16 lower-case alphanumerics", got[1].ClientID)
		}
		if exp := got[1].ExpiresAt; exp == nil || time.Until(*exp) < 719*time.Hour || time.Until(*exp) > 720*time.Hour {
			t.Errorf("reader key expires at %v, want in 720h", exp)
		}
		got[1].ClientID, got[1].ExpiresAt = "", nil
	}
	want := []listedKey{
		{ClientID: clientIDOf(ci), OrgID: "default", Name: "ci", Scopes: all},
		{OrgID: "default", Name: "reader", Scopes: []string{"applications:read"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys list --json (-want +got):\n%s", diff)
	}

	table := mustRun(t, append([]string{"keys", "list"}, dd...)...).stdout
	rows := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "ID ") {
		t.Fatalf("keys list table:\n%s\nwant a header and two rows", table)
	}
	if f := strings.Fields(rows[1]); len(f) != 8 || f[0] != clientIDOf(ci) || f[1] != "default" || f[2] != "ci" || f[7] != "-" {
		t.Errorf("keys list row %q: want the ci key, not revoked", rows[1])
	}

	r := mustRun(t, append([]string{"keys", "revoke", clientIDOf(ci)}, dd...)...)
	if want := "Revoked API key " + clientIDOf(ci) + ` (organization "default", name "ci").` + "\n"; r.stdout != want {
		t.Errorf("keys revoke stdout = %q, want %q", r.stdout, want)
	}
	keys = listKeys(t, dd...)
	if len(keys) != 2 || keys[0].RevokedAt == nil || keys[1].RevokedAt != nil {
		t.Errorf("after revoke, keys list --json = %+v; want the ci key revoked and the reader key not", keys)
	}
	table = mustRun(t, append([]string{"keys", "list"}, dd...)...).stdout
	if rows := strings.Split(table, "\n"); len(rows) < 2 || strings.HasSuffix(strings.TrimSpace(rows[1]), " -") {
		t.Errorf("after revoke, keys list shows the ci key unrevoked:\n%s", table)
	}
	// Revoking twice changes nothing and still succeeds.
	mustRun(t, append([]string{"keys", "revoke", clientIDOf(ci)}, dd...)...)
	if again := listKeys(t, dd...); len(again) != 2 || again[0].RevokedAt == nil || !again[0].RevokedAt.Equal(*keys[0].RevokedAt) {
		t.Errorf("a second revoke changed the key: %+v, before %+v", again, keys)
	}
}

func TestCLIInvalidConfig(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "onboard.toml", "environment = \"staging\"\n[limits]\nburst = 0\n")
	for _, args := range [][]string{
		{"serve", "--config", path},
		{"keys", "list", "--config", path, "--data-dir", t.TempDir()},
	} {
		r := runBinary(t, args...)
		want := "onboard: invalid configuration " + path + ":\n" +
			"environment must be \"sandbox\" or \"production\", not \"staging\"\n" +
			"limits.burst must be at least 1\n"
		if r.code != 1 {
			t.Errorf("onboard %s: exit code %d, want 1", args[0], r.code)
		}
		if diff := cmp.Diff(want, r.stderr); diff != "" {
			t.Errorf("onboard %s: stderr (-want +got):\n%s", args[0], diff)
		}
	}
	r := runBinary(t, "keys", "list", "--config", filepath.Join(t.TempDir(), "missing.toml"))
	if r.code != 1 || !strings.Contains(r.stderr, "missing.toml") {
		t.Errorf("missing --config file: exit %d, stderr %q; want 1 naming the file", r.code, r.stderr)
	}
}

// TestRunInProcess covers run's exit codes and writers without the binary.
func TestRunInProcess(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string // prefix
		stderr string // prefix
	}{
		{[]string{"version"}, 0, "onboard ", ""},
		{[]string{"--help"}, 0, "Usage: onboard <command>", ""},
		{[]string{"bogus"}, 2, "", "onboard: unexpected argument bogus\n\nUsage: onboard <command>"},
		{[]string{"keys", "create", "--org", "default"}, 2, "", "onboard: missing flags: --name=STRING\n\nUsage: onboard keys create"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d", code, tt.code)
			}
			if !strings.HasPrefix(stdout.String(), tt.stdout) || (tt.stdout == "" && stdout.Len() > 0) {
				t.Errorf("stdout = %q, want it to start with %q", stdout.String(), tt.stdout)
			}
			if !strings.HasPrefix(stderr.String(), tt.stderr) || (tt.stderr == "" && stderr.Len() > 0) {
				t.Errorf("stderr = %q, want it to start with %q", stderr.String(), tt.stderr)
			}
		})
	}
}
