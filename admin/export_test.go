package admin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"onboard/onboarding"
)

// serveAdmin serves h on a unix socket, as serve does, and returns a
// client of it.
func serveAdmin(t testing.TB, h http.Handler) *Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "admin.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { srv.Close(); <-done })
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exportSink records what an export handed over.
type exportSink struct {
	rows     bytes.Buffer
	files    []string
	exported int
}

func (s *exportSink) Write(p []byte) (int, error) { return s.rows.Write(p) }

func (s *exportSink) File(f onboarding.ExportFile) error {
	b, err := io.ReadAll(f.Body)
	if err != nil {
		return err
	}
	s.files = append(s.files, fmt.Sprintf("%s/%s %s: %d bytes %x", f.ApplicationID, f.FileID, f.FileName, len(b), b[:min(len(b), 8)]))
	return nil
}

func (s *exportSink) Exported() error {
	s.exported++
	return nil
}

// TestAdminExportCutShort: a body that ends without its last part, or that
// is not an export, is an error, never a complete export.
func TestAdminExportCutShort(t *testing.T) {
	for _, tt := range []struct {
		name string
		body func(w http.ResponseWriter)
		want string
	}{
		{"no last part", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-Applications: 1\r\n\r\n{\"id\":\"x\"}\n\r\n--b--\r\n")
		}, errExportCut.Error()},
		{"broken in a part", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-Applications: 1\r\n\r\n{\"id\":")
		}, errExportCut.Error()},
		{"not an export", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "[]")
		}, `admin socket: unexpected export answer "application/json"`},
		{"an error without a body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadGateway)
		}, "admin socket: 502 Bad Gateway"},
		{"a bad file name", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-File-Id: x\r\nExport-File-Name: %zz\r\n\r\nx\r\n--b--\r\n")
		}, `admin socket: bad Export-File-Name "%zz"`},
		{"a bad count", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-Applications: many\r\n\r\nx\r\n--b--\r\n")
		}, "admin socket: bad export part map[Export-Applications:[many]]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := serveAdmin(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { tt.body(w) }))
			_, err := client.Export(context.Background(), onboarding.ExportQuery{OrgID: "acme"}, &exportSink{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("Export = %v, want %q", err, tt.want)
			}
		})
	}
}
