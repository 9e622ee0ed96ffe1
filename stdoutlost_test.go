package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runToFullDevice runs the binary with its stdout on a device that refuses
// every write as /dev/full does (made in a temporary directory: the test
// skips without CAP_MKNOD), and returns its stderr and exit code.
func runToFullDevice(t *testing.T, args ...string) (string, int) {
	t.Helper()
	full := filepath.Join(t.TempDir(), "full")
	if err := unix.Mknod(full, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Skipf("cannot make a device node here (%v): run as root to check output lost to a full disk", err)
	}
	out, err := os.OpenFile(full, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = childEnv()
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("onboard %s: did not finish within 30s", strings.Join(args, " "))
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

// TestSecretLostToStdout: a secret shown only once that cannot be written
// to stdout fails the command, and what made it is undone (the key revoked,
// the endpoint removed; a rotated secret leaves the older ones signing);
// any other output that cannot be written fails the command too.
func TestSecretLostToStdout(t *testing.T) {
	t.Parallel()
	data := newDataDir(t)
	const lost = "write /dev/stdout: no space left on device"

	stderr, code := runToFullDevice(t, "--data-dir", data, "keys", "create", "--org", "default", "--name", "lost")
	if want := "onboard: the new key could not be written to stdout (" + lost + "): it was revoked at once; create another\n"; code != 1 || stderr != want {
		t.Errorf("keys create to a full stdout: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	var keys []struct {
		Name      string  `json:"name"`
		RevokedAt *string `json:"revoked_at"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "--data-dir", data, "keys", "list", "--json").stdout), &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].Name != "lost" || keys[0].RevokedAt == nil {
		t.Errorf("keys after the lost key: %+v; want it alone, revoked", keys)
	}

	stderr, code = runToFullDevice(t, "--data-dir", data, "webhooks", "add", "--org", "default", "--url", "https://hooks.example.com/lost")
	if want := "onboard: the signing secret could not be written to stdout (" + lost + "): the endpoint was removed at once; add it again\n"; code != 1 || stderr != want {
		t.Errorf("webhooks add to a full stdout: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	if list := mustRun(t, "--data-dir", data, "webhooks", "list").stdout; strings.Contains(list, "hooks.example.com/lost") {
		t.Errorf("webhooks list after the lost secret:\n%s\nwant the endpoint removed", list)
	}

	mustRun(t, "--data-dir", data, "webhooks", "add", "--org", "default", "--url", "https://hooks.example.com/kept")
	var id string
	for _, line := range strings.Split(mustRun(t, "--data-dir", data, "webhooks", "list").stdout, "\n") {
		if strings.Contains(line, "hooks.example.com/kept") {
			id = strings.Fields(line)[0]
		}
	}
	stderr, code = runToFullDevice(t, "--data-dir", data, "webhooks", "rotate-secret", id)
	if want := "onboard: the new signing secret could not be written to stdout (" + lost + "); deliveries are signed with it and, for 24 hours, with the previous ones: rotate again to get a secret you can store\n"; code != 1 || stderr != want {
		t.Errorf("webhooks rotate-secret to a full stdout: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}

	// Output that is not a secret: the command did its work, and says the
	// output was lost.
	stderr, code = runToFullDevice(t, "--data-dir", data, "webhooks", "test", id)
	if want := "onboard: write stdout: " + lost + "\n"; code != 1 || !strings.HasSuffix(stderr, want) {
		t.Errorf("webhooks test to a full stdout: exit %d, stderr %q; want 1 and %q last", code, stderr, want)
	}
}
