package onboarding

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Webhook delivery (DESIGN §5.7). RunWebhooks claims due deliveries from
// the store with a lease, sends each through the WebhookTransport on a
// bounded pool of workers, and records every attempt, in batches of those
// that ended together (finishAttempts), with what becomes of the delivery:
// done (a 2xx, a 410, or every attempt used), or due again after the next
// pause of the retry schedule.

// DefaultRetrySchedule is the pause before each attempt: the first at once,
// then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure.
func DefaultRetrySchedule() []time.Duration {
	return []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
}

// Defaults of the delivery pool.
const (
	DefaultWebhookTimeout = 15 * time.Second
	DefaultWebhookWorkers = 16
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
	// maxRetryAfter caps the pause a Retry-After header can ask for.
	maxRetryAfter = 24 * time.Hour
	// retryJitter spreads retries by up to this fraction of their pause,
	// either way, so endpoints recovering from an outage are not hit by
	// every retry at the same instant.
	retryJitter = 0.1
)

// RunWebhooks delivers queued webhook deliveries until ctx ends; deliveries
// in flight then finish (each within the timeout) before it returns. Work
// left by a process that died is taken up when its leases lapse. It returns
// ctx's error, or an error at once when the Service has no transport.
//
// Every claim is a durable write, so a busy pool claims in batches: it
// waits until a quarter of its workers are free. An endpoint whose last
// attempt succeeded may use every worker; any other (its last attempt
// failed, or none finished yet) gets at most maxPerEndpoint, so one that is
// down, slow or answering errors never delays the others.
func (s *Service) RunWebhooks(ctx context.Context) error {
	if s.webhooks == nil {
		return errors.New("webhooks: no transport is configured")
	}
	owner, err := randomToken(s.random, 12)
	if err != nil {
		return err
	}
	// A claim outlives the attempt it covers (deliver ends it leaseMargin
	// before the lease) and the write that records it.
	lease := s.webhookTimeout + leaseMargin
	batch := max(1, s.webhookWorkers/4)
	// Attempts run to their end after ctx is cancelled, so that none is cut
	// off half sent; the transport bounds each by the timeout.
	sendCtx := context.WithoutCancel(ctx)
	type finished struct {
		endpoint string
		ok       bool
	}
	done := make(chan finished, s.webhookWorkers)
	// Attempts are recorded by one finisher, in batches: all those that
	// ended while the last batch committed (finishAttempts).
	attempts := make(chan attempted, s.webhookWorkers)
	finisherDone := make(chan struct{})
	go func() {
		defer close(finisherDone)
		s.finishAttempts(sendCtx, attempts, func(endpoint string, ok bool) { done <- finished{endpoint, ok} })
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
			return s.webhookWorkers
		}
		return maxPerEndpoint
	}
	running := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := webhooksRescan
		free := s.webhookWorkers - running
		if ctx.Err() == nil && free > 0 && (running == 0 || free >= batch) {
			s.giveWay(ctx, s.hooksYield)
			claimed, next, err := s.store.ClaimDeliveries(sendCtx, Claim{
				Owner: owner, Now: s.now().UTC(), Lease: lease, Limit: free,
				InFlight: inFlight, MaxInFlight: maxInFlight,
			})
			if err != nil {
				s.log.Error("webhooks: claim deliveries", "err", err)
				next = s.now().Add(time.Second)
			}
			for _, d := range claimed {
				running++
				inFlight[d.EndpointID]++
				go func() { attempts <- s.attempt(sendCtx, d) }()
			}
			if !next.IsZero() {
				wait = min(max(next.Sub(s.now()), 0), webhooksRescan)
				if wait == 0 && len(claimed) == 0 {
					wait = heldBackPause
				}
			}
		}
		if ctx.Err() != nil && running == 0 {
			return ctx.Err()
		}
		resetTimer(timer, wait)
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
		case <-s.webhooksWake:
		case <-timer.C:
		}
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}

// attempted is an attempt made, waiting to be recorded: the delivery as
// it was claimed, the result, and where the result disables the endpoint
// (judge) the reason, once the store has applied it.
type attempted struct {
	d        *Delivery
	r        DeliveryResult
	disabled *string
}

// attempt makes one attempt of d and judges it. The attempt's deadline is
// leaseMargin before d's lease ends, so that it is recorded while the
// claim still holds.
func (s *Service) attempt(ctx context.Context, d *Delivery) attempted {
	now := s.now().UTC()
	ep := d.Endpoint
	sendCtx, cancel := context.WithTimeout(ctx, d.LeaseUntil.Sub(now)-leaseMargin)
	resp, err := s.webhooks.Send(sendCtx, WebhookRequest{
		URL: ep.URL, EventID: d.EventID, Body: d.Event.Body, Keys: ep.SigningKeys(now), Timestamp: now,
	})
	cancel()
	a := attempted{d: d, disabled: new(string)}
	a.r = s.judge(d, resp, err, now, s.now().UTC(), a.disabled)
	return a
}

