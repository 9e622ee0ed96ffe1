package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		d := make([]time.Duration, len(n))
		for i, v := range n {
			d[i] = time.Duration(v) * time.Millisecond
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"no values", nil, 50, 0},
		{"one value, p50", ms(7), 50, 7 * time.Millisecond},
		{"one value, p99", ms(7), 99, 7 * time.Millisecond},
		{"1..100, p50", ms(hundred...), 50, 50 * time.Millisecond},
		{"1..100, p90", ms(hundred...), 90, 90 * time.Millisecond},
		{"1..100, p99", ms(hundred...), 99, 99 * time.Millisecond},
		{"1..100, p100", ms(hundred...), 100, 100 * time.Millisecond},
		{"four values, p50: the second", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"four values, p51: the third", ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{"four values, p90: the last", ms(1, 2, 3, 4), 90, 4 * time.Millisecond},
		{"ten values, p99: the last", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p0 is the first", ms(3, 5), 0, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("%s: percentile = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// Unsorted latencies; two seconds.
	lat := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	got := Summarize("get", lat, 1, 2*time.Second, nil)
	want := Result{Name: "get", Requests: 4, Failures: 1, Elapsed: 2 * time.Second, Throughput: 2, P50: 2, P90: 4, P99: 4,
		latencies: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Result{})); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}

// TestReportCompare: an operation is compared with the ceiling measured
// next to it, or, where none was, with its ceiling's row.
func TestReportCompare(t *testing.T) {
	r := Report{Operations: []Result{
		{Name: CeilingRead, Throughput: 1000},
		{Name: CeilingInsert, Throughput: 200},
		{Name: "get", Throughput: 250, Ceiling: CeilingRead},
		{Name: "create", Throughput: 50, Ceiling: CeilingInsert},
		{Name: "list", Throughput: 250, Ceiling: CeilingRead, CeilingRate: 500},
		{Name: "patch", Throughput: 150, Ceiling: CeilingInsert, CeilingRate: 100},
	}}
	r.compare()
	var got [][2]float64
	for _, op := range r.Operations {
		got = append(got, [2]float64{op.OfCeiling, op.CeilingRate})
	}
	want := [][2]float64{{0, 0}, {0, 0}, {0.25, 1000}, {0.25, 200}, {0.5, 500}, {1.5, 100}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ratios and ceilings (-want +got):\n%s", diff)
	}
}
