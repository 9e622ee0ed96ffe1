package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOutTargets: --out of apps export and backup replaces a regular file
// whole, follows a link to one (the link stays), writes into a named pipe
// or a device instead of replacing it (a failed write fails the command),
// and refuses a directory and a link to nothing. Each case runs in a
// temporary directory, never on the system's own devices.
func TestOutTargets(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	seedDocs(t, data)
	want := mustRun(t, "apps", "export", "--data-dir", data, "--org", "default").stdout
	if !strings.Contains(want, `"id"`) {
		t.Fatalf("the export to stdout has no application: %q", want)
	}
	export := func(out string) result {
		return runBinary(t, "apps", "export", "--data-dir", data, "--org", "default", "--out", out)
	}
	backup := func(out string) result {
		return runBinary(t, "backup", "--data-dir", data, "--out", out)
	}

	t.Run("link to a file", func(t *testing.T) {
		dir := t.TempDir()
		file, link := filepath.Join(dir, "target.ndjson"), filepath.Join(dir, "link.ndjson")
		if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("target.ndjson", link); err != nil {
			t.Fatal(err)
		}
		if r := export(link); r.code != 0 {
			t.Fatalf("export to a link: exit %d, %s", r.code, r.stderr)
		}
		if dest, err := os.Readlink(link); err != nil || dest != "target.ndjson" {
			t.Errorf("the link now %q (%v), want it still pointing at target.ndjson", dest, err)
		}
		if got, _ := os.ReadFile(file); string(got) != want {
			t.Errorf("the linked file holds %q, want the export", got)
		}
	})

	t.Run("stdout on a pipe", func(t *testing.T) {
		// /dev/stdout links to /proc/self/fd/1, which names "pipe:[…]":
		// a link only the kernel follows.
		if r := export("/dev/stdout"); r.code != 0 || r.stdout != want {
			t.Errorf("export --out /dev/stdout: exit %d, stderr %q, stdout %q; want the export on stdout", r.code, r.stderr, r.stdout)
		}
	})

	t.Run("named pipe", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "pipe")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		read := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo) // blocks until the export opens it
			if err != nil {
				read <- nil
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			read <- b
		}()
		if r := export(fifo); r.code != 0 {
			t.Fatalf("export to a pipe: exit %d, %s", r.code, r.stderr)
		}
		// A pipe replaced by a file was never opened for writing, and its
		// reader waits still: it is left waiting.
		if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("after the export the pipe is %v (%v), want a named pipe still", info.Mode(), err)
		}
		if got := <-read; string(got) != want {
			t.Errorf("the pipe's reader got %q, want the export", got)
		}
	})

	t.Run("device that is full", func(t *testing.T) {
		full := filepath.Join(t.TempDir(), "full")
		// The same device as /dev/full (1, 7), made here: needs CAP_MKNOD.
		if err := unix.Mknod(full, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
			t.Skipf("cannot make a device node here (%v): run as root to check --out on a device", err)
		}
		for name, run := range map[string]func(string) result{"apps export": export, "backup": backup} {
			r := run(full)
			if r.code != 1 || !strings.Contains(r.stderr, "no space left on device") {
				t.Errorf("%s --out a full device: exit %d, stderr %q; want 1 and the write's error", name, r.code, r.stderr)
			}
			if info, err := os.Lstat(full); err != nil || info.Mode()&os.ModeCharDevice == 0 {
				t.Fatalf("after %s the device is %v (%v), want a character device still", name, info.Mode(), err)
			}
		}
	})

	t.Run("device that takes everything", func(t *testing.T) {
		null := filepath.Join(t.TempDir(), "null")
		if err := unix.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Skipf("cannot make a device node here (%v): run as root to check --out on a device", err)
		}
		if r := backup(null); r.code != 0 || !bytes.HasPrefix([]byte(r.stderr), []byte("Backup written to "+null)) {
			t.Errorf("backup --out a null device: exit %d, stderr %q; want success", r.code, r.stderr)
		}
		if info, err := os.Lstat(null); err != nil || info.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("after the backup the device is %v (%v), want a character device still", info.Mode(), err)
		}
	})

	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("nowhere", dangling); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		r    result
		want string
	}{
		{"export to a directory", export(dir), "onboard: the export file: " + dir + " is a directory\n"},
		{"backup to a directory", backup(dir), "onboard: backup: " + dir + " is a directory\n"},
		{"export to a link to nothing", export(dangling), "onboard: the export file: " + dangling + " is a symbolic link to nothing\n"},
		{"backup to a link to nothing", backup(dangling), "onboard: backup: " + dangling + " is a symbolic link to nothing\n"},
	} {
		t.Run(tt.name, func(t *testing.T) { wantFailure(t, tt.r, tt.want) })
	}
	if dest, err := os.Readlink(dangling); err != nil || dest != "nowhere" {
		t.Errorf("the link to nothing is now %q (%v), want it left as it was", dest, err)
	}
}
