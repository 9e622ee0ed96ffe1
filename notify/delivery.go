package notify

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"onboard/onboarding"
)

// Webhook delivery (docs/webhooks.md). RunWebhooks claims due deliveries
// through the Service with a lease, sends each through the Service's
// WebhookTransport on a bounded pool of workers, and has every attempt
// recorded, in batches of those that ended together (finishAttempts): the
// Service decides what becomes of the delivery (onboarding's retry policy).

// DeliveryQueue is the Service's side of webhook delivery, as RunWebhooks
// drives it; *onboarding.Service implements it. Its methods are safe for
// concurrent use.
type DeliveryQueue interface {
	// WebhookPool returns the pool's transport, timeout, workers and a new
	// claim owner; an error when no transport is configured.
	WebhookPool() (onboarding.WebhookPool, error)
	// Now is the clock leases and attempts are timed by.
	Now() time.Time
	// WebhooksWake receives a value when new work may be queued.
	WebhooksWake() <-chan struct{}
	// YieldToRequests returns once the API is idle, after a bounded wait,
	// or when ctx ends.
	YieldToRequests(ctx context.Context)
	// ClaimDeliveries leases due deliveries (c.Now is the queue's own);
	// next is when the earliest delivery not claimed is due, zero when
	// none is queued. A failure is logged by the queue and claims nothing.
	ClaimDeliveries(ctx context.Context, c onboarding.Claim) (claimed []*onboarding.Delivery, next time.Time)
	// AttemptResult decides what an attempt's outcome means for the
	// delivery and its endpoint; *disabled is set, once the result is
	// recorded, to the reason it disabled the endpoint.
	AttemptResult(d *onboarding.Delivery, o onboarding.AttemptOutcome, started, ended time.Time, disabled *string) onboarding.DeliveryResult
	// FinishDeliveries records a batch of attempts in one commit, and logs
	// what became of them; disabled[i] is batch[i]'s from AttemptResult.
	FinishDeliveries(ctx context.Context, batch []onboarding.FinishedDelivery, disabled []*string)
}

var _ DeliveryQueue = (*onboarding.Service)(nil)

const (
	// maxPerEndpoint bounds the attempts in flight to an endpoint not known
	// to be healthy, so a slow or dead endpoint holds at most this many
	// workers.
	maxPerEndpoint = 4
	// leaseMargin is how much longer a claim's lease runs than the attempt
	// it covers: the time left to record the attempt while the claim holds.
	leaseMargin = 10 * time.Second
	// webhooksRescan is the longest RunWebhooks waits without looking at
	// the queue (another instance may have queued work).
	webhooksRescan = time.Minute
	// heldBackPause is how long RunWebhooks waits, at most, when a claim
	// took nothing yet reports work due now (it met index entries gone
	// stale), so that it does not spin. Deliveries held back by their
	// endpoint's in-flight limit are not reported: an attempt that finishes
	// wakes the loop.
	heldBackPause = 100 * time.Millisecond
	// maxFinishBatch bounds the attempts recorded in one commit.
	maxFinishBatch = 64
)

// RunWebhooks delivers q's queued webhook deliveries until ctx ends;
// deliveries in flight then finish (each within the timeout) before it
// returns. Work left by a process that died is taken up when its leases
// lapse. It returns ctx's error, or an error at once when q has no
// transport.
//
// Every claim is a durable write, so a busy pool claims in batches: it
// waits until a quarter of its workers are free. An endpoint whose last
// attempt succeeded may use every worker; any other (its last attempt
// failed, or none finished yet) gets at most maxPerEndpoint, so one that is
// down, slow or answering errors never delays the others.
func RunWebhooks(ctx context.Context, q DeliveryQueue) error {
	pool, err := q.WebhookPool()
	if err != nil {
		return err
	}
	workers := pool.Workers
	// A claim outlives the attempt it covers (attempt ends it leaseMargin
	// before the lease) and the write that records it.
	lease := pool.Timeout + leaseMargin
	batch := max(1, workers/4)
	// Attempts run to their end after ctx is cancelled, so that none is cut
	// off half sent; the transport bounds each by the timeout.
	sendCtx := context.WithoutCancel(ctx)
	type finished struct {
		endpoint string
		ok       bool
	}
	done := make(chan finished, workers)
	// Attempts are recorded by one finisher, in batches: all those that
	// ended while the last batch committed (finishAttempts).
	attempts := make(chan attempted, workers)
	finisherDone := make(chan struct{})
	go func() {
		defer close(finisherDone)
		finishAttempts(sendCtx, q, attempts, func(endpoint string, ok bool) { done <- finished{endpoint, ok} })
	}()
	defer func() {
		// Every attempt started has been recorded (its done was received).
		close(attempts)
		<-finisherDone
	}()
	inFlight := make(map[string]int)
	healthy := make(map[string]bool)
	maxInFlight := func(endpoint string) int {
		if healthy[endpoint] {
			return workers
		}
		return maxPerEndpoint
	}
	running := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := webhooksRescan
		free := workers - running
		if ctx.Err() == nil && free > 0 && (running == 0 || free >= batch) {
			q.YieldToRequests(ctx)
			claimed, next := q.ClaimDeliveries(sendCtx, onboarding.Claim{
				Owner: pool.Owner, Lease: lease, Limit: free,
				InFlight: inFlight, MaxInFlight: maxInFlight,
			})
			for _, d := range claimed {
				running++
				inFlight[d.EndpointID]++
				go func() { attempts <- attempt(sendCtx, q, pool.Transport, d) }()
			}
			if !next.IsZero() {
				wait = min(max(next.Sub(q.Now()), 0), webhooksRescan)
				if wait == 0 && len(claimed) == 0 {
					wait = heldBackPause
				}
			}
		}
		if ctx.Err() != nil && running == 0 {
			return ctx.Err()
		}
		timer.Stop()
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			if running > 0 {
				<-done
				running--
			}
		case f := <-done:
			running--
			if inFlight[f.endpoint]--; inFlight[f.endpoint] == 0 {
				delete(inFlight, f.endpoint)
			}
			if f.ok {
				healthy[f.endpoint] = true
			} else {
				delete(healthy, f.endpoint)
			}
		case <-q.WebhooksWake():
		case <-timer.C:
		}
	}
}

