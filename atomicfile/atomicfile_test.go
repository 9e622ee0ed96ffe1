package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// names lists dir, failing the test when it cannot.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// wantFile checks the content and mode of the file at path.
func wantFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Errorf("%s holds %q, want %q", path, got, content)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
		t.Errorf("mode of %s = %v, %v; want %v", path, fi.Mode(), err, mode)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantFile(t, path, "one", 0o644)
	if err := WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantFile(t, path, "two", 0o600)
	if got := names(t, dir); !slices.Equal(got, []string{"f.json"}) {
		t.Errorf("directory holds %q, want the file alone", got)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("a file in a missing directory was written")
	}
}

// TestAbort: content that is aborted, explicitly or by the deferred Abort
// after an error, leaves the old file and no temporary file.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "archive")
	if err := WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("half of the new")); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 2 || got[0][0] != '.' {
		t.Errorf("while writing, directory holds %q, want the file and a hidden temporary one", got)
	}
	f.Abort()
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	wantFile(t, path, "old", 0o600)
	if got := names(t, dir); !slices.Equal(got, []string{"archive"}) {
		t.Errorf("directory holds %q, want the file alone", got)
	}
}

// TestCreateCommit streams content in several writes and commits it.
func TestCreateCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export.jsonl")
	f, err := Create(path, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	for _, line := range []string{"a\n", "b\n"} {
		if _, err := f.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("before Commit, Stat = %v; want nothing at the path", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after Commit: nothing
	wantFile(t, path, "a\nb\n", 0o640)
	if got := names(t, dir); !slices.Equal(got, []string{"export.jsonl"}) {
		t.Errorf("directory holds %q, want the file alone", got)
	}
}

// TestCommitNew: a new file is placed; one that finds a file at its path
// fails with fs.ErrExist and leaves that file as it is.
func TestCommitNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "signing.key")
	for i, content := range []string{"first", "second"} {
		f, err := Create(path, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		err = f.CommitNew()
		if i == 0 && err != nil {
			t.Fatal(err)
		}
		if i == 1 && !errors.Is(err, fs.ErrExist) {
			t.Errorf("second CommitNew = %v, want fs.ErrExist", err)
		}
	}
	wantFile(t, path, "first", 0o600)
	if got := names(t, dir); !slices.Equal(got, []string{"signing.key"}) {
		t.Errorf("directory holds %q, want the file alone", got)
	}
}

func TestSyncDir(t *testing.T) {
	if err := Sync(t.TempDir()); err != nil {
		t.Error(err)
	}
	if err := Sync(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Sync of a missing directory = %v, want fs.ErrNotExist", err)
	}
}
