package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"onboard/bench"
)

// The targets for the list and start-up at scale (docs/performance.md).
const (
	// listRatioTarget bounds the list's latency with many applications
	// stored as a multiple of its latency with scaleSmall stored.
	listRatioTarget = 1.2
	// startupTarget bounds the time from starting serve on a data
	// directory with many applications until /healthz and /readyz answer.
	startupTarget = time.Second
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
	list, byState bench.Result
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
// (a million applications take gigabytes; delete them when done);
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
			for _, op := range []bench.Result{run.list, run.byState} {
				t.Logf("round %d, %d applications: %s: %d requests, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms",
					r+1, run.apps, op.Name, op.Requests, op.P50, op.P90, op.P99)
			}
		}
	}

	small, large := best(runs[0]), best(runs[1])
	for _, c := range []struct {
		name         string
		small, large bench.Result
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
	lower := func(dst *bench.Result, src bench.Result) {
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
	client := bench.NewClient(len(dirs))
	list := func(i int, query string) bench.Request {
		return bench.Request{
			Method: http.MethodGet, URL: procs[i].base + "/api/external/applications?" + query,
			Header: http.Header{"Authorization": {"Bearer " + dirs[i].key}}, Want: http.StatusOK,
		}
	}
	for i := range dirs {
		first := list(i, "limit=50")
		first.KeepBody = true
		_, body, err := bench.Send(client, first)
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
		dst         func(*listRun) *bench.Result
	}{
		{"list", "limit=50", func(r *listRun) *bench.Result { return &r.list }},
		{"list status=sent", "limit=50&status=sent", func(r *listRun) *bench.Result { return &r.byState }},
	} {
		reqs := make([]bench.Request, len(dirs))
		for i := range dirs {
			reqs[i] = list(i, q.query)
		}
		for range 200 {
			for i := range dirs {
				if _, _, err := bench.Send(client, reqs[i]); err != nil {
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
				if _, _, err := bench.Send(client, reqs[i]); err != nil {
					t.Fatalf("%s of %d: %v", q.name, dirs[i].apps, err)
				}
				latencies[i] = append(latencies[i], time.Since(t0))
			}
		}
		elapsed := time.Since(start)
		for i := range dirs {
			*q.dst(&runs[i]) = bench.Summarize(q.name, latencies[i], 0, elapsed, nil)
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