// attempted is an attempt made, waiting to be recorded: the delivery as
// it was claimed, the result, and where the result disables the endpoint
// the reason, once the store has applied it.
type attempted struct {
	d        *onboarding.Delivery
	r        onboarding.DeliveryResult
	disabled *string
}

// attempt makes one attempt of d and judges it. The attempt's deadline is
// leaseMargin before d's lease ends, so that it is recorded while the
// claim still holds.
func attempt(ctx context.Context, q DeliveryQueue, tr onboarding.WebhookTransport, d *onboarding.Delivery) attempted {
	now := q.Now().UTC()
	ep := d.Endpoint
	sendCtx, cancel := context.WithTimeout(ctx, d.LeaseUntil.Sub(now)-leaseMargin)
	resp, err := tr.Send(sendCtx, onboarding.WebhookRequest{
		URL: ep.URL, EventID: d.EventID, Body: d.Event.Body, Keys: ep.SigningKeys(now), Timestamp: now,
	})
	cancel()
	a := attempted{d: d, disabled: new(string)}
	a.r = judge(q, d, resp, err, now, q.Now().UTC(), a.disabled)
	return a
}

// finishAttempts records the attempts sent on in until it is closed, and
// reports each one recorded to finished (whether the endpoint took the
// delivery). It takes every attempt waiting, up to maxFinishBatch, into one
// commit: a busy pool pays one synced commit for several attempts, an idle
// one records each attempt as it ends.
func finishAttempts(ctx context.Context, q DeliveryQueue, in <-chan attempted, finished func(endpoint string, ok bool)) {
	batch := make([]onboarding.FinishedDelivery, 0, maxFinishBatch)
	disabled := make([]*string, 0, maxFinishBatch)
	var waiting []attempted
	for a := range in {
		waiting = append(waiting[:0], a)
	more:
		for len(waiting) < maxFinishBatch {
			select {
			case a, ok := <-in:
				if !ok {
					break more
				}
				waiting = append(waiting, a)
			default:
				break more
			}
		}
		batch, disabled = batch[:0], disabled[:0]
		for _, a := range waiting {
			batch = append(batch, onboarding.FinishedDelivery{Delivery: a.d, Result: a.r})
			disabled = append(disabled, a.disabled)
		}
		q.FinishDeliveries(ctx, batch, disabled)
		for _, a := range waiting {
			finished(a.d.EndpointID, a.r.Attempt.Success)
		}
	}
}

// judge reads the receiver's answer to an attempt of d (a 2xx delivers, a
// 410 says the endpoint is gone, a 429 or 503 may ask for a longer pause
// with Retry-After; anything else, or no answer, failed) and has q decide
// what it means.
func judge(q DeliveryQueue, d *onboarding.Delivery, resp onboarding.WebhookResponse, sendErr error, started, ended time.Time, disabled *string) onboarding.DeliveryResult {
	o := onboarding.AttemptOutcome{Response: resp}
	switch {
	case sendErr == nil && resp.StatusCode >= 200 && resp.StatusCode < 300:
		o.Delivered = true
	case sendErr == nil && resp.StatusCode == http.StatusGone:
		o.Gone, o.Error = true, "410 Gone: the endpoint is disabled"
	case sendErr != nil:
		o.Error = sendErr.Error()
	default:
		o.Error = fmt.Sprintf("answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		o.RetryAfter = resp.RetryAfter
	}
	return q.AttemptResult(d, o, started, ended, disabled)
}
