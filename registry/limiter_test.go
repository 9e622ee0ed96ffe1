package registry

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// offsetClock runs at real speed from base: it lets a test put "now" at a
// chosen fraction of a second, so that an X-Ratelimit-Reset (whole
// seconds) is a chosen, short time ahead.
func offsetClock(base time.Time) func() time.Time {
	start := time.Now()
	return func() time.Time { return base.Add(time.Since(start)) }
}

func resetHeader(t time.Time) http.Header {
	return http.Header{"X-Ratelimit-Reset": {strconv.FormatInt(t.Unix(), 10)}}
}

func TestNewLimiterZero(t *testing.T) {
	t.Parallel()
	for _, l := range []Limit{{}, {Requests: 0, Per: time.Second}, {Requests: 5}, {Requests: -1, Per: time.Second}, {Requests: 5, Per: -time.Second}} {
		if got := newLimiter(l, nil); got != nil {
			t.Errorf("newLimiter(%+v) = %+v, want nil (no limit)", l, got)
		}
	}
	if l := newLimiter(Limit{Requests: 1, Per: time.Second}, nil); l == nil || l.now == nil {
		t.Errorf("newLimiter without a clock = %+v; want a limiter on time.Now", l)
	}
}

func TestLimiterNil(t *testing.T) {
	t.Parallel()
	var l *limiter
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 1000 {
		if err := l.wait(ctx, false); err != nil {
			t.Fatalf("nil limiter wait = %v, want nil", err)
		}
	}
	l.throttled(http.Header{"X-Ratelimit-Reset": {"99999999999"}}) // no panic
	if err := l.wait(ctx, false); err != nil {
		t.Errorf("nil limiter wait after a 429 = %v, want nil", err)
	}
}

func TestLimiterBurstThenWait(t *testing.T) {
	t.Parallel()
	const per = 300 * time.Millisecond
	l := newLimiter(Limit{Requests: 3, Per: per}, nil)
	ctx := context.Background()
	start := time.Now()
	for i := range 3 {
		if err := l.wait(ctx, false); err != nil {
			t.Fatalf("wait %d: %v", i+1, err)
		}
	}
	if elapsed := time.Since(start); elapsed > 50*time.Millisecond {
		t.Errorf("the first 3 requests took %v; want them at once", elapsed)
	}
	if err := l.wait(ctx, false); err != nil {
		t.Fatalf("wait 4: %v", err)
	}
	if elapsed := time.Since(start); elapsed < per || elapsed > per+250*time.Millisecond {
		t.Errorf("the 4th request went after %v; want about %v", elapsed, per)
	}
}

// TestLimiterWindowSlides checks the sliding window with a fake clock: a
// slot frees exactly Per after the request that took it.
func TestLimiterWindowSlides(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Now()}
	l := newLimiter(Limit{Requests: 2, Per: 100 * time.Millisecond}, clock.Now)
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	steps := []struct {
		advance time.Duration
		want    error
	}{
		{0, nil},                              // t=0
		{40 * time.Millisecond, nil},          // t=40: full
		{0, errThrottled},                     // t=40: the next slot is at 100
		{59 * time.Millisecond, errThrottled}, // t=99
		{1 * time.Millisecond, nil},           // t=100: the t=0 slot is free
		{0, errThrottled},                     // t=100: the next slot is at 140
		{40 * time.Millisecond, nil},          // t=140
		{0, errThrottled},                     // t=140: the next slot is at 200
		{1000 * time.Millisecond, nil},        // t=1140
		{0, nil},                              // t=1140
		{0, errThrottled},                     // t=1140
		{100 * time.Millisecond, nil},         // t=1240
		{0, nil},                              // t=1240
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if err := l.wait(short(), false); !errors.Is(err, s.want) {
			t.Errorf("step %d: wait = %v, want %v", i, err, s.want)
		}
	}
}

