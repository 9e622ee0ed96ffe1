package main

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

// BenchCmd measures the server's throughput and latency over loopback,
// against the ceilings of a raw Badger read and a durable insert served
// by echo on the same machine.
type BenchCmd struct {
	Apps        int           `name:"apps" short:"n" default:"2000" help:"Applications to seed before measuring."`
	Concurrency int           `default:"32" help:"Concurrent connections (one worker each)."`
	Duration    time.Duration `default:"5s" help:"How long each operation runs."`
	Keep        bool          `help:"Keep the temporary directory of the run (its path goes to stderr)."`
	JSON        bool          `name:"json" help:"Print the results as one JSON object."`
	CPUProfile  string        `name:"cpuprofile" type:"path" placeholder:"FILE" help:"Write a CPU profile of the process (server, client and receiver) while it measures the API's operations to FILE, for go tool pprof."`
}

// Run starts the server in this process on a fresh temporary data
// directory (the sandbox defaults, whatever --config and --data-dir say),
// seeds it, runs every operation for the duration at the concurrency,
// and prints the results; it fails when a request failed.
func (c *BenchCmd) Run(e *env) error {
	if c.Apps < 1 || c.Concurrency < 1 || c.Duration <= 0 {
		return errors.New("bench: --apps, --concurrency and --duration must be positive")
	}
	began := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "bench: %5.1fs "+format+"\n", append([]any{time.Since(began).Seconds()}, args...)...)
	}
	tmp, err := os.MkdirTemp("", "onboard-bench-")
	if err != nil {
		return err
	}
	if c.Keep {
		defer progress("kept %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	client := newBenchClient(c.Concurrency)
	defer client.CloseIdleConnections()

	report := &benchReport{Applications: c.Apps, Concurrency: c.Concurrency, Duration: c.Duration.String()}
	ceilings, err := startCeilings(client, filepath.Join(tmp, "ceiling"), c.Apps, c.Concurrency, progress)
	if err != nil {
		return fmt.Errorf("ceilings: %w", err)
	}
	defer func() {
		if err := ceilings.close(); err != nil {
			progress("ceilings: %v", err)
		}
	}()
	progress("measuring the ceilings")
	ceilings.measure(ceilingRead, c.Duration)
	ceilings.measure(ceilingInsert, c.Duration)

	dataDir := filepath.Join(tmp, "data")
	srv, err := startBenchServer(dataDir)
	if err != nil {
		return err
	}
	defer srv.stop()
	api := newBenchAPI(client, srv)
	fixtures, err := api.seed(c.Apps, c.Concurrency, progress)
	if err != nil {
		return err
	}
	settle := func() {
		waited, empty, err := srv.settle(settleLimit)
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
	if c.CPUProfile != "" {
		if stopProfile, err = startCPUProfile(c.CPUProfile); err != nil {
			return err
		}
	}
	ops, background, err := api.measureAPI(srv, fixtures, ceilings, c.Concurrency, c.Duration, settle, progress)
	stopProfile()
	if err != nil {
		return err
	}
	report.Operations = append(ceilings.rows(), ops...)
	report.Background = background
	rss := resident(ceilings.dir)
	report.RSSBytes, report.RSSAnonymousBytes, report.RSSCeilingBytes = rss.total-rss.under, rss.anonymous, rss.under
	client.CloseIdleConnections()
	if err := srv.stop(); err != nil {
		return err
	}
	report.StoredApplications = int(api.creates.Load())
	if report.DataDirBytes, report.DataDirParts, err = diskUsage(dataDir); err != nil {
		return err
	}
	report.BytesPerApp = float64(report.DataDirBytes) / float64(report.StoredApplications)
	report.compare()

	if c.JSON {
		err = report.writeJSON(e.stdout)
	} else {
		err = report.writeTable(e.stdout)
	}
	if err != nil {
		return err
	}
	failed := 0
	for _, op := range report.Operations {
		failed += op.Failures
	}
	if failed > 0 {
		return fmt.Errorf("bench: %d requests failed", failed)
	}
	return nil
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

// Help is the detailed help of onboard bench.
func (c *BenchCmd) Help() string {
	return `It runs the server in this process, as serve does, on a fresh temporary data directory with the sandbox defaults (--config and --data-dir do not apply) and no rate limit, listening on 127.0.0.1 only. It seeds applications through the API, then runs each operation for --duration at --concurrency: create, get, list (50), PATCH, decision and the applicant form's stage save. It measures two ceilings on the same machine, through echo on loopback with the same client: a raw Badger read of a 2 KB value and a durable (synced) 2 KB insert, first and again next to each operation. The table compares reads with the first and writes with the second, each with the measurement next to it, and ends with the process's RSS and the data directory's size per application. Exit status 1 when a request failed.`
}
