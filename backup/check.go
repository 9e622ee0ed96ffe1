package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Source makes a backup archive into w: a Maker, or the running server's
// admin socket streaming one.
type Source interface {
	Backup(ctx context.Context, w io.Writer) error
}

// errCheckStopped is what the backup's writes fail with once the check of
// the archive has stopped (having found it damaged).
var errCheckStopped = errors.New("the check of the archive stopped")

// Checked has src make a backup into w and reads the archive back as it
// passes, as restore would, returning its manifest.
func Checked(ctx context.Context, src Source, w io.Writer) (*Manifest, error) {
	pr, pw := io.Pipe()
	type checked struct {
		m   *Manifest
		err error
	}
	done := make(chan checked, 1)
	go func() {
		m, err := ReadArchive(pr, nil)
		pr.CloseWithError(errCheckStopped)
		done <- checked{m, err}
	}()
	err := src.Backup(ctx, io.MultiWriter(w, pw))
	pw.CloseWithError(err) // nil: the reader sees the end of the archive
	check := <-done
	switch {
	case check.err != nil && (err == nil || errors.Is(err, errCheckStopped)):
		var ae ArchiveError
		if errors.As(check.err, &ae) {
			return nil, fmt.Errorf("the archive made is %w", check.err)
		}
		return nil, check.err
	case err != nil:
		return nil, err
	}
	return check.m, nil
}
