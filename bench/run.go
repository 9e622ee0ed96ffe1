// Package bench is the load engine of onboard bench: it drives a running
// server through its URL and an API key (phases of requests at a
// concurrency, their latencies and throughput), compares each operation
// with the ceilings of a raw database served the same way, and writes the
// report.
package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options is what a run measures and against what.
type Options struct {
	Apps        int           // applications to seed before measuring
	Concurrency int           // concurrent connections, one worker each
	Duration    time.Duration // how long each operation runs
	CPUProfile  string        // file for a CPU profile of the API's operations; "": none
	// Dir is the run's temporary directory: the server's data directory
	// (data) and the ceilings' database (ceiling) are made under it.
	Dir string
	// Progress reports a step of the run, for people.
	Progress func(format string, args ...any)
	// StartCeilings opens the raw database of the ceilings in dir and
	// serves it on loopback.
	StartCeilings func(dir string) (CeilingStore, error)
	// StartServer starts the server measured on a new data directory.
	StartServer func(dataDir string) (Server, error)
}

// Server is the server a run measures, started in the same process on a
// loopback port and a fresh data directory, with the sandbox defaults and
// a second configuration of the organization, QuietConfig.
type Server interface {
	// URL is the server's base URL (http://127.0.0.1:port).
	URL() string
	// Key is an API key of the organization with every scope.
	Key() string
	// Settle waits, for at most limit, until the registry documents job
	// is idle and the database has nothing due for compaction; it answers
	// how long it waited and whether both ended.
	Settle(limit time.Duration) (time.Duration, bool, error)
	// PendingDocuments is how many applications wait for their registry
	// documents.
	PendingDocuments() (int, error)
	// StoredBlobs is how many files the blob store holds.
	StoredBlobs() (int, error)
	// AddEndpoint registers a webhook endpoint for every event at url and
	// answers its id; RemoveEndpoint removes it, dropping its queue.
	AddEndpoint(url string) (string, error)
	RemoveEndpoint(id string) error
	// Stop shuts the server down and closes its store; calls after the
	// first return the first's error.
	Stop() error
}

// databaseServer is a Server whose records are in a database outside its
// data directory.
type databaseServer interface {
	// DatabaseBytes is the disk space the database takes, counted in the
	// data directory's size.
	DatabaseBytes() (int64, error)
}

// QuietConfig is the id of the server's configuration without registry
// documents: applications created with it leave the registry documents
// job idle (the quiet creates).
const QuietConfig = "bench-quiet"

// Run seeds the server, runs every operation for the duration at the
// concurrency, with the ceilings measured first and next to each, and
// answers the report.
func Run(o Options) (*Report, error) {
	progress := o.Progress
	client := NewClient(o.Concurrency)
	defer client.CloseIdleConnections()

	report := &Report{Applications: o.Apps, Concurrency: o.Concurrency, Duration: o.Duration.String()}
	ceilings, err := startCeilings(client, o.StartCeilings, filepath.Join(o.Dir, "ceiling"), o.Apps, o.Concurrency, progress)
	if err != nil {
		return nil, fmt.Errorf("ceilings: %w", err)
	}
	defer func() {
		if err := ceilings.close(); err != nil {
			progress("ceilings: %v", err)
		}
	}()
	progress("measuring the ceilings")
	ceilings.measure(CeilingRead, o.Duration)
	ceilings.measure(CeilingInsert, o.Duration)

	dataDir := filepath.Join(o.Dir, "data")
	srv, err := o.StartServer(dataDir)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	api := newBenchAPI(client, srv)
	fixtures, err := api.seed(o.Apps, o.Concurrency, progress)
	if err != nil {
		return nil, err
	}
	settle := func() {
		waited, empty, err := srv.Settle(settleLimit)
		switch {
		case err != nil:
			progress("registry documents: %v", err)
		case !empty:
			progress("registry documents or compaction still under way after %s; measuring anyway", waited.Round(time.Millisecond))
		case waited > 100*time.Millisecond:
			progress("waited %s for the registry documents of the new applications and for compaction", waited.Round(time.Millisecond))
		}
	}
	stopProfile := func() {}
	if o.CPUProfile != "" {
		if stopProfile, err = startCPUProfile(o.CPUProfile); err != nil {
			return nil, err
		}
	}
	ops, background, err := api.measureAPI(srv, fixtures, ceilings, o.Concurrency, o.Duration, settle, progress)
	stopProfile()
	if err != nil {
		return nil, err
	}
	report.Operations = append(ceilings.rows(), ops...)
	report.Background = background
	rss := resident(ceilings.dir)
	report.RSSBytes, report.RSSAnonymousBytes, report.RSSCeilingBytes = rss.total-rss.under, rss.anonymous, rss.under
	client.CloseIdleConnections()
	var dbBytes int64
	if db, ok := srv.(databaseServer); ok {
		if dbBytes, err = db.DatabaseBytes(); err != nil {
			return nil, errors.Join(err, srv.Stop())
		}
	}
	if err := srv.Stop(); err != nil {
		return nil, err
	}
	report.StoredApplications = int(api.creates.Load())
	if report.DataDirBytes, report.DataDirParts, err = diskUsage(dataDir); err != nil {
		return nil, err
	}
	if dbBytes > 0 {
		report.DataDirParts["postgres"] = dbBytes
		report.DataDirBytes += dbBytes
	}
	report.BytesPerApp = float64(report.DataDirBytes) / float64(report.StoredApplications)
	report.compare()
	return report, nil
}

// Failures is how many requests of the report's operations failed.
func (r *Report) Failures() int {
	failed := 0
	for _, op := range r.Operations {
		failed += op.Failures
	}
	return failed
}

// startCPUProfile writes a CPU profile of this process to path until the
// function it answers is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// settleLimit bounds the wait for the registry documents and compaction
// before an operation.
const settleLimit = 2 * time.Minute

// residentSet is the process's resident memory, from /proc/self/smaps:
// all of it, its anonymous part, and the part that maps files under a
// directory (the ceilings' database, which is not the server's).
type residentSet struct {
	total, anonymous, under int64
}

// resident reads the process's resident memory, counting apart the
// mappings of files under dir; zero where /proc is not available.
func resident(dir string) residentSet {
	var r residentSet
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return r
	}
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	inDir := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
		case !strings.HasSuffix(f[0], ":"):
			// A mapping's first line: "start-end perms offset dev inode [path]".
			inDir = len(f) >= 6 && strings.HasPrefix(strings.Join(f[5:], " "), prefix)
		case len(f) == 3 && f[2] == "kB":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "Rss:":
				r.total += kb << 10
				if inDir {
					r.under += kb << 10
				}
			case "Anonymous:":
				r.anonymous += kb << 10
			}
		}
	}
	return r
}

// diskUsage is the disk space the files under dir take, in all and by
// the top-level directory they are in: their allocated blocks, so that
// the database's sparse, preallocated files count for what they hold.
func diskUsage(dir string) (int64, map[string]int64, error) {
	var total int64
	parts := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size := info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			size = st.Blocks * 512
		}
		total += size
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		parts[top] += size
		return nil
	})
	return total, parts, err
}
