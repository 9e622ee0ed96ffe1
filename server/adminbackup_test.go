package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/admin"
	"onboard/server/web"
)

// fakeBackup writes before, then fails with err (nil: succeeds).
type fakeBackup struct {
	before []byte
	err    error
}

func (f fakeBackup) Backup(_ context.Context, w io.Writer) error {
	if len(f.before) > 0 {
		if _, err := w.Write(f.before); err != nil {
			return err
		}
	}
	return f.err
}

// backupSocket serves the admin handler of a server with backup b on a unix
// socket and returns a client for it.
func backupSocket(t *testing.T, b admin.Backuper) *admin.Client {
	t.Helper()
	e := newEnv(t, envOptions{})
	path := filepath.Join(t.TempDir(), "admin.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: admin.NewHandler(admin.Options{Service: e.svc, Backup: b, Answer: web.ErrorAnswer})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := admin.Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// failingWriter fails every write.
type failingWriter struct{}

var errDiskFull = errors.New("write archive: no space left on device")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// TestAdminBackup streams backups through a real admin socket: the archive
// arrives whole; a failure before the archive starts answers its message;
// one after it started reaches the client through the trailer, after the
// bytes sent; a server without a admin.Backuper answers 503; a failure to write
// the archive on the client's side is that failure.
func TestAdminBackup(t *testing.T) {
	archive := bytes.Repeat([]byte("archive "), 100000)
	tests := []struct {
		name    string
		backup  admin.Backuper
		out     io.Writer
		wantErr string
		want    []byte
	}{
		{"success", fakeBackup{before: archive}, nil, "", archive},
		{"fails before the archive", fakeBackup{err: errors.New("spool records: disk full")}, nil, "spool records: disk full", nil},
		{"fails while streaming", fakeBackup{before: archive, err: errors.New("read blob x:\nI/O error")}, nil, "read blob x: I/O error", archive},
		{"no backuper", nil, nil, "Backups are not available on this server", nil},
		{"client cannot write", fakeBackup{before: archive}, failingWriter{}, errDiskFull.Error(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := backupSocket(t, tt.backup)
			var buf bytes.Buffer
			out := tt.out
			if out == nil {
				out = &buf
			}
			err := c.Backup(context.Background(), out)
			if got := errString(err); got != tt.wantErr {
				t.Errorf("Backup error %q, want %q", got, tt.wantErr)
			}
			if tt.out == nil && !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("received %d bytes, want %d", buf.Len(), len(tt.want))
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestAdminBackupAnswers checks the statuses and headers of POST /backup.
func TestAdminBackupAnswers(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		name        string
		backup      admin.Backuper
		status      int
		contentType string
		body        string
	}{
		{"success", fakeBackup{before: []byte("gz")}, http.StatusOK, "application/gzip", "gz"},
		{"failure", fakeBackup{err: errors.New("boom")}, http.StatusInternalServerError, "application/json", `{"error":"boom"}` + "\n"},
		{"unavailable", nil, http.StatusServiceUnavailable, "application/json", `{"error":"Backups are not available on this server"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			admin.NewHandler(admin.Options{Service: e.svc, Backup: tt.backup, Answer: web.ErrorAnswer}).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/backup", nil))
			got := []any{w.Code, w.Header().Get("Content-Type"), w.Body.String()}
			if diff := cmp.Diff([]any{tt.status, tt.contentType, tt.body}, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}
