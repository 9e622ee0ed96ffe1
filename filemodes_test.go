package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// modeProblems walks root and lists what is not private: a regular file
// or a socket whose mode is not 0600, a directory not 0700 (root itself
// included when withRoot), anything else that is not a symbolic link.
func modeProblems(t *testing.T, root string, withRoot bool) []string {
	t.Helper()
	var problems []string
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since it was listed: a running server's temporary file
		}
		if err != nil {
			return err
		}
		if p == root && !withRoot {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		mode := info.Mode()
		switch {
		case mode.IsDir():
			if mode.Perm() != 0o700 {
				problems = append(problems, p+": directory "+mode.String())
			}
		case mode.IsRegular(), mode&fs.ModeSocket != 0:
			files++
			if mode.Perm() != 0o600 {
				problems = append(problems, p+": "+mode.String())
			}
		case mode&fs.ModeSymlink != 0:
		default:
			problems = append(problems, p+": unexpected "+mode.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("%s holds no file; the test needs some", root)
	}
	return problems
}

// TestFileModes runs the binary as an operator would (serve, writes
// through the API and the command line, a backup, an export with its
// documents, a restore) and walks the data directory, while the server
// runs and after it stopped, the restored directory and the files the
// commands wrote: every file (Badger's included) is 0600, every directory
// 0700.
func TestFileModes(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	seedData(t, p, key, data)
	out := t.TempDir()
	mustRun(t, "backup", "--data-dir", data, "--out", filepath.Join(out, "backup.tar.gz"))
	mustRun(t, "apps", "export", "--data-dir", data, "--org", "default",
		"--out", filepath.Join(out, "export.ndjson"), "--documents", filepath.Join(out, "docs"))
	for _, problem := range modeProblems(t, data, true) {
		t.Errorf("while serving: %s", problem)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve: exit code %d\n%s", code, p.stderr.String())
	}
	restored := filepath.Join(t.TempDir(), "restored")
	mustRun(t, "restore", "--in", filepath.Join(out, "backup.tar.gz"), "--data-dir", restored)
	mustRun(t, "apps", "export", "--data-dir", restored, "--org", "default", "--out", filepath.Join(out, "restored.ndjson"))
	for _, dir := range []struct {
		path     string
		withRoot bool
	}{{data, true}, {restored, true}, {out, false}} {
		for _, problem := range modeProblems(t, dir.path, dir.withRoot) {
			t.Error(problem)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "badger")); err != nil {
		t.Fatal(err)
	}
}
