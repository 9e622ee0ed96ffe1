package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"onboard/bench"
)

// The targets for the resident set of serve (docs/performance.md): idle,
// under the mixed load, and while applications are created as fast as the
// API takes them.
const (
	idleRSSTarget    = 64 << 20
	loadRSSTarget    = 192 << 20
	seedingRSSTarget = 256 << 20
)

// TestScaleMemory measures the resident set of the built binary (VmRSS
// and VmHWM from /proc) on a fresh sandbox data directory: idle after
// start; under 32 keep-alive clients creating, reading, listing and
// PATCHing for ONBOARD_MEMORY_DURATION (25s by default); idle after that
// load; and, in a second process on a fresh directory, while 200,000
// applications (ONBOARD_MEMORY_SEED) are created through the API as fast
// as 64 clients can. It logs the Go runtime's memory figures from
// /metrics at each peak.
//
//	ONBOARD_MEMORY=1 go test -run TestScaleMemory -timeout 1h -v .
func TestScaleMemory(t *testing.T) {
	if os.Getenv("ONBOARD_MEMORY") == "" {
		t.Skip("set ONBOARD_MEMORY=1 to measure serve's memory at idle, under load and while seeding 200,000 applications (about 20 minutes on 2 cores)")
	}
	load := 25 * time.Second
	if d, err := time.ParseDuration(os.Getenv("ONBOARD_MEMORY_DURATION")); err == nil && d > 0 {
		load = d
	}
	seed := 200_000
	if n, err := strconv.Atoi(os.Getenv("ONBOARD_MEMORY_SEED")); err == nil && n > 0 {
		seed = n
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte(noRateLimitConfig), 0o600); err != nil {
		t.Fatal(err)
	}

	p, s := startTimed(t, "--config", config, "--data-dir", filepath.Join(dir, "load"))
	key := p.waitForKey(t)
	t.Logf("fresh sandbox: start-up /healthz %v, /readyz %v", s.healthz.Round(time.Millisecond), s.readyz.Round(time.Millisecond))
	time.Sleep(5 * time.Second) // idle
	idle := p.memory(t)
	t.Logf("idle 5s after start: %v", idle)

	stopSampling := p.sampleRSS(100 * time.Millisecond)
	mixed := mixedLoad(p.base, key, 32, load)
	peak := stopSampling()
	underLoad := p.memory(t)
	t.Logf("mixed load: %d requests in %v (%.0f a second), p50 %.2f ms, p99 %.2f ms, %d failures",
		mixed.Requests, mixed.Elapsed.Round(time.Millisecond), mixed.Throughput, mixed.P50, mixed.P99, mixed.Failures)
	t.Logf("under load: highest VmRSS sampled %.1f MiB; at its end %v", mib(peak), underLoad)
	t.Logf("Go runtime at the end of the load: %s", runtimeMemory(t, p, key))
	// The API is idle after the load, but the registry documents job
	// still fetches the documents of the applications it created: the
	// last reading is taken once the job's registry requests have stopped
	// (no new one in 5 seconds), at most 5 minutes after the load.
	var afterLoad procMemory
	loadEnd := time.Now()
	for _, at := range []time.Duration{10 * time.Second, 30 * time.Second, 60 * time.Second} {
		time.Sleep(time.Until(loadEnd.Add(at))) // idle
		afterLoad = p.memory(t)
		t.Logf("%v after the load: %v; Go runtime: %s", at, afterLoad, runtimeMemory(t, p, key))
	}
	for last := -1.0; ; {
		calls := registryRequests(t, p, key)
		if calls == last || time.Since(loadEnd) > 5*time.Minute {
			break
		}
		last = calls
		time.Sleep(5 * time.Second)
	}
	afterLoad = p.memory(t)
	t.Logf("idle, %v after the load, registry documents job done: %v; Go runtime: %s", time.Since(loadEnd).Round(time.Second), afterLoad, runtimeMemory(t, p, key))
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d, want 0", code)
	}

	p, _ = startTimed(t, "--config", config, "--data-dir", filepath.Join(dir, "seed"))
	key = p.waitForKey(t)
	stopSampling = p.sampleRSS(100 * time.Millisecond)
	created := seedThroughAPI(p.base, key, seed, 64)
	seedPeak := stopSampling()
	seeding := p.memory(t)
	if created.FirstErr != "" {
		t.Fatalf("seeding through the API: %s", created.FirstErr)
	}
	t.Logf("seeding: %d applications in %v: %.0f a second, p50 %.2f ms, p99 %.2f ms", created.Requests,
		created.Elapsed.Round(time.Second), created.Throughput, created.P50, created.P99)
	t.Logf("seeding: highest VmRSS sampled %.1f MiB; at its end %v", mib(seedPeak), seeding)
	t.Logf("Go runtime at the end of the seeding: %s", runtimeMemory(t, p, key))
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d, want 0", code)
	}
	b := dirBytes(t, filepath.Join(dir, "seed"))
	t.Logf("seeded directory (registry documents on): %.2f GiB, %.1f KiB per application", float64(b)/(1<<30), float64(b)/float64(seed)/1024)

	for _, c := range []struct {
		what       string
		got, limit int64
	}{
		{"idle VmRSS after start", idle.rss, idleRSSTarget},
		{"idle VmRSS after the load", afterLoad.rss, idleRSSTarget},
		{"VmHWM under the mixed load", underLoad.hwm, loadRSSTarget},
		{"VmHWM while seeding", seeding.hwm, seedingRSSTarget},
	} {
		if c.got > c.limit {
			t.Errorf("%s %.1f MiB, want at most %.0f MiB", c.what, mib(c.got), mib(c.limit))
		}
	}
}

