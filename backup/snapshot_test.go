package backup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/backup/backuptest"
	"onboard/blobs"
	"onboard/onboarding"
	"onboard/storage"
)

// testBackup is a Maker over a new data directory, with its store and blob
// store open, closed at the end of the test.
type testBackup struct {
	*Maker
	store *storage.Store
	files *blobs.Guard
}

// openTestApp opens a new data directory's store and blob store and
// returns its Maker and the directory.
func openTestApp(t *testing.T) (testBackup, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	store, err := storage.Open(filepath.Join(dir, "badger"), storage.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	files, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	guard := blobs.NewGuard(files)
	m := New(store, guard, dir, "(devel)", slog.New(slog.DiscardHandler))
	return testBackup{Maker: m, store: store, files: guard}, dir
}

// storeAppWithFile stores backuptest.AppWithFile(id) and returns its id.
func storeAppWithFile(t testing.TB, a testBackup, id string) string {
	t.Helper()
	app := backuptest.AppWithFile(id)
	if err := a.store.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	return app.ID
}

// blockingWriter collects what is written, and blocks its first write
// until released, after telling reached.
type blockingWriter struct {
	buf      bytes.Buffer
	reached  chan struct{}
	released chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	if w.reached != nil {
		close(w.reached)
		w.reached = nil
		<-w.released
	}
	return w.buf.Write(p)
}

// TestBackupHoldsOffDeletions replaces a document while a backup is
// writing its archive, deleting the old file as the Service does once the
// change is stored: the file stays until the backup is over, so the
// archive holds it, and is deleted then.
func TestBackupHoldsOffDeletions(t *testing.T) {
	a, _ := openTestApp(t)
	ctx := context.Background()
	old, _, err := a.files.Put(ctx, strings.NewReader("%PDF-old\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	appID := storeAppWithFile(t, a, old)

	w := &blockingWriter{reached: make(chan struct{}), released: make(chan struct{})}
	reached := w.reached
	done := make(chan error, 1)
	go func() { done <- a.Backup(ctx, w) }()
	<-reached
	// The backup has its snapshot: drop the reference and delete the file.
	if _, err := a.store.UpdateApplication(ctx, appID, func(app *onboarding.Application) (onboarding.Changes, error) {
		delete(app.Data.Documents, "certificate_of_incorporation")
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.files.Delete(old); err != nil {
		t.Fatal(err)
	}
	if f, err := a.files.Open(old); err != nil {
		t.Errorf("the file deleted during the backup is gone before it ended: %v", err)
	} else {
		f.Close()
	}
	close(w.released)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := a.files.Open(old); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("the file deleted during the backup is still there after it: %v", err)
	}
	var got string
	m, err := ReadArchive(&w.buf, func(f File, content io.Reader) error {
		if f.Path == blobPath(old) {
			b, err := io.ReadAll(content)
			got = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "%PDF-old\n" || len(m.MissingBlobs) != 0 {
		t.Errorf("archive holds %q for the file (missing %v); want its content", got, m.MissingBlobs)
	}
}

// TestBackupListsMissingFiles backs up a data directory whose records
// refer to a file it has already lost: the backup succeeds and names it.
// It also removes the spool a crashed backup left, and leaves none itself.
func TestBackupListsMissingFiles(t *testing.T) {
	a, data := openTestApp(t)
	lost := uuid.NewString()
	storeAppWithFile(t, a, lost)
	stale := filepath.Join(data, spoolPrefix+"123")
	if err := os.WriteFile(stale, []byte("left by a crash"), 0o600); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	m, err := ReadArchive(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{lost}, m.MissingBlobs); diff != "" {
		t.Errorf("missing blobs (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), spoolPrefix) {
			t.Errorf("spool %s left in the data directory", e.Name())
		}
	}
}