func TestLimiterDeadline(t *testing.T) {
	t.Parallel()
	l := newLimiter(Limit{Requests: 3, Per: 300 * time.Millisecond}, nil)
	for range 3 {
		if err := l.wait(context.Background(), false); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// errThrottled, not the context's error, says that wait gave up at
	// once instead of waiting for the deadline.
	if err := l.wait(ctx, false); !errors.Is(err, errThrottled) {
		t.Errorf("wait with a deadline before the free slot = %v, want errThrottled", err)
	}
	l.mu.Lock()
	sent := len(l.sent)
	l.mu.Unlock()
	if sent != 3 {
		t.Errorf("a refused wait left %d sends recorded, want 3", sent)
	}

	// After a 429, a deadline before the reset fails at once too, even
	// with slots free.
	l2 := newLimiter(Limit{Requests: 100, Per: time.Minute}, nil)
	l2.throttled(http.Header{})
	if err := l2.wait(ctx, false); !errors.Is(err, errThrottled) {
		t.Errorf("wait after a 429 = %v, want errThrottled", err)
	}
}

func TestLimiterCancel(t *testing.T) {
	t.Parallel()
	l := newLimiter(Limit{Requests: 1, Per: 10 * time.Second}, nil)
	if err := l.wait(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, cancel)
	defer timer.Stop()
	// The wait has ten seconds to go: only the cancel can end it with
	// context.Canceled, so no clock needs reading here.
	if err := l.wait(ctx, false); !errors.Is(err, context.Canceled) {
		t.Errorf("wait cancelled while waiting = %v, want context.Canceled", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sent) != 1 {
		t.Errorf("a cancelled wait left %d sends recorded, want 1", len(l.sent))
	}
}

// TestLimiterThrottled checks when throttled lets requests go again, with
// a fake clock: no time passes.
func TestLimiterThrottled(t *testing.T) {
	t.Parallel()
	// A whole second, as X-Ratelimit-Reset counts, close to the real time
	// so that context deadlines compare with it.
	now := time.Now().Truncate(time.Second)
	const per = 5 * time.Second
	tests := []struct {
		name   string
		header http.Header
		want   time.Time
	}{
		{"reset ahead", resetHeader(now.Add(2 * time.Second)), now.Add(2 * time.Second)},
		{"reset just before the window ends", resetHeader(now.Add(4 * time.Second)), now.Add(4 * time.Second)},
		{"reset past: one second", resetHeader(now.Add(-10 * time.Second)), now.Add(time.Second)},
		{"reset now: one second", resetHeader(now), now.Add(time.Second)},
		{"no reset: a whole window", http.Header{}, now.Add(per)},
		{"unparsable reset: a whole window", http.Header{"X-Ratelimit-Reset": {"soon"}}, now.Add(per)},
		{"reset as a date: a whole window", http.Header{"X-Ratelimit-Reset": {now.Add(time.Second).Format(http.TimeFormat)}}, now.Add(per)},
		{"far-future reset: clamped to the window", resetHeader(now.Add(time.Hour)), now.Add(per)},
		{"reset exactly a window ahead", resetHeader(now.Add(per)), now.Add(per)},
	}
	for _, tt := range tests {
		clock := &fakeClock{now: now}
		l := newLimiter(Limit{Requests: 10, Per: per}, clock.Now)
		l.throttled(tt.header)
		if !l.blocked.Equal(tt.want) {
			t.Errorf("%s: blocked until %v, want %v", tt.name, l.blocked.Sub(now), tt.want.Sub(now))
		}
	}

	// A later 429 never shortens the pause.
	clock := &fakeClock{now: now}
	l := newLimiter(Limit{Requests: 10, Per: per}, clock.Now)
	l.throttled(http.Header{})
	l.throttled(resetHeader(now.Add(2 * time.Second)))
	if want := now.Add(per); !l.blocked.Equal(want) {
		t.Errorf("after a window-long and a 2s pause, blocked for %v, want %v", l.blocked.Sub(now), per)
	}
	clock.Advance(time.Second)
	l.throttled(resetHeader(now.Add(4 * time.Second)))
	if want := now.Add(per); !l.blocked.Equal(want) {
		t.Errorf("a shorter later pause moved blocked to %v, want %v", l.blocked.Sub(now), per)
	}
	// Requests wait for the pause whatever the window allows.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.wait(ctx, false); !errors.Is(err, errThrottled) {
		t.Errorf("wait during the pause = %v, want errThrottled", err)
	}
}

// TestLimiterThrottledUntilReset waits for a reset 300ms ahead.
func TestLimiterThrottledUntilReset(t *testing.T) {
	t.Parallel()
	base := time.Unix(1767225600, 700*int64(time.Millisecond)) // x.7s: the next whole second is 300ms ahead
	start := time.Now()
	l := newLimiter(Limit{Requests: 100, Per: time.Minute}, offsetClock(base))
	l.throttled(http.Header{"X-Ratelimit-Reset": {"1767225601"}})
	if err := l.wait(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond || elapsed > 550*time.Millisecond {
		t.Errorf("wait after a 429 resetting in 300ms returned after %v", elapsed)
	}
}

// TestLimiterThrottledPastReset: a reset already past (clock skew) pauses
// for a second; a caller that cannot wait that long fails at once.
func TestLimiterThrottledPastReset(t *testing.T) {
	t.Parallel()
	l := newLimiter(Limit{Requests: 100, Per: time.Minute}, nil)
	l.throttled(resetHeader(time.Now().Add(-time.Hour)))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := l.wait(ctx, false); !errors.Is(err, errThrottled) {
		t.Errorf("wait(500ms) after a past reset = %v, want errThrottled", err)
	}
	if elapsed := time.Since(start); elapsed > 20*time.Millisecond {
		t.Errorf("wait gave up after %v; want at once", elapsed)
	}
	if d := time.Until(l.blocked); d < 900*time.Millisecond || d > time.Second {
		t.Errorf("blocked for %v more, want about a second", d)
	}
}

// TestLimiterThrottledWindow: without a reset, or with one far ahead, the
// pause is one window (200ms here).
func TestLimiterThrottledWindow(t *testing.T) {
	t.Parallel()
	const per = 200 * time.Millisecond
	for name, h := range map[string]http.Header{
		"no reset":  {},
		"far reset": resetHeader(time.Now().Add(time.Hour)),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := newLimiter(Limit{Requests: 100, Per: per}, nil)
			start := time.Now()
			l.throttled(h)
			if err := l.wait(context.Background(), false); err != nil {
				t.Fatal(err)
			}
			if elapsed := time.Since(start); elapsed < per || elapsed > per+250*time.Millisecond {
				t.Errorf("wait after a 429 returned after %v, want about %v", elapsed, per)
			}
		})
	}
}