// TestScaleMemoryProfile writes heap profiles of the server (serve's
// composition, in this process, as onboard bench runs it, with serve's
// soft memory limit): to the file ONBOARD_MEMORY_PROFILE names, 20 seconds
// into the mixed load of TestScaleMemory, and to that name with "-seed"
// added, at the end of creating ONBOARD_MEMORY_SEED applications (40,000
// by default) through the API with 64 clients, and "-peak" at the highest
// heap seen while creating them:
//
//	ONBOARD_MEMORY_PROFILE=/tmp/heap.pprof go test -run TestScaleMemoryProfile -v .
//	go tool pprof -top -sample_index=inuse_space /tmp/heap.pprof
func TestScaleMemoryProfile(t *testing.T) {
	out := os.Getenv("ONBOARD_MEMORY_PROFILE")
	if out == "" {
		t.Skip("set ONBOARD_MEMORY_PROFILE to a file to write heap profiles of the server under the mixed load and while seeding")
	}
	seed := 40_000
	if n, err := strconv.Atoi(os.Getenv("ONBOARD_MEMORY_SEED")); err == nil && n > 0 {
		seed = n
	}
	before := debug.SetMemoryLimit(defaultMemoryLimit)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	b, err := startBenchServer(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	}()
	// writeProfile writes a heap profile (live objects as of the last
	// collection) to path; it may run on any goroutine.
	writeProfile := func(path string) {
		f, err := os.Create(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Error(err)
			return
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		t.Logf("%s: HeapInuse %.1f MiB, HeapAlloc %.1f MiB, HeapSys %.1f MiB, Sys %.1f MiB, NextGC %.1f MiB", path,
			mib(int64(m.HeapInuse)), mib(int64(m.HeapAlloc)), mib(int64(m.HeapSys)), mib(int64(m.Sys)), mib(int64(m.NextGC)))
	}
	done := make(chan bench.Result, 1)
	go func() { done <- mixedLoad(b.base, b.key, 32, 25*time.Second) }()
	time.Sleep(20 * time.Second) // into the load
	writeProfile(out)
	r := <-done
	t.Logf("mixed load: %d requests, %d failures", r.Requests, r.Failures)
	// While seeding, a profile is written to "-peak" whenever the heap in
	// use is 10% above its highest so far (from 100 MiB): the profile of
	// the last collection before the peak.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		highest := uint64(100 << 20)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > highest+highest/10 {
				highest = v
				writeProfile(out + "-peak")
			}
		}
	})
	r = seedThroughAPI(b.base, b.key, seed, 64)
	close(stop)
	wg.Wait()
	writeProfile(out + "-seed")
	t.Logf("seeding: %d creates, %.0f a second; first failure: %s", r.Requests, r.Throughput, r.FirstErr)
}

