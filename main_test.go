package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/config"
)

// binary is the onboard binary that TestMain builds once, for the tests that
// run the real command line.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "onboard-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "create a directory for the binary:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "onboard")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// childEnv is the environment of the binaries the tests run: the test's own,
// without ONBOARD_CONFIG and the variables that override settings of the
// configuration, so that the operator's settings cannot leak in.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "ONBOARD_CONFIG", config.EnvPostgresURL, config.EnvAWSAccessKeyID, config.EnvAWSSecretAccessKey:
		default:
			env = append(env, kv)
		}
	}
	return env
}

// result is what one run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// runBinaryGuard is how long runBinary lets a command run: a guard against
// a command that hangs, not a time it must meet, so it is far above what
// the slowest command (a short onboard bench) takes on a busy machine.
const runBinaryGuard = 3 * time.Minute

// runBinary runs the binary to completion (at most runBinaryGuard) in a
// temporary working directory.
func runBinary(t *testing.T, args ...string) result {
	t.Helper()
	return runBinaryEnv(t, nil, args...)
}

// runBinaryEnv is runBinary with the variables env (NAME=value) added to
// the child's environment.
func runBinaryEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runBinaryGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(childEnv(), env...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("onboard %s: did not finish within %s\nstderr:\n%s", strings.Join(args, " "), runBinaryGuard, stderr.String())
	case errors.As(err, &exitErr):
	case err != nil:
		t.Fatalf("onboard %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := runBinary(t, args...)
	if r.code != 0 {
		t.Fatalf("onboard %s: exit code %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// wantFailure asserts that a run failed with exit status 1, the message
// stderr alone on stderr and nothing on stdout.
func wantFailure(t *testing.T, r result, stderr string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit code = %d, want 1", r.code)
	}
	if diff := cmp.Diff(stderr, r.stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
}
