package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// callCounts records Options.CountCall.
type callCounts struct {
	mu sync.Mutex
	n  map[string]int // "registry outcome" → calls
}

func (c *callCounts) count(registry, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[registry+" "+outcome]++
}

func (c *callCounts) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// answerTransport answers every request with status and body, or fails it
// with err.
type answerTransport struct {
	status int
	body   string
	err    error
}

func (a answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if a.err != nil {
		return nil, a.err
	}
	return &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

// TestCountCall checks that every request sent to a registry is counted
// once, under its registry and the outcome its answer gives.
func TestCountCall(t *testing.T) {
	tests := []struct {
		name    string
		country string
		answer  answerTransport
		want    string
	}{
		{"uk ok", "GB", answerTransport{status: 200, body: `{"company_number":"10000001","company_name":"X","company_status":"active"}`}, "uk ok"},
		{"uk not found", "GB", answerTransport{status: 404, body: `{}`}, "uk not_found"},
		{"uk throttled", "GB", answerTransport{status: 429}, "uk throttled"},
		{"uk unavailable", "GB", answerTransport{status: 503}, "uk unavailable"},
		{"uk bad gateway", "GB", answerTransport{status: 502}, "uk unavailable"},
		{"uk unauthorised", "GB", answerTransport{status: 401}, "uk error"},
		{"uk server error", "GB", answerTransport{status: 500}, "uk error"},
		{"uk no answer", "GB", answerTransport{err: errors.New("connection refused")}, "uk unavailable"},
		{"uk no recording", "GB", answerTransport{err: fmt.Errorf("GET /company/10000001: %w", ErrNoRecording)}, "uk error"},
		{"ie ok", "IE", answerTransport{status: 200, body: `[]`}, "ie ok"},
		{"ie not found", "IE", answerTransport{status: 404}, "ie not_found"},
		{"ie unavailable", "IE", answerTransport{status: 504}, "ie unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := &callCounts{n: map[string]int{}}
			r, err := New(Options{Mode: ModeFixtures, Transport: tt.answer, CountCall: counts.count})
			if err != nil {
				t.Fatal(err)
			}
			number := "10000001"
			if tt.country == "IE" {
				number = "123456"
			}
			_, _ = r.VerifyCompany(context.Background(), tt.country, number, "")
			if diff := cmp.Diff(map[string]int{tt.want: 1}, counts.take()); diff != "" {
				t.Errorf("counted calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountCallThrottledByLimit counts a request the credential's limit
// held back, which never reached the registry.
func TestCountCallThrottledByLimit(t *testing.T) {
	counts := &callCounts{n: map[string]int{}}
	sent := 0
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return answerTransport{status: 404}.RoundTrip(r)
	})
	r, err := New(Options{Mode: ModeFixtures, Transport: rt, CountCall: counts.count,
		CompaniesHouseLimit: Limit{Requests: 1, Per: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		_, _ = r.VerifyCompany(ctx, "GB", "10000001", "")
	}
	if diff := cmp.Diff(map[string]int{"uk not_found": 1, "uk throttled": 1}, counts.take()); diff != "" {
		t.Errorf("counted calls (-want +got):\n%s", diff)
	}
	if sent != 1 {
		t.Errorf("requests sent = %d, want 1", sent)
	}
}

// TestOutcomesListEveryOutcome checks that the lists a counter starts its
// series from hold each label once.
func TestOutcomesListEveryOutcome(t *testing.T) {
	want := []string{"ok", "not_found", "throttled", "unavailable", "error"}
	if diff := cmp.Diff(want, Outcomes()); diff != "" {
		t.Errorf("Outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"uk", "ie"}, Registries()); diff != "" {
		t.Errorf("Registries (-want +got):\n%s", diff)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
