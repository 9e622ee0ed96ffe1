package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"onboard/bench"
	"onboard/config"
	"onboard/onboarding"
)

// scaleConfig is the configuration of the scale tests' large data
// directories: the sandbox (fixtures registry, sandbox outbox) without the
// API's rate limit, and the sandbox organization's configuration without
// registry documents, so that a million applications fit on a small disk
// (the registry documents are most of an application's bytes).
const scaleConfig = `
[limits]
rate_per_second = 0

[[organizations]]
id = "default"
name = "Sandbox"
default_config = "default"

  [[organizations.configs]]
  id = "default"
  form = "standard"
  countries = ["GB", "IE"]
  registry_documents = false
`

// noRateLimitConfig is the built-in sandbox (registry documents on)
// without the API's rate limit.
const noRateLimitConfig = `
[limits]
rate_per_second = 0
`

// scaleDir is a data directory seeded with applications by the real code
// paths, with its configuration file and an API key of its organization.
// Its root holds the files "key" and "seeded" (how many applications are
// stored), so that a directory kept between runs (ONBOARD_SCALE_DIR) is
// reused instead of seeded again.
type scaleDir struct {
	root, config, data, key string
	apps                    int
}

// prepareScaleDir returns the directory root seeded with n applications
// created through Service.CreateApplication by concurrency goroutines (the
// store groups their synced commits), adding only those missing when root
// already holds some. It logs the seeding rate.
func prepareScaleDir(t *testing.T, root string, n, concurrency int) scaleDir {
	t.Helper()
	d := scaleDir{root: root, config: filepath.Join(root, "onboard.toml"), data: filepath.Join(root, "data")}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.config, []byte(scaleConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "seeded")); err == nil {
		d.apps, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if b, err := os.ReadFile(filepath.Join(root, "key")); err == nil {
		d.key = strings.TrimSpace(string(b))
	}
	if d.apps >= n && d.key != "" {
		t.Logf("%s: reusing %d applications", root, d.apps)
		return d
	}

	cfg, err := config.Load(d.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = d.data
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close(os.Stderr)
	ctx := context.Background()
	if d.key == "" {
		d.key, _, err = a.svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "default", Name: "scale test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "key"), []byte(d.key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k, err := a.svc.Authenticate(ctx, d.key)
	if err != nil {
		t.Fatal(err)
	}

	todo := n - d.apps
	var done atomic.Int64
	start := time.Now()
	stopProgress := make(chan struct{})
	var progress sync.WaitGroup
	progress.Go(func() {
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-tick.C:
				c := done.Load()
				t.Logf("%s: seeded %d of %d, %.0f a second", root, c, todo, float64(c)/time.Since(start).Seconds())
				// What is committed so far counts if the run is cut short.
				_ = os.WriteFile(filepath.Join(root, "seeded"), []byte(strconv.Itoa(d.apps+int(c))+"\n"), 0o600)
			}
		}
	})
	err = bench.Parallel(todo, concurrency, func(i int) error {
		req := onboarding.CreateRequest{
			PrimaryContact: &onboarding.ContactInput{Email: fmt.Sprintf("applicant%d@example.com", d.apps+i)},
			Country:        "GB", CompanyNumber: "10000001", CompanyName: "Northwind Trading Ltd",
		}
		if _, err := a.svc.CreateApplication(ctx, k, req); err != nil {
			return err
		}
		done.Add(1)
		return nil
	})
	close(stopProgress)
	progress.Wait()
	took := time.Since(start)
	d.apps += int(done.Load())
	if werr := os.WriteFile(filepath.Join(root, "seeded"), []byte(strconv.Itoa(d.apps)+"\n"), 0o600); werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	t.Logf("%s: seeded %d applications in %v: %.0f a second (%d goroutines)", root, todo, took.Round(time.Second), float64(todo)/took.Seconds(), concurrency)
	return d
}

// dirBytes is the disk space the files under dir take (allocated blocks,
// as du counts them).
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// procMemory is a process's resident set (VmRSS), its peak (VmHWM), and
// the resident set's anonymous part (RssAnon: the Go heap, stacks, the
// runtime) and file-backed part (RssFile: the binary and the pages of
// Badger's memory-mapped tables and value log), from /proc/<pid>/status.
type procMemory struct{ rss, hwm, anon, file int64 }

func (m procMemory) String() string {
	return fmt.Sprintf("VmRSS %.1f MiB (RssAnon %.1f, RssFile %.1f), VmHWM %.1f MiB", mib(m.rss), mib(m.anon), mib(m.file), mib(m.hwm))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// readProcMemory reads pid's procMemory.
func readProcMemory(pid int) (procMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	defer f.Close()
	var m procMemory
	fields := map[string]*int64{"VmRSS": &m.rss, "VmHWM": &m.hwm, "RssAnon": &m.anon, "RssFile": &m.file}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		dst := fields[name]
		if !ok || dst == nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return procMemory{}, fmt.Errorf("%s: %w", sc.Text(), err)
		}
		*dst = kb << 10
	}
	if m.rss == 0 {
		return m, errors.New("no VmRSS in /proc status")
	}
	return m, sc.Err()
}

// memory reads the serve process's procMemory, failing the test when it
// cannot (no /proc).
func (p *serveProc) memory(t *testing.T) procMemory {
	t.Helper()
	m, err := readProcMemory(p.cmd.Process.Pid)
	if err != nil {
		t.Fatalf("memory of pid %d: %v", p.cmd.Process.Pid, err)
	}
	return m
}

// sampleRSS reads p's VmRSS every interval until stop is called, which
// returns the largest reading.
func (p *serveProc) sampleRSS(interval time.Duration) (stop func() int64) {
	var peak int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if m, err := readProcMemory(p.cmd.Process.Pid); err == nil {
				peak = max(peak, m.rss)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// freeLoopback returns a loopback address with a port free at the time of
// the call.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startup is how long a start of serve took, from before the process was
// started until each of its endpoints answered 200.
type startup struct{ healthz, readyz time.Duration }

// startTimed starts serve on a free loopback port with args and measures
// its startup: from before the process starts, a poller asks /healthz and
// then /readyz every millisecond until each answers 200 (at most 60
// seconds in all; startServeOn itself fails the test when the process
// does not log that it serves within 20 seconds).
func startTimed(t *testing.T, args ...string) (*serveProc, startup) {
	t.Helper()
	addr := freeLoopback(t)
	probe := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	var s startup
	var pollErr error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		deadline := start.Add(60 * time.Second)
		for _, ep := range []struct {
			path string
			took *time.Duration
		}{{"/healthz", &s.healthz}, {"/readyz", &s.readyz}} {
			for {
				resp, err := probe.Get("http://" + addr + ep.path)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						*ep.took = time.Since(start)
						break
					}
				}
				select {
				case <-stop:
					pollErr = errors.New("the test stopped the poller")
					return
				case <-time.After(time.Millisecond):
				}
				if time.Now().After(deadline) {
					pollErr = fmt.Errorf("%s did not answer 200 within 60s", ep.path)
					return
				}
			}
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()
	p := startServeOn(t, addr, "http://"+addr, args...)
	wg.Wait()
	if pollErr != nil {
		t.Fatalf("%v\nstderr:\n%s", pollErr, p.stderr.String())
	}
	return p, s
}
