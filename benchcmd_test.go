package main

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/bench"
	"onboard/storage/postgres/pgtest"
)

// benchOperations are the rows of onboard bench, in order.
var benchOperations = []string{bench.CeilingRead, bench.CeilingInsert, "create", bench.BusyName, "get", "list", "patch", "patch hot", "decision", "stage save"}

// busyLine is the table's line of the busy creates.
var busyLine = regexp.MustCompile(`(?m)^create with webhooks and registry documents running: (\d+) req/s, (\d+\.\d\d)× quiet create \(target ≥ 0\.90×; rounds \d+\.\d\d×(?:, \d+\.\d\d×){` + strconv.Itoa(bench.CreateRounds-1) + `}\)\n  meanwhile: (\d+) webhook deliveries received \((\d+) application\.created, for (\d+) creates\); registry documents of (\d+) applications fetched \((\d+) documents\), \d+ left queued$`)

// TestBenchTable runs a short bench through the binary: every operation
// has a row with requests, no failures and a throughput.
func TestBenchTable(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "bench", "-n", "50", "--duration", "300ms", "--concurrency", "4")
	lines := strings.Split(r.stdout, "\n")
	for _, name := range benchOperations {
		var fields []string
		for _, line := range lines {
			// "create (busy)" starts with "create ": a row's name is
			// followed by its number of requests.
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
				if f := strings.Fields(rest); len(f) > 0 && f[0][0] >= '0' && f[0][0] <= '9' {
					fields = f
				}
			}
		}
		if len(fields) < 6 {
			t.Errorf("%s: no row in\n%s", name, r.stdout)
			continue
		}
		requests, _ := strconv.Atoi(fields[0])
		failed, _ := strconv.Atoi(fields[1])
		rps, _ := strconv.ParseFloat(strings.TrimSuffix(fields[2], "*"), 64)
		if requests <= 0 || failed != 0 || rps <= 0 {
			t.Errorf("%s: requests %d, failed %d, req/s %v; want requests, no failure, a throughput", name, requests, failed, rps)
		}
		if strings.HasSuffix(fields[2], "*") {
			t.Errorf("%s: used up its prepared applications (req/s %s)", name, fields[2])
		}
	}
	m := busyLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no line of the busy creates in\n%s", r.stdout)
	}
	n := make([]int, len(m))
	for i := range m {
		n[i], _ = strconv.Atoi(m[i])
	}
	ratio, _ := strconv.ParseFloat(m[2], 64)
	if n[1] <= 0 || ratio <= 0 || n[3] <= 0 || n[4] > n[3] || n[5] <= 0 || n[6] <= 0 || n[7] <= 0 {
		t.Errorf("busy creates: %q; want a throughput and a ratio, webhook deliveries (application.created among them), and registry documents fetched", m[0])
	}
	for _, want := range []string{"RSS at the end: ", "data directory: ", " per application"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
}

// TestBenchJSON runs a short bench with --json: stdout is one JSON object
// with every operation, measured and compared with its ceiling.
func TestBenchJSON(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "bench", "-n", "50", "--duration", "300ms", "--concurrency", "4", "--json")
	var report bench.Report
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&report); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, op := range report.Operations {
		names = append(names, op.Name)
		if op.Requests <= 0 || op.Failures != 0 || op.Throughput <= 0 || op.P50 <= 0 || op.P99 < op.P50 {
			t.Errorf("%s: %+v; want requests, no failure, a throughput and latencies", op.Name, op)
		}
		if op.Ceiling != "" && (op.CeilingRate <= 0 || math.Abs(op.OfCeiling-op.Throughput/op.CeilingRate) > 1e-9) {
			t.Errorf("%s: ratio %v to %s at %v/s; want the ratio to a ceiling measured next to it", op.Name, op.OfCeiling, op.Ceiling, op.CeilingRate)
		}
	}
	// The ceilings were measured at the start and next to every operation
	// (each create round, get and list; both PATCHes, decision, stage save): the
	// ceilings' rows merge them all, each at least its 300 ms.
	measured := map[string]int{bench.CeilingRead: 1 + 2, bench.CeilingInsert: 1 + bench.CreateRounds + 4}
	for _, op := range report.Operations {
		if n, ok := measured[op.Name]; ok && op.Throughput > 0 {
			if ran := float64(op.Requests) / op.Throughput; ran < float64(n)*0.3 {
				t.Errorf("%s ran %.2fs in all; want %d measurements of 300ms", op.Name, ran, n)
			}
		}
	}
	if diff := cmp.Diff(benchOperations, names); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	for _, op := range report.Operations {
		if op.Exhausted {
			t.Errorf("%s used up its prepared applications after %v of 300ms", op.Name, op.Elapsed)
		}
	}
	checkBackground(t, report)
	if report.Applications != 50 || report.Concurrency != 4 || report.Duration != "300ms" {
		t.Errorf("settings = %d, %d, %s; want 50, 4, 300ms", report.Applications, report.Concurrency, report.Duration)
	}
	if report.RSSAnonymousBytes <= 0 || report.RSSAnonymousBytes > report.RSSBytes || report.RSSCeilingBytes <= 0 {
		t.Errorf("RSS %d, anonymous %d, the ceilings' database %d; want the anonymous part of the first, and the third measured",
			report.RSSBytes, report.RSSAnonymousBytes, report.RSSCeilingBytes)
	}
	if report.RSSBytes <= 0 || report.DataDirBytes <= 0 || report.DataDirParts["badger"] <= 0 || report.StoredApplications < 50 || report.BytesPerApp <= 0 {
		t.Errorf("RSS %d, data directory %d %v for %d applications (%.0f each); want all measured",
			report.RSSBytes, report.DataDirBytes, report.DataDirParts, report.StoredApplications, report.BytesPerApp)
	}
}

