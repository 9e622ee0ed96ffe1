package backup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/backup/backuptest"
	"onboard/storage"
)

// secretMap keeps secrets in memory: the target's secrets in these tests,
// which are about the archive's way into a store.
type secretMap map[string]string

func (m secretMap) PutSecret(_ context.Context, name string, value []byte) error {
	m[name] = string(value)
	return nil
}

// newStore opens an empty embedded store, closed at the end of the test.
func newStore(t *testing.T) *storage.Store {
	t.Helper()
	s, err := storage.Open(filepath.Join(t.TempDir(), "badger"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRestoreTo restores an archive into a store given as a Target, files
// into a local blob directory: the records, the file and the secret are
// the original's, and the scratch directory is left empty.
func TestRestoreTo(t *testing.T) {
	a, data := openTestApp(t)
	blobID, _, err := a.files.Put(context.Background(), strings.NewReader("%PDF-1.4 moved\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, a.store, blobID)
	writeSecret(t, data, "session.key", "c2Vzc2lvbg==\n")
	var buf bytes.Buffer
	if err := a.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}

	target, files, secrets, scratch := newStore(t), filepath.Join(t.TempDir(), "blobs"), secretMap{}, t.TempDir()
	m, n, err := RestoreTo(context.Background(), &buf, scratch, Target{Records: target, Files: LocalFiles(files), Secrets: secrets})
	if err != nil {
		t.Fatalf("RestoreTo: %v", err)
	}
	want := dumpOf(t, a.store)
	if n != len(want) || m.Counts.Records != n {
		t.Errorf("%d records restored, the manifest counts %d; want %d", n, m.Counts.Records, len(want))
	}
	if diff := cmp.Diff(want, dumpOf(t, target)); diff != "" {
		t.Errorf("restored records (-original +restored):\n%s", diff)
	}
	if diff := cmp.Diff(secretMap{"session.key": "c2Vzc2lvbg==\n"}, secrets); diff != "" {
		t.Errorf("restored secrets (-want +got):\n%s", diff)
	}
	got, err := os.ReadFile(filepath.Join(files, blobID[0:2], blobID[2:4], blobID))
	if err != nil || string(got) != "%PDF-1.4 moved\n" {
		t.Errorf("restored file: %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
		t.Errorf("left in the scratch directory: %v", entries)
	}
}

// TestRestoreToRefusals checks that an archive of format version 1 and a
// target holding records are refused with their own messages, writing
// nothing.
func TestRestoreToRefusals(t *testing.T) {
	a, _ := openTestApp(t)
	blobID, _, err := a.files.Put(context.Background(), strings.NewReader("%PDF-1.4\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, a.store, blobID)
	var current bytes.Buffer
	if err := a.Backup(context.Background(), &current); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		archive []byte
		target  *storage.Store
		want    error
	}{
		{"version 1", versionOneArchive(t, a, "c2Vzc2lvbg==\n", blobID), newStore(t), ArchiveError(
			`a backup of format version 1, which holds the embedded store's own files and restores into it only. ` +
				`To move it to PostgreSQL, restore it into a new data directory with storage.backend = "badger", ` +
				`run onboard backup there to make an archive of the current format, and restore that`)},
		{"target not empty", current.Bytes(), a.store, ErrNotEmpty},
		{"a line of an unknown kind", recordsArchive(t, `{"kind":"invoice","record":"AQ=="}`+"\n", func(m *Manifest) {
			m.Files = append(m.Files, sumOf("secrets/session.key", "c2Vzc2lvbg==\n"))
			m.Counts.Secrets = 1
		}, backuptest.Entry{Name: "secrets/session.key", Content: "c2Vzc2lvbg==\n"}), newStore(t), ArchiveError(`not an onboard backup (its records' line 1: unknown kind "invoice")`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := dumpOf(t, tt.target)
			files, secrets, scratch := filepath.Join(t.TempDir(), "blobs"), secretMap{}, t.TempDir()
			_, _, err := RestoreTo(context.Background(), bytes.NewReader(tt.archive), scratch, Target{Records: tt.target, Files: LocalFiles(files), Secrets: secrets})
			if !errors.Is(err, tt.want) {
				t.Errorf("RestoreTo: %v, want %v", err, tt.want)
			}
			if diff := cmp.Diff(before, dumpOf(t, tt.target)); diff != "" {
				t.Errorf("the target's records changed (-before +after):\n%s", diff)
			}
			if _, err := os.Stat(files); !errors.Is(err, os.ErrNotExist) || len(secrets) != 0 {
				t.Errorf("files (%v) or secrets (%v) written", err, secrets)
			}
			if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
				t.Errorf("left in the scratch directory: %v", entries)
			}
		})
	}
}