// TestLimiterConcurrent runs 20 requests through a limit of 5 per 200ms
// (run it with -race).
func TestLimiterConcurrent(t *testing.T) {
	t.Parallel()
	const (
		n     = 20
		limit = 5
		per   = 200 * time.Millisecond
	)
	l := newLimiter(Limit{Requests: limit, Per: per}, nil)
	var (
		mu    sync.Mutex
		times []time.Duration
		wg    sync.WaitGroup
	)
	start := time.Now()
	for range n {
		wg.Go(func() {
			if err := l.wait(context.Background(), false); err != nil {
				t.Error(err)
				return
			}
			at := time.Since(start)
			mu.Lock()
			times = append(times, at)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(times) != n {
		t.Fatalf("%d of %d requests went", len(times), n)
	}
	slices.Sort(times)
	// Each time is taken after its slot, never before: in the first k
	// windows at most k×limit requests can have gone.
	for k := 1; k <= n/limit; k++ {
		if count := countBefore(times, time.Duration(k)*per); count > k*limit {
			t.Errorf("%d requests went in the first %v, want at most %d", count, time.Duration(k)*per, k*limit)
		}
	}
	// And no window holds more than limit (allowing for the scheduling
	// delay between a slot and the moment its goroutine reads the clock).
	const slack = 25 * time.Millisecond
	for i := 0; i+limit < len(times); i++ {
		if gap := times[i+limit] - times[i]; gap < per-slack {
			t.Errorf("requests %d and %d went %v apart: %d requests in less than %v", i, i+limit, gap, limit+1, per)
		}
	}
	if last := times[n-1]; last < time.Duration(n/limit-1)*per {
		t.Errorf("all %d requests went within %v, want at least %v", n, last, time.Duration(n/limit-1)*per)
	}
}

func countBefore(sorted []time.Duration, d time.Duration) int {
	i, _ := slices.BinarySearch(sorted, d)
	return i
}

// TestLimiterBackgroundShare checks that background work stops at 80% of the
// window while requests someone waits on still go, and that background work
// resumes as the window slides.
func TestLimiterBackgroundShare(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	l := newLimiter(Limit{Requests: 10, Per: time.Minute}, clock)
	// The deadline is before any freed slot: wait answers at once.
	noWait, cancel := context.WithDeadline(context.Background(), now.Add(time.Second))
	defer cancel()
	for i := range 8 {
		if err := l.wait(noWait, true); err != nil {
			t.Fatalf("background request %d: %v", i+1, err)
		}
		advance(time.Second)
	}
	if err := l.wait(noWait, true); !errors.Is(err, errThrottled) {
		t.Errorf("9th background request in the window = %v, want errThrottled", err)
	}
	for i := range 2 {
		if err := l.wait(noWait, false); err != nil {
			t.Errorf("request %d above the background share: %v", i+1, err)
		}
	}
	if err := l.wait(noWait, false); !errors.Is(err, errThrottled) {
		t.Errorf("11th request in the window = %v, want errThrottled", err)
	}
	// 53 s after the first background request, it leaves the window
	// (a minute after it was sent), and with it one background slot.
	advance(53 * time.Second)
	// (Deadlines here are on the fake clock: they only decide whether to
	// wait, and no case waits.)
	later, cancel2 := context.WithDeadline(context.Background(), clock().Add(500*time.Millisecond))
	defer cancel2()
	if err := l.wait(later, true); !errors.Is(err, errThrottled) {
		t.Errorf("background request with 10 in the window = %v, want errThrottled", err)
	}
	advance(2 * time.Second) // the first two requests have left the window
	if err := l.wait(later, true); err != nil {
		t.Errorf("background request after the window slid: %v", err)
	}
}