// checkBackground checks the JSON report's comparison of busy and quiet
// creates: its ratio is that of the two rows, each round was measured,
// and the background work ran during the busy rounds.
func checkBackground(t *testing.T, report bench.Report) {
	t.Helper()
	b := report.Background
	if b == nil {
		t.Fatal("no background in the report")
	}
	rps := map[string]float64{}
	for _, op := range report.Operations {
		rps[op.Name] = op.Throughput
	}
	if want := rps[bench.BusyName] / rps["create"]; math.Abs(b.Ratio-want) > 1e-9 || b.Target != 0.9 {
		t.Errorf("busy to quiet %v, target %v; want %v (the rows' ratio), 0.9", b.Ratio, b.Target, want)
	}
	if len(b.Rounds) != bench.CreateRounds {
		t.Errorf("%d rounds, want %d", len(b.Rounds), bench.CreateRounds)
	}
	deliveries, fetched := 0, 0
	for i, r := range b.Rounds {
		// Which events a round delivers depends on how much of the backlog
		// went out while it was queued: the deliveries are counted, each
		// round, and their types only in all.
		if r.Quiet <= 0 || r.Busy <= 0 || r.Ratio <= 0 || r.Deliveries <= 0 || r.CreatedDelivered > r.Deliveries || r.RegistryFetched <= 0 || r.RegistryDocuments <= 0 || r.BacklogStart <= 0 {
			t.Errorf("round %d: %+v; want both throughputs, webhook deliveries and registry documents fetched from a backlog", i+1, r)
		}
		deliveries += r.Deliveries
		fetched += r.RegistryFetched
	}
	if b.Deliveries != deliveries || b.RegistryFetched != fetched || b.CreatedDelivered > b.Deliveries || b.BusyCreates <= 0 {
		t.Errorf("background %+v: not the sums of its rounds", b)
	}
}

// TestBenchPostgres runs a short bench with --postgres-url: every
// operation runs without a failure on PostgreSQL, the database's size is
// counted, and the temporary database is dropped at the end.
func TestBenchPostgres(t *testing.T) {
	t.Parallel()
	server := pgtest.Server(t)
	r := mustRun(t, "bench", "-n", "50", "--duration", "300ms", "--concurrency", "4", "--json", "--postgres-url", server)
	var report bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, op := range report.Operations {
		names = append(names, op.Name)
		if op.Requests <= 0 || op.Failures != 0 {
			t.Errorf("%s: %d requests, %d failed; want requests and no failure", op.Name, op.Requests, op.Failures)
		}
	}
	if diff := cmp.Diff(benchOperations, names); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if report.DataDirParts["postgres"] <= 0 || report.DataDirParts["badger"] != 0 {
		t.Errorf("data directory parts %v; want the database's size and no Badger directory", report.DataDirParts)
	}
	m := regexp.MustCompile(`database (onboard_bench_[a-z2-7]+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr names no temporary database:\n%s", r.stderr)
	}
	conn, err := pgx.Connect(context.Background(), server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", m[1]).Scan(&left); err != nil || left != 0 {
		t.Errorf("database %s left after the bench (%d, %v)", m[1], left, err)
	}
}