// maxFinishBatch bounds the attempts recorded in one commit.
const maxFinishBatch = 64

// finishAttempts records the attempts sent on in until it is closed, and
// reports each one recorded to finished (whether the endpoint took the
// delivery). It takes every attempt waiting, up to maxFinishBatch, into one
// commit (Store.FinishDeliveries): a busy pool pays one synced commit for
// several attempts, an idle one records each attempt as it ends. A batch
// that fails to commit is logged, and its deliveries are taken up again
// when their leases lapse.
func (s *Service) finishAttempts(ctx context.Context, in <-chan attempted, finished func(endpoint string, ok bool)) {
	batch := make([]FinishedDelivery, 0, maxFinishBatch)
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
		batch = batch[:0]
		for _, a := range waiting {
			batch = append(batch, FinishedDelivery{Delivery: a.d, Result: a.r})
		}
		lost, err := s.store.FinishDeliveries(ctx, batch)
		for i, a := range waiting {
			d, ep := a.d, a.d.Endpoint
			switch {
			case err != nil:
				s.log.Error("webhooks: record attempt", "event_id", d.EventID, "endpoint_id", d.EndpointID, "err", err)
			case lost[i]:
				s.log.Info("webhooks: the delivery left the queue during its attempt (endpoint disabled or removed, event redelivered, or the claim lapsed)",
					"event_id", d.EventID, "endpoint_id", d.EndpointID)
			case *a.disabled != "":
				s.log.Error("WEBHOOK ENDPOINT DISABLED: its queued deliveries were dropped; fix the receiver, then `onboard webhooks enable` it and redeliver or reconcile from the events API",
					"endpoint_id", ep.ID, "org", ep.OrgID, "url", logURL(ep.URL), "reason", *a.disabled)
			}
			finished(d.EndpointID, a.r.Attempt.Success)
		}
	}
}

// judge decides what an attempt means (DESIGN §5.7): a 2xx is delivered; a
// 410 disables the endpoint; anything else is retried on the schedule (a
// 429 or 503 not before its Retry-After) until every attempt is used, and
// DisableAfterExhausted events in a row used up disable the endpoint. When
// the result disables the endpoint, *disabled is set to the reason once
// the store has applied it. started is when the attempt began (its log
// line's time) and ended when it failed: a retry's pause runs from the
// failure, so a receiver that timed out gets its whole pause too.
func (s *Service) judge(d *Delivery, resp WebhookResponse, sendErr error, started, ended time.Time, disabled *string) DeliveryResult {
	attempt := d.Attempts + 1
	line := DeliveryAttempt{
		EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: d.Endpoint.OrgID,
		Attempt: attempt, At: started, StatusCode: resp.StatusCode, Latency: resp.Latency, Response: string(resp.Body),
	}
	disable := func(reason string) func(*Endpoint) {
		return func(ep *Endpoint) {
			*disabled = ""
			if ep.Enabled {
				ep.Enabled, ep.DisabledReason = false, reason
				*disabled = reason
			}
		}
	}
	switch {
	case sendErr == nil && resp.StatusCode >= 200 && resp.StatusCode < 300:
		line.Success = true
		// The count is reset as it stands when the result is recorded:
		// events given up meanwhile may have raised it since the claim.
		return DeliveryResult{Attempt: line, Done: true, Endpoint: func(ep *Endpoint) { ep.Exhausted = 0 }}
	case sendErr == nil && resp.StatusCode == http.StatusGone:
		line.Error = "410 Gone: the endpoint is disabled"
		return DeliveryResult{Attempt: line, Done: true, Endpoint: disable(DisabledGone)}
	case sendErr != nil:
		line.Error = sendErr.Error()
	default:
		line.Error = fmt.Sprintf("answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if attempt >= len(s.retrySchedule) {
		line.Error += fmt.Sprintf("; gave up after %d attempts", attempt)
		giveUp := disable(fmt.Sprintf(disabledExhaustedFm, DisableAfterExhausted))
		return DeliveryResult{Attempt: line, Done: true, Endpoint: func(ep *Endpoint) {
			*disabled = ""
			if !ep.Enabled {
				// Disabled meanwhile, by another event's result in flight
				// beside this one or by the operator: the count stays what
				// it was when the endpoint was disabled.
				return
			}
			ep.Exhausted++
			if ep.Exhausted >= DisableAfterExhausted {
				giveUp(ep)
			}
		}}
	}
	pause := jitter(s.retrySchedule[attempt])
	if (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) && resp.RetryAfter > pause {
		pause = min(resp.RetryAfter, maxRetryAfter)
	}
	return DeliveryResult{Attempt: line, RetryAt: ended.Add(pause)}
}

// jitter moves d by a random amount of up to retryJitter of it, either way.
func jitter(d time.Duration) time.Duration {
	spread := int64(float64(d) * retryJitter)
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(2*spread+1)-spread)
}
