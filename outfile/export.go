package outfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"onboard/atomicfile"
	"onboard/onboarding"
)

// Export is the ExportSink of apps export: rows to stdout, to a
// temporary file renamed to --out at the end, or into --out when that is
// a device or a pipe (resolveOut); files under --documents.
type Export struct {
	w        *bufio.Writer
	tmp      *atomicfile.File // the new content of a regular --out, else nil
	stream   *os.File         // --out when it is a device or a pipe, else nil
	out      string           // the file --out names, its links resolved
	docs     string           // --documents; empty: none
	lastDir  string           // the application directory made last
	exported atomic.Int64
}

// NewExport starts an export's output: rows to stdout when out is empty,
// else to out; files under docs (empty: none).
func NewExport(stdout io.Writer, out, docs string) (*Export, error) {
	o := &Export{docs: docs}
	if out == "" {
		o.w = bufio.NewWriterSize(stdout, 64<<10)
		return o, nil
	}
	target, err := resolveOut(out)
	if err != nil {
		return nil, fmt.Errorf("the export file: %w", err)
	}
	o.out = target.path
	if target.stream {
		if o.stream, err = target.openStream(); err != nil {
			return nil, fmt.Errorf("open the export file: %w", err)
		}
		o.w = bufio.NewWriterSize(o.stream, 64<<10)
		return o, nil
	}
	tmp, err := atomicfile.CreateTagged(o.out, 0o600, KindExport+"-tmp")
	if err != nil {
		return nil, fmt.Errorf("create the export file: %w", err)
	}
	o.tmp, o.w = tmp, bufio.NewWriterSize(tmp, 64<<10)
	return o, nil
}

// Write writes rows of the export.
func (o *Export) Write(p []byte) (int, error) { return o.w.Write(p) }

// Count is the number of applications exported so far, for a progress
// line.
func (o *Export) Count() *atomic.Int64 { return &o.exported }

// Exported counts an application, for the progress line.
func (o *Export) Exported() error {
	o.exported.Add(1)
	return nil
}

// File copies a file to --documents, owner-only, as the export's name for
// it says.
func (o *Export) File(f onboarding.ExportFile) error {
	dir := filepath.Join(o.docs, f.Dir())
	if dir != o.lastDir {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		o.lastDir = dir
	}
	path := filepath.Join(dir, f.Name())
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, f.Body)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("copy %s: %w", path, err)
	}
	return nil
}

// Commit finishes the export: the rows flushed, --out in place, and
// --documents made even when there was no file to copy.
func (o *Export) Commit() error {
	if err := o.w.Flush(); err != nil {
		o.Abort()
		return err
	}
	if o.docs != "" {
		if err := os.MkdirAll(o.docs, 0o700); err != nil {
			o.Abort()
			return err
		}
	}
	if o.stream != nil {
		if err := o.stream.Close(); err != nil {
			return fmt.Errorf("write the export file: %w", err)
		}
		return nil
	}
	if o.tmp == nil {
		return nil
	}
	if err := o.tmp.Commit(); err != nil {
		return fmt.Errorf("write the export file: %w", err)
	}
	return nil
}

// Abort drops a partial --out; stdout, a device or a pipe has what it
// has.
func (o *Export) Abort() {
	if o.tmp != nil {
		o.tmp.Abort()
	}
	if o.stream != nil {
		o.stream.Close()
	}
}
