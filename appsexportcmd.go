package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"onboard/onboarding"
)

// AppsExportCmd writes an organization's applications (DESIGN §4). Through
// the admin socket while serve runs, the server streams the export and the
// files to this process (server/adminexport.go), so the command never reads
// the data directory itself and works the same over any blob store.
type AppsExportCmd struct {
	Org       string `help:"Organization whose applications are exported." required:"" placeholder:"ORG"`
	Status    string `help:"Only applications in this status: created, sent, in_progress, submitted, review, approved, rejected." placeholder:"S"`
	Since     string `help:"Only applications updated at or after this time (RFC 3339, such as 2025-01-31T00:00:00Z)." placeholder:"T"`
	Format    string `help:"ndjson (one get-application document a line, without download URLs; sensitive values included) or csv (fixed columns, then the non-sensitive fields of the organization's forms)." default:"ndjson" placeholder:"ndjson|csv"`
	Out       string `help:"Write to this file (mode 0600, replaced only once the export is complete) instead of stdout." placeholder:"FILE"`
	Documents string `help:"Also copy every document and registry document of the exported applications to DIR/<application_id>/<file_id>-<file_name>." placeholder:"DIR"`
}

// Run writes the export; on a terminal, stderr shows its progress.
func (c *AppsExportCmd) Run(e *env) error {
	q := onboarding.ExportQuery{OrgID: c.Org, Status: c.Status, Since: c.Since, Format: c.Format, Documents: c.Documents != ""}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		out, err := newExportOutput(e.stdout, c.Out, c.Documents)
		if err != nil {
			return err
		}
		var p *progress
		if isTerminal(e.stderr) {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			p = startProgress(e.stderr, &out.exported, tick.C)
		}
		sum, err := a.Export(ctx, q, out)
		if p != nil {
			p.stop()
		}
		if err != nil {
			out.abort()
			return err
		}
		if err := out.commit(); err != nil {
			return err
		}
		switch n := sum.MissingDocuments; {
		case n == 1:
			fmt.Fprintln(e.stderr, "1 document file was replaced or removed while exporting and was not copied.")
		case n > 1:
			fmt.Fprintf(e.stderr, "%d document files were replaced or removed while exporting and were not copied.\n", n)
		}
		return nil
	})
}

// exportOutput is the command's ExportSink: rows to stdout, to a
// temporary file renamed to --out at the end, or into --out when that is
// a device or a pipe (resolveOut); files under --documents.
type exportOutput struct {
	w        *bufio.Writer
	tmp      *os.File // the temporary file of a regular --out, else nil
	stream   *os.File // --out when it is a device or a pipe, else nil
	out      string   // the file --out names, its links resolved
	docs     string   // --documents; empty: none
	lastDir  string   // the application directory made last
	exported atomic.Int64
}

func newExportOutput(stdout io.Writer, out, docs string) (*exportOutput, error) {
	o := &exportOutput{docs: docs}
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
	tmp, err := os.CreateTemp(filepath.Dir(o.out), "."+filepath.Base(o.out)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create the export file: %w", err)
	}
	o.tmp, o.w = tmp, bufio.NewWriterSize(tmp, 64<<10)
	return o, nil
}

func (o *exportOutput) Write(p []byte) (int, error) { return o.w.Write(p) }

// Exported counts an application, for the progress line.
func (o *exportOutput) Exported() error {
	o.exported.Add(1)
	return nil
}

// File copies a file to --documents, owner-only, as the export's name for
// it says.
func (o *exportOutput) File(f onboarding.ExportFile) error {
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

// commit finishes the export: the rows flushed, --out in place, and
// --documents made even when there was no file to copy.
func (o *exportOutput) commit() error {
	if err := o.w.Flush(); err != nil {
		o.abort()
		return err
	}
	if o.docs != "" {
		if err := os.MkdirAll(o.docs, 0o700); err != nil {
			o.abort()
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
	if err := o.tmp.Sync(); err != nil {
		o.abort()
		return err
	}
	if err := o.tmp.Close(); err != nil {
		os.Remove(o.tmp.Name())
		return err
	}
	if err := os.Rename(o.tmp.Name(), o.out); err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("write the export file: %w", err)
	}
	return nil
}

// abort drops a partial --out; stdout, a device or a pipe has what it
// has.
func (o *exportOutput) abort() {
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
	}
	if o.stream != nil {
		o.stream.Close()
	}
}

// isTerminal reports whether w is a character device such as a terminal:
// the progress line is for people watching, never for a file or a pipe
// (/dev/null, a character device too, swallows it harmlessly).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress rewrites one stderr line at each tick with the number of
// applications exported so far, and ends it with a newline when stopped.
type progress struct {
	w       io.Writer
	n       *atomic.Int64
	quit    chan struct{}
	wg      sync.WaitGroup
	printed bool
}

func startProgress(w io.Writer, n *atomic.Int64, tick <-chan time.Time) *progress {
	p := &progress{w: w, n: n, quit: make(chan struct{})}
	p.wg.Go(func() {
		for {
			select {
			case <-p.quit:
				return
			case <-tick:
				fmt.Fprintf(p.w, "\rexported %s", applications(p.n.Load()))
				p.printed = true
			}
		}
	})
	return p
}

// stop ends the progress line with the final count, when one was shown.
func (p *progress) stop() {
	close(p.quit)
	p.wg.Wait()
	if p.printed {
		fmt.Fprintf(p.w, "\rexported %s\n", applications(p.n.Load()))
	}
}

// applications is "1 application" or "12,345 applications".
func applications(n int64) string {
	if n == 1 {
		return "1 application"
	}
	return thousands(n) + " applications"
}

// thousands writes a count with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
