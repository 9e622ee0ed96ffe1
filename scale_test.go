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
)

// Issue 15's targets at scale.
const (
	// listRatioTarget bounds the list's latency with many applications
	// stored as a multiple of its latency with scaleSmall stored.
	listRatioTarget = 1.2
	// startupTarget bounds the time from starting serve on a data
	// directory with many applications until /healthz and /readyz answer.
	startupTarget = time.Second
	// Resident set of serve: idle, under the mixed load, and while
	// applications are created as fast as the API takes them.
	idleRSSTarget    = 64 << 20
	loadRSSTarget    = 192 << 20
	seedingRSSTarget = 256 << 20
)

// scaleSmall is the number of applications the list is compared with.
const scaleSmall = 10_000

// scaleSeeders is how many goroutines create applications in-process while
// a directory is seeded: enough for the store to group their commits.
const scaleSeeders = 64

// listRun is what one start of serve on a seeded directory measured.
type listRun struct {
	apps          int
	startup       startup
	afterStart    procMemory
	list, byState opResult
	stop          time.Duration // from SIGTERM to exit
}

// TestScaleList compares the partner list's latency (GET
// /api/external/applications?limit=50, newest first, and with
// status=sent) with ONBOARD_SCALE applications stored against 10,000, and
// measures serve's startup on the large directory. The directories are
// seeded in this process through Service.CreateApplication (the fastest
// honest route: the real create, many at once, so the store groups their
// synced commits), without registry documents. Each round then starts the
// built binary on both directories and measures them together over
// loopback, one request at a time, alternating between the two servers
// request by request, so that whatever else the machine is doing slows
// both alike; the checks use each size's best of ONBOARD_SCALE_ROUNDS
// rounds (3 by default).
// ONBOARD_SCALE_DIR keeps the seeded directories there for the next run
// (a million applications take about 4 GB; delete them when done);
// otherwise they are temporary.
//
//	ONBOARD_SCALE=1000000 go test -run TestScaleList -timeout 2h -v .
func TestScaleList(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ONBOARD_SCALE"))
	if n <= scaleSmall {
		t.Skipf("set ONBOARD_SCALE to a number of applications above %d (such as 1000000) to measure the list and startup at scale; seeding a million takes about an hour on 2 cores", scaleSmall)
	}
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("ONBOARD_SCALE_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	root := os.Getenv("ONBOARD_SCALE_DIR")
	if root == "" {
		root = t.TempDir()
	}
	dirs := []scaleDir{
		prepareScaleDir(t, filepath.Join(root, strconv.Itoa(scaleSmall)), scaleSmall, scaleSeeders),
		prepareScaleDir(t, filepath.Join(root, strconv.Itoa(n)), n, scaleSeeders),
	}
	for _, d := range dirs {
		b := dirBytes(t, d.data)
		t.Logf("%d applications: data directory %.2f GiB, %.1f KiB per application", d.apps, float64(b)/(1<<30), float64(b)/float64(d.apps)/1024)
	}

	runs := make([][]listRun, len(dirs))
	for r := range rounds {
		for i, run := range measureLists(t, dirs) {
			runs[i] = append(runs[i], run)
			t.Logf("round %d, %d applications: start-up /healthz %v, /readyz %v; after start %v; stop %v", r+1, run.apps,
				run.startup.healthz.Round(time.Millisecond), run.startup.readyz.Round(time.Millisecond), run.afterStart, run.stop.Round(time.Millisecond))
			for _, op := range []opResult{run.list, run.byState} {
				t.Logf("round %d, %d applications: %s: %d requests, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms",
					r+1, run.apps, op.Name, op.Requests, op.P50, op.P90, op.P99)
			}
		}
	}

	small, large := best(runs[0]), best(runs[1])
	for _, c := range []struct {
		name         string
		small, large opResult
	}{{"list", small.list, large.list}, {"list status=sent", small.byState, large.byState}} {
		for _, q := range []struct {
			name         string
			small, large float64
			checked      bool
		}{{"p50", c.small.P50, c.large.P50, true}, {"p90", c.small.P90, c.large.P90, true}, {"p99", c.small.P99, c.large.P99, false}} {
			ratio := q.large / q.small
			t.Logf("%s %s, best rounds: %.2f ms with %d, %.2f ms with %d: %.2f×", c.name, q.name, q.small, small.apps, q.large, large.apps, ratio)
			if q.checked && ratio > listRatioTarget {
				t.Errorf("%s %s with %d applications is %.2f× that with %d, want at most %.1f×", c.name, q.name, large.apps, ratio, small.apps, listRatioTarget)
			}
		}
	}
	t.Logf("start-up with %d applications, best round: /healthz %v, /readyz %v", large.apps, large.startup.healthz.Round(time.Millisecond), large.startup.readyz.Round(time.Millisecond))
	if large.startup.readyz > startupTarget {
		t.Errorf("start-up with %d applications: /readyz answered 200 after %v, want at most %v", large.apps, large.startup.readyz, startupTarget)
	}
}

// best is the best of runs: each figure the lowest any run measured.
func best(runs []listRun) listRun {
	b := runs[0]
	lower := func(dst *opResult, src opResult) {
		dst.P50, dst.P90, dst.P99 = min(dst.P50, src.P50), min(dst.P90, src.P90), min(dst.P99, src.P99)
	}
	for _, r := range runs[1:] {
		b.startup.healthz = min(b.startup.healthz, r.startup.healthz)
		b.startup.readyz = min(b.startup.readyz, r.startup.readyz)
		lower(&b.list, r.list)
		lower(&b.byState, r.byState)
	}
	return b
}

// listDuration is how long each list is measured per start, on each
// directory.
const listDuration = 5 * time.Second

// measureLists starts the binary on each of dirs in turn, timing each
// start, checks that each list answers a full page, and measures the list
// and the list of sent applications, one request at a time, after a
// warm-up: the servers take turns, request by request (in an order that
// alternates, so that neither always follows the other), for
// listDuration each. It stops them in turn at the end.
func measureLists(t *testing.T, dirs []scaleDir) []listRun {
	t.Helper()
	procs := make([]*serveProc, len(dirs))
	runs := make([]listRun, len(dirs))
	for i, d := range dirs {
		p, s := startTimed(t, "--config", d.config, "--data-dir", d.data)
		procs[i], runs[i] = p, listRun{apps: d.apps, startup: s, afterStart: p.memory(t)}
	}
	client := newBenchClient(len(dirs))
	list := func(i int, query string) benchRequest {
		return benchRequest{
			method: http.MethodGet, url: procs[i].base + "/api/external/applications?" + query,
			header: http.Header{"Authorization": {"Bearer " + dirs[i].key}}, want: http.StatusOK,
		}
	}
	for i := range dirs {
		_, body, err := send(client, list(i, "limit=50"))
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Applications []json.RawMessage `json:"applications"`
			HasMore      bool              `json:"has_more"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Applications) != 50 || !page.HasMore {
			t.Fatalf("list of %d: %d applications, has_more %v; want 50 and more", dirs[i].apps, len(page.Applications), page.HasMore)
		}
	}
	for _, q := range []struct {
		name, query string
		dst         func(*listRun) *opResult
	}{
		{"list", "limit=50", func(r *listRun) *opResult { return &r.list }},
		{"list status=sent", "limit=50&status=sent", func(r *listRun) *opResult { return &r.byState }},
	} {
		reqs := make([]benchRequest, len(dirs))
		for i := range dirs {
			reqs[i] = list(i, q.query)
		}
		for range 200 {
			for i := range dirs {
				if _, _, err := send(client, reqs[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		latencies := make([][]time.Duration, len(dirs))
		start := time.Now()
		for turn := 0; time.Since(start) < time.Duration(len(dirs))*listDuration; turn++ {
			for k := range dirs {
				i := k
				if turn%2 == 1 {
					i = len(dirs) - 1 - k
				}
				t0 := time.Now()
				if _, _, err := send(client, reqs[i]); err != nil {
					t.Fatalf("%s of %d: %v", q.name, dirs[i].apps, err)
				}
				latencies[i] = append(latencies[i], time.Since(t0))
			}
		}
		elapsed := time.Since(start)
		for i := range dirs {
			*q.dst(&runs[i]) = summarize(q.name, latencies[i], 0, elapsed, nil)
		}
	}
	for i, p := range procs {
		stopping := time.Now()
		if code := p.stop(t); code != 0 {
			t.Errorf("serve on %d applications: exit code %d, want 0", dirs[i].apps, code)
		}
		runs[i].stop = time.Since(stopping)
	}
	return runs
}

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
	b, err := startBenchServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.stop(); err != nil {
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
	done := make(chan opResult, 1)
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
func mixedLoad(base, key string, clients int, d time.Duration) opResult {
	client := newBenchClient(clients)
	auth := http.Header{"Authorization": {"Bearer " + key}}
	apps := make([][]string, clients)
	create := benchRequest{method: http.MethodPost, url: base + "/api/external/applications", body: []byte(createBody),
		contentType: "application/json", header: auth, want: http.StatusCreated}
	list := benchRequest{method: http.MethodGet, url: base + "/api/external/applications?limit=50", header: auth, want: http.StatusOK}
	return runPhase("mixed", clients, d, func(w, i int) error {
		if i%4 == 0 || len(apps[w]) == 0 {
			_, body, err := send(client, create)
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
			_, _, err := send(client, benchRequest{method: http.MethodGet, url: base + "/api/external/applications/" + id, header: auth, want: http.StatusOK})
			return err
		case 2:
			_, _, err := send(client, list)
			return err
		default:
			_, _, err := send(client, benchRequest{method: http.MethodPatch, url: base + "/api/external/applications/" + id,
				body: fmt.Appendf(nil, `{"fields":{"website":"https://w%d-%d.example"}}`, w, i), contentType: "application/json", header: auth, want: http.StatusOK})
			return err
		}
	})
}

// seedThroughAPI creates n applications through the API with clients
// keep-alive clients and returns what they measured, whose FirstErr is
// the first failed create (after which no more are sent).
func seedThroughAPI(base, key string, n, clients int) opResult {
	client := newBenchClient(clients)
	create := benchRequest{method: http.MethodPost, url: base + "/api/external/applications", body: []byte(createBody),
		contentType: "application/json", header: http.Header{"Authorization": {"Bearer " + key}}, want: http.StatusCreated}
	latencies := make([]time.Duration, n)
	start := time.Now()
	err := parallel(n, clients, func(i int) error {
		t0 := time.Now()
		_, _, err := send(client, create)
		latencies[i] = time.Since(t0)
		return err
	})
	return summarize("seed", latencies, 0, time.Since(start), err)
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
