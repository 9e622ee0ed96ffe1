package registry

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limit is a registry's request allowance for one credential: at most
// Requests requests in any Per-long window.
type Limit struct {
	Requests int
	Per      time.Duration
}

// Default allowances in live mode. Companies House documents 600 requests
// per 5 minutes per key; the CRO publishes none, so onboard stays at the
// 60 a minute that careful clients use.
var (
	DefaultCompaniesHouseLimit = Limit{Requests: 600, Per: 5 * time.Minute}
	DefaultCROLimit            = Limit{Requests: 60, Per: time.Minute}
)

// errThrottled is returned by limiter.wait when the next free slot is later
// than the caller's deadline: the request fails at once rather than waiting
// for nothing.
var errThrottled = errors.New("rate limit: no request slot before the deadline")

// limiter keeps one registry credential within its Limit: it remembers the
// send times of the last Requests requests (a sliding window, so no window
// ever holds more than Requests) and, after the registry answers 429, holds
// every request until the registry's reset time. It is shared by every
// request made with the credential, on the request path and in the
// background alike.
type limiter struct {
	limit Limit
	now   func() time.Time

	mu      sync.Mutex
	sent    []time.Time // ring of the last limit.Requests send times
	next    int         // ring index of the oldest entry once full
	blocked time.Time   // no request before this time (after a 429)
}

// newLimiter returns a limiter for l, or nil (no limit) when l is zero.
func newLimiter(l Limit, now func() time.Time) *limiter {
	if l.Requests <= 0 || l.Per <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &limiter{limit: l, now: now, sent: make([]time.Time, 0, l.Requests)}
}

// backgroundShare is the part of a window's requests background work may
// use; the rest stays free for requests someone is waiting on.
const backgroundShare = 0.8

// wait blocks until a request may be sent and reserves its slot. Background
// requests may only use backgroundShare of the window. It returns
// errThrottled at once when the slot is later than ctx's deadline, and
// ctx's error if ctx ends while waiting. A nil limiter never waits.
func (l *limiter) wait(ctx context.Context, background bool) error {
	if l == nil {
		return nil
	}
	share := l.limit.Requests
	if background {
		share = max(1, int(float64(share)*backgroundShare))
	}
	for {
		l.mu.Lock()
		now := l.now()
		at := l.blocked
		// Fewer than share requests may have gone out in the last window:
		// the share-th most recent one must be a window old.
		if len(l.sent) >= share {
			var i int
			if len(l.sent) < l.limit.Requests {
				i = len(l.sent) - share
			} else {
				i = (l.next - share + l.limit.Requests) % l.limit.Requests
			}
			if free := l.sent[i].Add(l.limit.Per); free.After(at) {
				at = free
			}
		}
		if !at.After(now) {
			if len(l.sent) < l.limit.Requests {
				l.sent = append(l.sent, now)
			} else {
				l.sent[l.next] = now
				l.next = (l.next + 1) % l.limit.Requests
			}
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		if deadline, ok := ctx.Deadline(); ok && deadline.Before(at) {
			return errThrottled
		}
		t := time.NewTimer(at.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// throttled records a 429 (or the CRO's Cloudflare 1015): no request goes
// out before the X-Ratelimit-Reset time the registry gave, or for a whole
// window when it gave none. A reset further ahead than one window is clamped
// to the window; one already past (clock skew) still pauses for a second.
func (l *limiter) throttled(h http.Header) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	until := now.Add(l.limit.Per)
	if secs, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
		switch reset := time.Unix(secs, 0); {
		case !reset.After(now):
			until = now.Add(time.Second)
		case reset.Before(until):
			until = reset
		}
	}
	if until.After(l.blocked) {
		l.blocked = until
	}
}
