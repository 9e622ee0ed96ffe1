package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRemoveStale leaves beside a file what killed writers leave (a
// temporary file no process holds), what a writer still running holds,
// and names that only look alike; RemoveStale removes the first alone,
// and the running writer still commits.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.tar.gz")
	dead, err := os.CreateTemp(dir, ".out.tar.gz.tmp-*") // as a writer killed before its Commit left it
	if err != nil {
		t.Fatal(err)
	}
	dead.Close()
	running, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Abort()
	if _, err := running.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".out.tar.gz.tmp-12x", ".out.tar.gz.tmp-", ".other.tar.gz.tmp-1", "out.tar.gz.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "out.tar.gz.tmp-1"), filepath.Join(dir, ".out.tar.gz.tmp-7")); err != nil {
		t.Fatal(err)
	}
	before := names(t, dir)

	removed, err := RemoveStale(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{dead.Name()}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	var want []string
	for _, n := range before {
		if n != filepath.Base(dead.Name()) {
			want = append(want, n)
		}
	}
	if diff := cmp.Diff(want, names(t, dir)); diff != "" {
		t.Errorf("left in the directory (-want +got):\n%s", diff)
	}
	if err := running.Commit(); err != nil {
		t.Fatalf("the running writer's Commit: %v", err)
	}
	wantFile(t, path, "new", 0o600)
	if removed, err := RemoveStale(path); err != nil || len(removed) != 0 {
		t.Errorf("RemoveStale after the commit: %q, %v; want nothing removed", removed, err)
	}
}

// TestRemoveLeftoverDirs removes a temporary directory, with what it
// holds, that no process locks, and leaves one that a process locks.
func TestRemoveLeftoverDirs(t *testing.T) {
	dir := t.TempDir()
	dead, err := os.MkdirTemp(dir, ".data.restore-*")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := os.MkdirTemp(dir, ".data.restore-*")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := Lock(f); !ok || err != nil {
		t.Fatalf("Lock: %v, %v", ok, err)
	}
	removed, err := RemoveLeftovers(dir, Numbered(".data.restore-"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{dead}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{filepath.Base(live)}, names(t, dir)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

// TestRemoveTagged removes the tagged temporary files of every file of the
// directory that no writer holds, and nothing else.
func TestRemoveTagged(t *testing.T) {
	dir := t.TempDir()
	var dead []string
	for _, name := range []string{"monday.tar.gz", "tuesday.tar.gz"} {
		f, err := os.CreateTemp(dir, "."+name+".backup-tmp-*") // as a killed writer left it
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		dead = append(dead, f.Name())
	}
	running, err := CreateTagged(filepath.Join(dir, "wednesday.tar.gz"), 0o600, "backup-tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer running.Abort()
	others := []string{".a.export-tmp-1", ".a.tmp-1", "..backup-tmp-1", ".a.backup-tmp-1x", "a.backup-tmp-1"}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveLeftovers(dir, Tagged("backup-tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dead, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if got := len(names(t, dir)); got != len(others)+1 {
		t.Errorf("left %q; want the running writer's file and %q", names(t, dir), others)
	}
}

// TestLockAfterRemoval: a temporary file that a RemoveLeftovers removed
// between its creation and its Lock is reported, so that its writer makes
// another.
func TestLockAfterRemoval(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), ".f.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(f.Name()); err != nil {
		t.Fatal(err)
	}
	if ok, err := Lock(f); ok || err != nil {
		t.Errorf("Lock of a removed file: %v, %v; want false, nil", ok, err)
	}
}

// TestRemoveLeftoversSparesOthers: a leftover another user owns is not
// removed. It needs root, to give a file away.
func TestRemoveLeftoversSparesOthers(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to give a file to another user, and CI runs as root")
		}
		t.Skip("needs root to give a file to another user")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, ".out.tmp-1")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveStale(filepath.Join(dir, "out")); err != nil || len(removed) != 0 {
		t.Errorf("RemoveStale: %q, %v; want nothing removed", removed, err)
	}
}
