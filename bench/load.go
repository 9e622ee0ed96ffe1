package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// errUsedUp ends a worker of an operation that has no prepared
// application left; it is not a failure.
var errUsedUp = errors.New("no prepared application left")

// NewClient is the one HTTP client of a bench run: keep-alive
// connections, as many as there are workers, no proxy (loopback only) and
// no redirect followed, so that a form post is one request.
func NewClient(concurrency int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        4 * concurrency,
			MaxIdleConnsPerHost: concurrency,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Request is one request of a bench run and the status it must get.
type Request struct {
	Method, URL string
	Body        []byte
	ContentType string
	Header      http.Header
	Want        int
	// KeepBody asks Send for the answer's body. Without it the body is
	// read and dropped, as a load generator such as wrk does, so that the
	// client's garbage does not grow with the size of the answer.
	KeepBody bool
}

// Send makes req with client and returns the response, whose body it has
// read in full (so the connection is reused) and returns when
// req.KeepBody; an answer other than req.Want is an error, which quotes
// the start of its body.
func Send(client *http.Client, req Request) (*http.Response, []byte, error) {
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	r, err := http.NewRequest(req.Method, req.URL, body)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range req.Header {
		r.Header[k] = v
	}
	if req.ContentType != "" {
		r.Header.Set("Content-Type", req.ContentType)
	}
	resp, err := client.Do(r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != req.Want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, nil, fmt.Errorf("%s %s: %d, want %d: %s", req.Method, r.URL.Path, resp.StatusCode, req.Want, b)
	}
	if !req.KeepBody {
		_, err := io.Copy(io.Discard, resp.Body)
		return resp, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	return resp, b, nil
}

// RunPhase runs do on concurrency workers, each in a loop, until d has
// passed (or do answers errUsedUp), and measures the requests. do gets
// the worker's number and the iteration's.
func RunPhase(name string, concurrency int, d time.Duration, do func(w, i int) error) Result {
	return runPhaseUntil(name, concurrency, d, 0, nil, do)
}

// phasePoll is how often runPhaseUntil asks, past the phase's duration,
// whether what it waits for has happened.
const phasePoll = 10 * time.Millisecond

// runPhaseUntil is RunPhase that, once d has passed, goes on until ready
// answers true or d+limit has passed, whichever comes first: a phase
// measured while work in the background runs lasts until that work has
// been seen running. ready is called from one goroutine, every phasePoll,
// and only after d; nil is always ready.
func runPhaseUntil(name string, concurrency int, d, limit time.Duration, ready func() bool, do func(w, i int) error) Result {
	latencies := make([][]time.Duration, concurrency)
	failures := make([]int, concurrency)
	var firstErr error
	var errOnce sync.Once
	var usedUp, stop, extended atomic.Bool
	start := time.Now()
	finished := make(chan struct{})
	timed := make(chan struct{})
	go func() {
		defer close(timed)
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case <-finished:
				return
			case <-t.C:
			}
			if ready == nil || ready() {
				stop.Store(true)
				return
			}
			// Not ready: the phase runs on, unless the limit has passed
			// (which a timer that fired late may find at its first look).
			extended.Store(true)
			if time.Since(start) >= d+limit {
				stop.Store(true)
				return
			}
			t.Reset(phasePoll)
		}
	}()
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				t0 := time.Now()
				err := do(w, i)
				took := time.Since(t0)
				switch {
				case errors.Is(err, errUsedUp):
					usedUp.Store(true)
					return
				case err != nil:
					failures[w]++
					errOnce.Do(func() { firstErr = err })
				default:
					latencies[w] = append(latencies[w], took)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(finished)
	<-timed
	var all []time.Duration
	total := 0
	for w := range concurrency {
		all = append(all, latencies[w]...)
		total += failures[w]
	}
	r := Summarize(name, all, total, elapsed, firstErr)
	r.Exhausted = usedUp.Load()
	r.Extended = extended.Load()
	return r
}

// Parallel runs do(i) for every i below n on concurrency workers and
// returns the first error, after which the workers stop taking new i.
func Parallel(n, concurrency int, do func(i int) error) error {
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(concurrency, n) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					failed.Store(true)
					errOnce.Do(func() { firstErr = err })
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
