package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListenAdmin: a stale socket is replaced, anything else at the path
// is left alone and named, and a path too long for a Unix socket is said
// to be so (bind's own error was "invalid argument").
func TestListenAdmin(t *testing.T) {
	dir := t.TempDir()

	stale := filepath.Join(dir, "stale.sock")
	old, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close() // a crashed server's socket, still there
	ln, err := listenAdmin(stale)
	if err != nil {
		t.Fatalf("listenAdmin over a stale socket: %v", err)
	}
	ln.Close()

	file := filepath.Join(dir, "file.sock")
	if err := os.WriteFile(file, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = listenAdmin(file)
	if want := "admin socket " + file + ": something that is not a socket is in its place; move it away"; err == nil || err.Error() != want {
		t.Errorf("listenAdmin over a file = %v, want %q", err, want)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "notes" {
		t.Errorf("the file in the socket's place now %q (%v), want it kept", b, err)
	}

	long := filepath.Join(dir, strings.Repeat("d", 120), "admin.sock")
	_, err = listenAdmin(long)
	if err == nil || !strings.HasSuffix(err.Error(), "and a Unix socket's may have at most 107: use a data directory with a shorter path") {
		t.Errorf("listenAdmin on a path of %d bytes = %v, want it said too long", len(long), err)
	}
}
