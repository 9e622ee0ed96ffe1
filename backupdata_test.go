package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/backup"
	"onboard/config"
	"onboard/outfile"
)

// openTestApp opens a sandbox data directory in-process, closed at the end
// of the test.
func openTestApp(t *testing.T) (*app, string) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.close(io.Discard) })
	return a, cfg.DataDir
}

// TestBackupFailureLeavesNoFile checks that a backup whose archive fails
// its check leaves --out as it was: an existing file is kept whole.
func TestBackupFailureLeavesNoFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "kept.tar.gz")
	if err := os.WriteFile(out, []byte("yesterday's backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _ := openTestApp(t)
	var valid bytes.Buffer
	if err := a.backup.Backup(context.Background(), &valid); err != nil {
		t.Fatal(err)
	}
	err := outfile.WriteAtomically(out, outfile.KindBackup, func(w io.Writer) error {
		_, err := backup.Checked(context.Background(), brokenBackup{valid.Bytes()}, w)
		return err
	})
	if err == nil || err.Error() != "the archive made is truncated" {
		t.Errorf("checkedBackup: %v, want the archive found truncated", err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "yesterday's backup" {
		t.Errorf("--out after the failure: %q, %v; want it unchanged", b, err)
	}
	if diff := cmp.Diff([]string{"kept.tar.gz"}, dirEntries(t, filepath.Dir(out))); diff != "" {
		t.Errorf("beside --out (-want +got):\n%s", diff)
	}
}

// brokenBackup is a backup source that stops half-way through a valid
// archive without reporting an error.
type brokenBackup struct{ valid []byte }

func (b brokenBackup) Backup(_ context.Context, w io.Writer) error {
	_, err := w.Write(b.valid[:len(b.valid)/2])
	return err
}
