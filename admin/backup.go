package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"onboard/onboarding"
)

// The backup route of the admin socket (onboard backup, docs/operations.md). While
// serve runs, it holds the data directory, so the archive is made in its
// process and streamed to the CLI, which writes the file.

// backupErrorTrailer is the HTTP trailer that carries the error of a
// backup that failed once its archive had begun to stream (the status was
// sent by then); it is empty when the backup succeeded.
const backupErrorTrailer = "Onboard-Backup-Error"

// errBackupUnavailable answers a backup request to a server built without
// a Backuper.
var errBackupUnavailable = onboarding.Errorf(onboarding.KindUnavailable, "Backups are not available on this server")

// backupRoutes registers POST /backup, which answers 200 with the archive
// (application/gzip) or, when the backup fails before the archive starts,
// the error. The error's text is the operator's to read, on the operator's
// own socket, and the same as the CLI's direct path prints.
func (s *handler) backupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /backup", func(w http.ResponseWriter, r *http.Request) {
		if s.backup == nil {
			s.fail(w, errBackupUnavailable)
			return
		}
		w.Header().Set("Trailer", backupErrorTrailer)
		out := &streamStart{w: w}
		err := s.backup.Backup(r.Context(), out)
		if err == nil {
			return
		}
		s.log.Error("backup failed", "err", err)
		if !out.started {
			write(w, http.StatusInternalServerError, errorBody{Error: err.Error()})
			return
		}
		w.Header().Set(backupErrorTrailer, strings.Join(strings.Fields(err.Error()), " "))
	})
}

// streamStart sends the status and headers of a successful backup before
// the archive's first byte.
type streamStart struct {
	w       http.ResponseWriter
	started bool
}

func (s *streamStart) Write(p []byte) (int, error) {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "application/gzip")
		s.w.WriteHeader(http.StatusOK)
	}
	return s.w.Write(p)
}

// Backup streams a backup archive from the running server into w. The
// request has no overall time limit: an archive takes as long as the data
// takes to read.
func (c *Client) Backup(ctx context.Context, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://admin/backup", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: c.http.Transport}).Do(req)
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e errorBody
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" {
			return fmt.Errorf("admin socket: %s", resp.Status)
		}
		return errors.New(e.Error)
	}
	out := &writeFailure{w: w}
	if _, err := io.Copy(out, resp.Body); err != nil {
		if out.err != nil {
			return out.err
		}
		return fmt.Errorf("admin socket: the backup stream broke off: %w", err)
	}
	if msg := resp.Trailer.Get(backupErrorTrailer); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// writeFailure remembers the error of its writer, so that a failure to
// write the archive is told apart from one to receive it.
type writeFailure struct {
	w   io.Writer
	err error
}

func (f *writeFailure) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}
