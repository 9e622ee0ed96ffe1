package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// benchOperations are the rows of onboard bench, in order.
var benchOperations = []string{ceilingRead, ceilingInsert, "create", "get", "list", "patch", "decision", "stage save"}

// TestBenchTable runs a short bench through the binary: every operation
// has a row with requests, no failures and a throughput.
func TestBenchTable(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "bench", "-n", "50", "--duration", "300ms", "--concurrency", "4")
	lines := strings.Split(r.stdout, "\n")
	for _, name := range benchOperations {
		var fields []string
		for _, line := range lines {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
				fields = strings.Fields(rest)
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
	var report benchReport
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
		if op.Ceiling != "" && op.OfCeiling <= 0 {
			t.Errorf("%s: no ratio to %s", op.Name, op.Ceiling)
		}
	}
	if diff := cmp.Diff(benchOperations, names); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if report.Applications != 50 || report.Concurrency != 4 || report.Duration != "300ms" {
		t.Errorf("settings = %d, %d, %s; want 50, 4, 300ms", report.Applications, report.Concurrency, report.Duration)
	}
	if report.RSSBytes <= 0 || report.DataDirBytes <= 0 || report.DataDirParts["badger"] <= 0 || report.StoredApplications < 50 || report.BytesPerApp <= 0 {
		t.Errorf("RSS %d, data directory %d %v for %d applications (%.0f each); want all measured",
			report.RSSBytes, report.DataDirBytes, report.DataDirParts, report.StoredApplications, report.BytesPerApp)
	}
}
