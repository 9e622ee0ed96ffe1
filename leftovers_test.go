package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// leftoverGuard bounds the wait for a command to reach the point where
// the test kills it: a guard against a hang, not a time it must meet.
const leftoverGuard = 2 * time.Minute

// started is a run of the binary in the background.
type started struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	done   chan struct{}
}

// startBinary starts the binary with args; kill ends it with SIGKILL.
func startBinary(t *testing.T, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(binary, args...), done: make(chan struct{})}
	s.cmd.Env = childEnv()
	s.cmd.Dir = t.TempDir()
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.kill(t) })
	return s
}

// kill ends the run with SIGKILL and waits for it to end.
func (s *started) kill(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// waitFor polls until found returns a path, failing the test if the run
// ends first or after leftoverGuard.
func (s *started) waitFor(t *testing.T, what string, found func() string) string {
	t.Helper()
	deadline := time.Now().Add(leftoverGuard)
	for {
		if p := found(); p != "" {
			return p
		}
		select {
		case <-s.done:
			t.Fatalf("the command ended before %s: %s", what, s.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", what, leftoverGuard)
		}
	}
}

// entryWithPrefix returns the path of the first entry of dir whose name
// starts with prefix, or "".
func entryWithPrefix(dir, prefix string) string {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// TestBackupLeftoversRemoved kills backups while they write their archive
// (each blocked on a file of the data directory that is a named pipe, so
// that it stops at a known point): the partial archive a killed backup
// leaves is removed, and reported, by the next backup to the same
// directory, while a partial archive a backup still running is writing is
// left alone.
//
// The next backup writes another file in the same directory, as a nightly
// backup that names its archives by date does.
func TestBackupLeftoversRemoved(t *testing.T) {
	t.Parallel()
	stuck := filepath.Join(t.TempDir(), "stuck")
	blob := filepath.Join(stuck, blobPath(seedDocs(t, stuck).blobID))
	content, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(blob, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	seedDocs(t, other)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "b.tar.gz")

	first := startBinary(t, "backup", "--data-dir", stuck, "--out", out)
	partial := first.waitFor(t, "partial archive", func() string { return entryWithPrefix(outDir, ".b.tar.gz.backup-tmp-") })

	// A backup of another directory to the same file while the first runs
	// leaves the first's partial archive alone.
	r := mustRun(t, "backup", "--data-dir", other, "--out", out)
	if strings.Contains(r.stderr, "Removed a partial") {
		t.Errorf("a backup removed the partial archive of a running one: %s", r.stderr)
	}
	if diff := cmp.Diff([]string{filepath.Base(partial), "b.tar.gz"}, dirEntries(t, outDir)); diff != "" {
		t.Errorf("beside the archive while a backup runs (-want +got):\n%s", diff)
	}

	first.kill(t)
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, content, 0o600); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(outDir, "next.tar.gz")
	r = mustRun(t, "backup", "--data-dir", stuck, "--out", next)
	lines := strings.SplitAfter(r.stderr, "\n")
	if want := "Removed a partial backup left by an interrupted run: " + partial + "\n"; len(lines) != 3 || lines[0] != want || !backupSummary.MatchString(lines[1]) {
		t.Errorf("backup after the kill: stderr %q; want %q, then the summary", r.stderr, want)
	}
	if diff := cmp.Diff([]string{"b.tar.gz", "next.tar.gz"}, dirEntries(t, outDir)); diff != "" {
		t.Errorf("beside the archive after the next backup (-want +got):\n%s", diff)
	}
	mustRun(t, "restore", "--in", next, "--data-dir", filepath.Join(t.TempDir(), "restored"))
}

// TestRestoreLeftoversRemoved kills a restore once its directory beside
// the target holds the archive's secrets (its archive is a named pipe
// that the test feeds all but the last byte of the archive, so that it
// stops at a known point): the next restore into the same target removes
// that directory, says so, and restores, while a restore still running is
// left alone.
func TestRestoreLeftoversRemoved(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	seedDocs(t, data)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	mustRun(t, "backup", "--data-dir", data, "--out", archive)
	raw, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	target := filepath.Join(parent, "restored")

	first := startBinary(t, "restore", "--in", fifo, "--data-dir", target)
	var feeding sync.WaitGroup
	feeding.Go(func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(raw[:len(raw)-1])
		<-first.done
		f.Close()
	})
	partial := first.waitFor(t, "partial restore holding the secrets", func() string {
		dir := entryWithPrefix(parent, ".restored.restore-")
		if dir == "" || entryWithPrefix(filepath.Join(dir, "secrets"), "session.key") == "" {
			return ""
		}
		return dir
	})

	// A restore into the same target while the first runs (of an archive
	// that is refused) leaves the first's directory alone.
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("not an archive\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, runBinary(t, "restore", "--in", notes, "--data-dir", target),
		"onboard: restore: "+notes+" is not an onboard backup (not gzip-compressed); nothing was restored\n")
	if diff := cmp.Diff([]string{filepath.Base(partial)}, dirEntries(t, parent)); diff != "" {
		t.Errorf("beside the target while a restore runs (-want +got):\n%s", diff)
	}

	first.kill(t)
	feeding.Wait()
	r := mustRun(t, "restore", "--in", archive, "--data-dir", target)
	lines := strings.SplitAfter(r.stderr, "\n")
	if want := "Removed a partial restore left by an interrupted run: " + partial + "\n"; len(lines) != 3 || lines[0] != want || !strings.HasPrefix(lines[1], "Restored "+archive) {
		t.Errorf("restore after the kill: stderr %q; want %q, then the summary", r.stderr, want)
	}
	if diff := cmp.Diff([]string{"restored"}, dirEntries(t, parent)); diff != "" {
		t.Errorf("beside the target after the next restore (-want +got):\n%s", diff)
	}
	if !bytes.Contains([]byte(mustRun(t, "apps", "export", "--data-dir", target, "--org", "default").stdout), []byte(`"id"`)) {
		t.Error("the restored directory exports no application")
	}
}
