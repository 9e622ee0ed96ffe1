package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted:
// the smallest value that at least p percent of the values are at or
// below. It is 0 for no values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Result is what one operation measured.
type Result struct {
	Name       string        `json:"name"`
	Requests   int           `json:"requests"` // answered as expected
	Failures   int           `json:"failures"`
	Elapsed    time.Duration `json:"-"`
	Throughput float64       `json:"throughput_per_second"`
	P50        float64       `json:"p50_ms"`
	P90        float64       `json:"p90_ms"`
	P99        float64       `json:"p99_ms"`
	// Ceiling names the ceiling the operation is compared with, and
	// CeilingRate is that ceiling's throughput measured next to it (the
	// ceiling's row when 0); OfCeiling is the operation's throughput as a
	// fraction of CeilingRate.
	Ceiling     string  `json:"ceiling,omitempty"`
	CeilingRate float64 `json:"ceiling_per_second,omitempty"`
	OfCeiling   float64 `json:"of_ceiling,omitempty"`
	// Exhausted is true when the operation ran out of prepared
	// applications before its time was up: it ran for less than the
	// duration, and its throughput is over the time it did run.
	Exhausted bool   `json:"exhausted,omitempty"`
	FirstErr  string `json:"first_error,omitempty"`
	// Extended is true when the operation ran past its duration, waiting
	// for what it measures beside (runPhaseUntil).
	Extended bool `json:"-"`
	// latencies are those of the requests answered as expected, sorted:
	// rounds of one operation are merged from them.
	latencies []time.Duration
}

// Summarize makes an Result of latencies (of the requests answered as
// expected, in any order) measured over elapsed.
func Summarize(name string, latencies []time.Duration, failures int, elapsed time.Duration, firstErr error) Result {
	slices.Sort(latencies)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	r := Result{
		Name: name, Requests: len(latencies), Failures: failures, Elapsed: elapsed, latencies: latencies,
		P50: ms(percentile(latencies, 50)), P90: ms(percentile(latencies, 90)), P99: ms(percentile(latencies, 99)),
	}
	if elapsed > 0 {
		r.Throughput = float64(len(latencies)) / elapsed.Seconds()
	}
	if firstErr != nil {
		r.FirstErr = firstErr.Error()
	}
	return r
}

// Report is the output of onboard bench.
type Report struct {
	Applications int      `json:"applications_seeded"`
	Concurrency  int      `json:"concurrency"`
	Duration     string   `json:"duration"`
	Operations   []Result `json:"operations"`
	// Background compares creates with the background jobs busy and
	// quiet (the rows create (busy) and create).
	Background *Background `json:"background"`
	// RSSBytes is the process's resident set at the end of the API's
	// operations, without the ceilings' database's mapped files
	// (RSSCeilingBytes). RSSAnonymousBytes is its anonymous part (the Go
	// heap and stacks, Badger's caches and buffers, of the server, the
	// client and the ceilings' database alike); the rest is mapped files,
	// which the kernel may reclaim. 0 where /proc is not available.
	RSSBytes          int64 `json:"rss_bytes"`
	RSSAnonymousBytes int64 `json:"rss_anonymous_bytes"`
	RSSCeilingBytes   int64 `json:"rss_ceiling_database_bytes"`
	// DataDirBytes is the disk space the data directory takes once the
	// server has stopped, for StoredApplications applications.
	DataDirBytes int64 `json:"data_dir_bytes"`
	// DataDirParts are DataDirBytes by top-level entry of the data
	// directory: badger (records), blobs (files), outbox (sandbox mail).
	DataDirParts       map[string]int64 `json:"data_dir_parts"`
	StoredApplications int              `json:"stored_applications"`
	BytesPerApp        float64          `json:"bytes_per_application"`
}

// compare sets every operation's ratio to the ceiling measured next to
// it, or where there is none to the row of the ceiling it names.
func (r *Report) compare() {
	rps := map[string]float64{}
	for _, op := range r.Operations {
		rps[op.Name] = op.Throughput
	}
	for i := range r.Operations {
		op := &r.Operations[i]
		if op.Ceiling == "" {
			continue
		}
		if op.CeilingRate == 0 {
			op.CeilingRate = rps[op.Ceiling]
		}
		if op.CeilingRate > 0 {
			op.OfCeiling = op.Throughput / op.CeilingRate
		}
	}
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as a table and two lines of totals.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "onboard bench: %d applications seeded, %d connections, %s per operation, over loopback\n\n",
		r.Applications, r.Concurrency, r.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\trequests\tfailed\treq/s\tp50 ms\tp90 ms\tp99 ms\tof ceiling\t")
	for _, op := range r.Operations {
		ratio := ""
		if op.Ceiling != "" {
			ratio = fmt.Sprintf("%.1f%% of %s (%.0f/s)", 100*op.OfCeiling, strings.TrimPrefix(op.Ceiling, "ceiling "), op.CeilingRate)
		}
		rps := fmt.Sprintf("%.0f", op.Throughput)
		if op.Exhausted {
			rps += "*"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.2f\t%.2f\t%.2f\t%s\t\n",
			op.Name, op.Requests, op.Failures, rps, op.P50, op.P90, op.P99, ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, op := range r.Operations {
		if op.Exhausted {
			fmt.Fprintf(w, "* %s used up its prepared applications after %s: the rate is over that time.\n", op.Name, op.Elapsed.Round(time.Millisecond))
		}
	}
	if b := r.Background; b != nil {
		writeBackground(w, b, r.Operations)
	}
	for _, op := range r.Operations {
		if op.FirstErr != "" {
			fmt.Fprintf(w, "%s: first failure: %s\n", op.Name, op.FirstErr)
		}
	}
	fmt.Fprintf(w, "\nRSS at the end: %.1f MiB (anonymous %.1f, the rest mapped files), not counting %.1f MiB of the ceilings' database\n",
		float64(r.RSSBytes)/(1<<20), float64(r.RSSAnonymousBytes)/(1<<20), float64(r.RSSCeilingBytes)/(1<<20))
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(r.DataDirParts)) {
		parts = append(parts, fmt.Sprintf("%s %.1f", name, float64(r.DataDirParts[name])/(1<<20)))
	}
	_, err := fmt.Fprintf(w, "data directory: %.1f MiB (%s) for %d applications, %.1f KiB per application\n",
		float64(r.DataDirBytes)/(1<<20), strings.Join(parts, ", "), r.StoredApplications, r.BytesPerApp/1024)
	return err
}

// writeBackground writes the line of the busy creates: their throughput
// as a fraction of the quiet ones', and what the background work did.
func writeBackground(w io.Writer, b *Background, ops []Result) {
	busy := 0.0
	for _, op := range ops {
		if op.Name == BusyName {
			busy = op.Throughput
		}
	}
	var rounds []string
	for _, r := range b.Rounds {
		rounds = append(rounds, fmt.Sprintf("%.2f×", r.Ratio))
	}
	fmt.Fprintf(w, "create with webhooks and registry documents running: %.0f req/s, %.2f× quiet create (target ≥ %.2f×; rounds %s)\n",
		busy, b.Ratio, b.Target, strings.Join(rounds, ", "))
	fmt.Fprintf(w, "  meanwhile: %d webhook deliveries received (%d application.created, for %d creates); registry documents of %d applications fetched (%d documents), %d left queued\n",
		b.Deliveries, b.CreatedDelivered, b.BusyCreates, b.RegistryFetched, b.RegistryDocuments, b.RegistryBacklogEnd)
}
