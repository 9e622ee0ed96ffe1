package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"onboard/onboarding"
	"onboard/outfile"
)

// AppsExportCmd writes an organization's applications (docs/cli.md).
// Through the admin socket while serve runs, the server streams the export
// and the files to this process (admin/export.go), so the command never reads
// the data directory itself and works the same over any blob store.
type AppsExportCmd struct {
	Org       string `help:"Organization whose applications are exported." required:"" placeholder:"ORG"`
	Status    string `help:"Only applications in this status: created, sent, in_progress, submitted, review, approved, rejected." placeholder:"S"`
	Since     string `help:"Only applications updated at or after this time (RFC 3339, such as 2025-01-31T00:00:00Z)." placeholder:"T"`
	Format    string `help:"ndjson (one get-application document a line, without download URLs; sensitive values included) or csv (fixed columns, then the non-sensitive fields of the organization's forms)." default:"ndjson" placeholder:"ndjson|csv"`
	Out       string `help:"Write to this file (mode 0600, replaced only once the export is complete) instead of stdout." placeholder:"FILE"`
	Documents string `help:"Also copy every document and registry document of the exported applications to DIR/<application_id>/<file_id>-<file_name>." placeholder:"DIR"`
}

// Run writes the export; on a terminal, stderr shows its progress. It
// first removes the partial files that exports to --out killed midway
// left beside it.
func (c *AppsExportCmd) Run(e *env) error {
	q := onboarding.ExportQuery{OrgID: c.Org, Status: c.Status, Since: c.Since, Format: c.Format, Documents: c.Documents != ""}
	if c.Out != "" {
		outfile.ReportStale(e.stderr, c.Out, outfile.KindExport)
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		out, err := outfile.NewExport(e.stdout, c.Out, c.Documents)
		if err != nil {
			return err
		}
		var p *progress
		if isTerminal(e.stderr) {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			p = startProgress(e.stderr, out.Count(), tick.C)
		}
		sum, err := a.Export(ctx, q, out)
		if p != nil {
			p.stop()
		}
		if err != nil {
			out.Abort()
			return err
		}
		if err := out.Commit(); err != nil {
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
