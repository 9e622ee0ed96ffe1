// Package admintest holds what the tests of the admin socket share: a
// socket serving a handler, with a client of it, and an export sink that
// records what it was handed. Only tests import it.
package admintest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"onboard/admin"
	"onboard/onboarding"
)

// Serve serves h on a unix socket, as serve does, and returns a client of
// it. The socket closes when the test ends.
func Serve(t testing.TB, h http.Handler) *admin.Client {
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
	c, err := admin.Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ExportSink records what an export handed over: the rows, a line for
// each file (ids, name, length and first bytes), and how many
// applications were exported.
type ExportSink struct {
	Rows      bytes.Buffer
	Files     []string
	Completed int // calls of Exported
}

// Write records rows of the export.
func (s *ExportSink) Write(p []byte) (int, error) { return s.Rows.Write(p) }

// File records a line for f, reading its body.
func (s *ExportSink) File(f onboarding.ExportFile) error {
	b, err := io.ReadAll(f.Body)
	if err != nil {
		return err
	}
	s.Files = append(s.Files, fmt.Sprintf("%s/%s %s: %d bytes %x", f.ApplicationID, f.FileID, f.FileName, len(b), b[:min(len(b), 8)]))
	return nil
}

// Exported counts an exported application.
func (s *ExportSink) Exported() error {
	s.Completed++
	return nil
}
