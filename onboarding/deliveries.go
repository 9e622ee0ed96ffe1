package onboarding

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The domain side of webhook delivery (docs/webhooks.md). The delivery pool
// (notify.RunWebhooks) claims due deliveries through the Service, sends them,
// and hands each answer back as an AttemptOutcome; the Service decides what
// the attempt means for the delivery and its endpoint (AttemptResult: the
// retry policy) and records it (FinishDeliveries).

// DefaultRetrySchedule is the pause before each attempt: the first at once,
// then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure.
func DefaultRetrySchedule() []time.Duration {
	return []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
}

// Defaults of the delivery pool.
const (
	DefaultWebhookTimeout = 15 * time.Second
	DefaultWebhookWorkers = 16
)

const (
	// MaxRetryAfter caps the pause a receiver's Retry-After can ask for.
	MaxRetryAfter = 24 * time.Hour
	// RetryJitter spreads retries by up to this fraction of their pause,
	// either way, so endpoints recovering from an outage are not hit by
	// every retry at the same instant.
	RetryJitter = 0.1
)

// WebhookPool is how the Service was configured to deliver webhooks: what
// the delivery pool needs to run.
type WebhookPool struct {
	Transport WebhookTransport
	Timeout   time.Duration // bounds one attempt
	Workers   int           // bounds the attempts in flight
	// Owner names this run of the pool in the claims it makes: a fresh
	// random token for each call of WebhookPool.
	Owner string
}

// WebhookPool returns the delivery pool's configuration, with a new claim
// owner; an error when the Service has no transport.
func (s *Service) WebhookPool() (WebhookPool, error) {
	if s.webhooks == nil {
		return WebhookPool{}, errors.New("webhooks: no transport is configured")
	}
	owner, err := randomToken(s.random, 12)
	if err != nil {
		return WebhookPool{}, err
	}
	return WebhookPool{Transport: s.webhooks, Timeout: s.webhookTimeout, Workers: s.webhookWorkers, Owner: owner}, nil
}

// Now is the Service's clock.
func (s *Service) Now() time.Time { return s.now() }

// WebhooksWake receives a value when events were committed or an endpoint
// changed, so that a waiting delivery pool looks at the queue again.
func (s *Service) WebhooksWake() <-chan struct{} { return s.webhooksWake }

// YieldToRequests returns once the API is idle, or after the webhook
// deliverer's yield (Options.WebhooksYield) or when ctx ends, whichever
// comes first: the delivery pool calls it before each claim.
func (s *Service) YieldToRequests(ctx context.Context) { s.giveWay(ctx, s.hooksYield) }

// ClaimDeliveries leases due deliveries as c asks (Store.ClaimDeliveries),
// at the Service's time. A failure is logged and claims nothing, with the
// queue to be looked at again in a second; a full disk is not logged
// here, the store logs it once.
func (s *Service) ClaimDeliveries(ctx context.Context, c Claim) (claimed []*Delivery, next time.Time) {
	c.Now = s.now().UTC()
	claimed, next, err := s.store.ClaimDeliveries(ctx, c)
	if err != nil {
		if !errors.Is(err, ErrInsufficientStorage) {
			s.log.Error("webhooks: claim deliveries", "err", err)
		}
		next = s.now().Add(time.Second)
	}
	return claimed, next
}

// AttemptOutcome is what one delivery attempt came to, as the delivery
// pool read the receiver's answer.
type AttemptOutcome struct {
	Response WebhookResponse // the answer; zero when none came
	// Delivered: the receiver took the event.
	Delivered bool
	// Gone: the receiver said the endpoint no longer exists, which
	// disables it.
	Gone bool
	// Error says why the attempt failed, for the delivery log; empty when
	// Delivered.
	Error string
	// RetryAfter is the least pause the receiver asked for before the
	// next attempt; zero when it asked none.
	RetryAfter time.Duration
}

// AttemptResult decides what an attempt of d means: delivered; the endpoint
// gone, which disables it; anything else is retried on the schedule (not
// before the receiver's RetryAfter) until every attempt is used, and
// DisableAfterExhausted events in a row used up disable the endpoint. When
// the result disables the endpoint, *disabled is set to the reason once the
// store has applied it. started is when the attempt began (its log line's
// time) and ended when it failed: a retry's pause runs from the failure, so
// a receiver that timed out gets its whole pause too.
func (s *Service) AttemptResult(d *Delivery, o AttemptOutcome, started, ended time.Time, disabled *string) DeliveryResult {
	attempt := d.Attempts + 1
	line := DeliveryAttempt{
		EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: d.Endpoint.OrgID,
		Attempt: attempt, At: started, StatusCode: o.Response.StatusCode, Latency: o.Response.Latency,
		Response: string(o.Response.Body), Error: o.Error,
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
	case o.Delivered:
		line.Success, line.Error = true, ""
		// The count is reset as it stands when the result is recorded:
		// events given up meanwhile may have raised it since the claim.
		return DeliveryResult{Attempt: line, Done: true, Endpoint: func(ep *Endpoint) { ep.Exhausted = 0 }}
	case o.Gone:
		return DeliveryResult{Attempt: line, Done: true, Endpoint: disable(DisabledGone)}
	}
	at, retry := RetryAt(s.retrySchedule, attempt, ended, o.RetryAfter)
	if !retry {
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
	return DeliveryResult{Attempt: line, RetryAt: at}
}

// RetryAt is the retry policy: after attempt number attempt (1 for the
// first) failed at failedAt, the next one is due after the schedule's next
// pause, moved by up to RetryJitter either way, or after retryAfter when
// the receiver asked for longer (at most MaxRetryAfter). ok is false when
// the schedule has no attempt left.
func RetryAt(schedule []time.Duration, attempt int, failedAt time.Time, retryAfter time.Duration) (at time.Time, ok bool) {
	if attempt >= len(schedule) {
		return time.Time{}, false
	}
	pause := jitter(schedule[attempt])
	if retryAfter > pause {
		pause = min(retryAfter, MaxRetryAfter)
	}
	return failedAt.Add(pause), true
}

// jitter moves d by a random amount of up to RetryJitter of it, either way.
func jitter(d time.Duration) time.Duration {
	spread := int64(float64(d) * RetryJitter)
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(2*spread+1)-spread)
}

// FinishDeliveries records a batch of attempts in one commit
// (Store.FinishDeliveries) and logs what the log must show of each: a
// batch that failed to commit (its deliveries are taken up again when their
// leases lapse), a delivery that left the queue during its attempt, an
// endpoint the attempt disabled. disabled[i] is the reason AttemptResult
// reported for batch[i].
func (s *Service) FinishDeliveries(ctx context.Context, batch []FinishedDelivery, disabled []*string) {
	lost, err := s.store.FinishDeliveries(ctx, batch)
	for i, f := range batch {
		d, ep := f.Delivery, f.Delivery.Endpoint
		switch {
		case err != nil:
			s.log.Error("webhooks: record attempt", "event_id", d.EventID, "endpoint_id", d.EndpointID, "err", err)
		case lost[i]:
			s.log.Info("webhooks: the delivery left the queue during its attempt (endpoint disabled or removed, event redelivered, or the claim lapsed)",
				"event_id", d.EventID, "endpoint_id", d.EndpointID)
		case *disabled[i] != "":
			s.log.Error("WEBHOOK ENDPOINT DISABLED: its queued deliveries were dropped; fix the receiver, then `onboard webhooks enable` it and redeliver or reconcile from the events API",
				"endpoint_id", ep.ID, "org", ep.OrgID, "url", logURL(ep.URL), "reason", *disabled[i])
		}
	}
}
