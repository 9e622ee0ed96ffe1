package bench

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunPhaseUntil checks how long a phase runs: its duration when ready
// is nil or at once ready, on past it until ready answers true or the
// limit has passed, and only until the workers use up what they work on.
func TestRunPhaseUntil(t *testing.T) {
	t.Parallel()
	const d = 5 * time.Millisecond
	work := func(int, int) error { return nil }
	tests := []struct {
		name         string
		d, limit     time.Duration
		readyAfter   int // polls before ready answers true; -1 never, 0 no ready
		do           func(int, int) error
		wantExtended bool
		wantAtLeast  time.Duration
		wantBelow    time.Duration
		wantUsedUp   bool
	}{
		{name: "no ready", d: d, limit: time.Minute, do: work, wantAtLeast: d, wantBelow: time.Minute},
		{name: "ready at once", d: d, limit: time.Minute, readyAfter: 1, do: work, wantAtLeast: d, wantBelow: time.Minute},
		{name: "ready at the third poll", d: d, limit: time.Minute, readyAfter: 3, do: work, wantExtended: true, wantAtLeast: d + 2*phasePoll, wantBelow: time.Minute},
		{name: "never ready", d: d, limit: 50 * time.Millisecond, readyAfter: -1, do: work, wantExtended: true, wantAtLeast: d + 50*time.Millisecond, wantBelow: time.Minute},
		// The limit is past at the first look, as when the timer fires
		// late on a loaded machine: still not ready, so extended.
		{name: "never ready, limit past at once", d: d, limit: 0, readyAfter: -1, do: work, wantExtended: true, wantAtLeast: d, wantBelow: time.Minute},
		{name: "used up", d: time.Minute, limit: time.Minute, readyAfter: -1, do: func(_, i int) error {
			if i >= 3 {
				return errUsedUp
			}
			return nil
		}, wantUsedUp: true, wantBelow: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ready func() bool
			var polls atomic.Int64
			if tt.readyAfter != 0 {
				ready = func() bool {
					n := polls.Add(1)
					return tt.readyAfter > 0 && n >= int64(tt.readyAfter)
				}
			}
			start := time.Now()
			r := runPhaseUntil("op", 2, tt.d, tt.limit, ready, tt.do)
			took := time.Since(start)
			if r.Extended != tt.wantExtended || r.Exhausted != tt.wantUsedUp {
				t.Errorf("extended %v, used up %v; want %v, %v", r.Extended, r.Exhausted, tt.wantExtended, tt.wantUsedUp)
			}
			if took < tt.wantAtLeast || took >= tt.wantBelow || r.Elapsed > took {
				t.Errorf("ran %s (elapsed %s); want at least %s, below %s", took, r.Elapsed, tt.wantAtLeast, tt.wantBelow)
			}
			if tt.readyAfter > 0 && polls.Load() != int64(tt.readyAfter) {
				t.Errorf("ready asked %d times, want %d", polls.Load(), tt.readyAfter)
			}
			if r.Requests == 0 || r.Failures != 0 {
				t.Errorf("%d requests, %d failures; want requests and no failure", r.Requests, r.Failures)
			}
		})
	}
}

// TestRunPhaseCountsFailures checks that a failed request is counted,
// not measured, and its error kept.
func TestRunPhaseCountsFailures(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := RunPhase("op", 1, time.Minute, func(_, i int) error {
		switch {
		case i == 1:
			return boom
		case i > 2:
			return errUsedUp
		}
		return nil
	})
	if r.Requests != 2 || r.Failures != 1 || r.FirstErr != "boom" || !r.Exhausted {
		t.Errorf("%+v; want 2 requests, 1 failure (boom), used up", r)
	}
}

// TestSend checks what Send returns: the body only when asked for, the
// connection reused either way, and a wrong status as an error that
// quotes the first 200 bytes of the answer.
func TestSend(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, long, http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(strings.Repeat("b", 10_000)))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	client := NewClient(1)

	tests := []struct {
		name     string
		path     string
		keepBody bool
		wantBody int
		wantErr  string
	}{
		{name: "body kept", path: "/", keepBody: true, wantBody: 10_000},
		{name: "body dropped", path: "/", wantBody: 0},
		{name: "wrong status", path: "/missing", wantErr: "GET /missing: 404, want 200: " + long[:200]},
	}
	for _, tt := range tests {
		_, body, err := Send(client, Request{Method: "GET", URL: srv.URL + tt.path, Want: http.StatusOK, KeepBody: tt.keepBody})
		switch {
		case tt.wantErr != "":
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case len(body) != tt.wantBody:
			t.Errorf("%s: %d bytes of body, want %d", tt.name, len(body), tt.wantBody)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for %d requests, want 1: the body was not read in full", n, len(tests))
	}
}