// mixedLoad runs clients keep-alive clients for d, each in turn creating
// an application, reading one of its own, listing the newest 50 and
// PATCHing one of its own, and returns what they measured.
func mixedLoad(base, key string, clients int, d time.Duration) bench.Result {
	client := bench.NewClient(clients)
	auth := http.Header{"Authorization": {"Bearer " + key}}
	apps := make([][]string, clients)
	create := bench.Request{Method: http.MethodPost, URL: base + "/api/external/applications", Body: []byte(createBody),
		ContentType: "application/json", Header: auth, Want: http.StatusCreated, KeepBody: true}
	list := bench.Request{Method: http.MethodGet, URL: base + "/api/external/applications?limit=50", Header: auth, Want: http.StatusOK}
	return bench.RunPhase("mixed", clients, d, func(w, i int) error {
		if i%4 == 0 || len(apps[w]) == 0 {
			_, body, err := bench.Send(client, create)
			if err != nil {
				return err
			}
			var created struct {
				ApplicationID string `json:"application_id"`
			}
			if err := json.Unmarshal(body, &created); err != nil {
				return err
			}
			apps[w] = append(apps[w], created.ApplicationID)
			return nil
		}
		id := apps[w][i%len(apps[w])]
		switch i % 4 {
		case 1:
			_, _, err := bench.Send(client, bench.Request{Method: http.MethodGet, URL: base + "/api/external/applications/" + id, Header: auth, Want: http.StatusOK})
			return err
		case 2:
			_, _, err := bench.Send(client, list)
			return err
		default:
			_, _, err := bench.Send(client, bench.Request{Method: http.MethodPatch, URL: base + "/api/external/applications/" + id,
				Body: fmt.Appendf(nil, `{"fields":{"website":"https://w%d-%d.example"}}`, w, i), ContentType: "application/json", Header: auth, Want: http.StatusOK})
			return err
		}
	})
}

// seedThroughAPI creates n applications through the API with clients
// keep-alive clients and returns what they measured, whose FirstErr is
// the first failed create (after which no more are sent).
func seedThroughAPI(base, key string, n, clients int) bench.Result {
	client := bench.NewClient(clients)
	create := bench.Request{Method: http.MethodPost, URL: base + "/api/external/applications", Body: []byte(createBody),
		ContentType: "application/json", Header: http.Header{"Authorization": {"Bearer " + key}}, Want: http.StatusCreated}
	latencies := make([]time.Duration, n)
	start := time.Now()
	err := bench.Parallel(n, clients, func(i int) error {
		t0 := time.Now()
		_, _, err := bench.Send(client, create)
		latencies[i] = time.Since(t0)
		return err
	})
	return bench.Summarize("seed", latencies, 0, time.Since(start), err)
}

// runtimeMemory is the Go runtime's memory figures that serve's /metrics
// exposes (go_memstats_*, in MiB) and its goroutines.
func runtimeMemory(t *testing.T, p *serveProc, key string) string {
	t.Helper()
	_, body := p.call(t, http.MethodGet, "/metrics", key, "")
	want := []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes",
		"go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes", "go_memstats_next_gc_bytes", "go_goroutines"}
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && slices.Contains(want, name) {
			if v, err := strconv.ParseFloat(value, 64); err == nil && strings.HasSuffix(name, "_bytes") {
				value = fmt.Sprintf("%.1f MiB", v/(1<<20))
			}
			got[name] = value
		}
	}
	var parts []string
	for _, name := range want {
		parts = append(parts, strings.TrimPrefix(name, "go_memstats_")+" "+got[name])
	}
	return strings.Join(parts, ", ") + fmt.Sprintf("; registry requests %.0f", registryRequests(t, p, key))
}

// registryRequests is the sum of serve's onboard_registry_requests_total.
func registryRequests(t *testing.T, p *serveProc, key string) float64 {
	t.Helper()
	_, body := p.call(t, http.MethodGet, "/metrics", key, "")
	total := 0.0
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, "onboard_registry_requests_total"); ok {
			_, value, _ := strings.Cut(rest, " ")
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				t.Fatalf("metrics line %q: %v", line, err)
			}
			total += v
		}
	}
	return total
}
