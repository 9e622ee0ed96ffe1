package notify

import (
	"errors"
	"io"
	"testing"
	"time"

	"onboard/onboarding"
)

// TestJudge checks the delivery policy (docs/webhooks.md) for each kind of
// answer: what is logged, whether the delivery is done, when it is tried
// again, and what happens to the endpoint.
func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	schedule := []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute}
	s := newQueue(t, schedule)
	type want struct {
		success      bool
		done         bool
		retryIn      time.Duration // 0: not retried; else the pause before jitter
		errText      string
		exhausted    int    // the endpoint's count after the result
		disabledWhy  string // the reason the result disables the endpoint with; empty: stays enabled
		endpointSet  bool   // the result changes the endpoint
		logAttemptNo int
	}
	tests := []struct {
		name      string
		attempts  int // made before this one
		exhausted int // the endpoint's count before
		resp      onboarding.WebhookResponse
		err       error
		want      want
	}{
		{"2xx delivers (and resets the count, whatever it was at the claim)", 0, 0, onboarding.WebhookResponse{StatusCode: 204}, nil,
			want{success: true, done: true, endpointSet: true, logAttemptNo: 1}},
		{"2xx resets the endpoint's failure count", 2, 3, onboarding.WebhookResponse{StatusCode: 200}, nil,
			want{success: true, done: true, endpointSet: true, logAttemptNo: 3}},
		{"410 disables the endpoint", 0, 0, onboarding.WebhookResponse{StatusCode: 410}, nil,
			want{done: true, errText: "410 Gone: the endpoint is disabled", endpointSet: true, disabledWhy: onboarding.DisabledGone, logAttemptNo: 1}},
		{"500 is retried after the next pause", 0, 0, onboarding.WebhookResponse{StatusCode: 500}, nil,
			want{retryIn: 5 * time.Second, errText: "answered 500 Internal Server Error", logAttemptNo: 1}},
		{"3xx is a failure, not followed", 1, 0, onboarding.WebhookResponse{StatusCode: 302}, nil,
			want{retryIn: 5 * time.Minute, errText: "answered 302 Found", logAttemptNo: 2}},
		{"no answer is retried", 0, 0, onboarding.WebhookResponse{}, errors.New("connection refused"),
			want{retryIn: 5 * time.Second, errText: "connection refused", logAttemptNo: 1}},
		{"429 waits for a longer Retry-After", 0, 0, onboarding.WebhookResponse{StatusCode: 429, RetryAfter: time.Minute}, nil,
			want{retryIn: time.Minute, errText: "answered 429 Too Many Requests", logAttemptNo: 1}},
		{"503 with a shorter Retry-After keeps the schedule", 1, 0, onboarding.WebhookResponse{StatusCode: 503, RetryAfter: time.Second}, nil,
			want{retryIn: 5 * time.Minute, errText: "answered 503 Service Unavailable", logAttemptNo: 2}},
		{"Retry-After is capped at a day", 0, 0, onboarding.WebhookResponse{StatusCode: 503, RetryAfter: 72 * time.Hour}, nil,
			want{retryIn: onboarding.MaxRetryAfter, errText: "answered 503 Service Unavailable", logAttemptNo: 1}},
		{"Retry-After on a 500 is ignored", 0, 0, onboarding.WebhookResponse{StatusCode: 500, RetryAfter: time.Hour}, nil,
			want{retryIn: 5 * time.Second, errText: "answered 500 Internal Server Error", logAttemptNo: 1}},
		{"the last attempt gives up and counts against the endpoint", 3, 1, onboarding.WebhookResponse{StatusCode: 500}, nil,
			want{done: true, errText: "answered 500 Internal Server Error; gave up after 4 attempts", endpointSet: true, exhausted: 2, logAttemptNo: 4}},
		{"the fifth event given up in a row disables the endpoint", 3, onboarding.DisableAfterExhausted - 1, onboarding.WebhookResponse{}, errors.New("timed out after 15s"), want{
			done: true, errText: "timed out after 15s; gave up after 4 attempts", endpointSet: true,
			exhausted: onboarding.DisableAfterExhausted, disabledWhy: "5 events in a row failed every delivery attempt", logAttemptNo: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &onboarding.Endpoint{ID: "we_1", OrgID: "acme", Enabled: true, Exhausted: tt.exhausted}
			d := &onboarding.Delivery{EventID: "evt_1", EndpointID: ep.ID, Attempts: tt.attempts, Event: &onboarding.Event{Type: onboarding.EventApplicationCreated}, Endpoint: ep}
			var disabled string
			ended := now.Add(15 * time.Second)
			r := judge(s, d, tt.resp, tt.err, now, ended, &disabled)
			w := tt.want
			if r.Attempt.Success != w.success || r.Done != w.done || r.Attempt.Error != w.errText || r.Attempt.Attempt != w.logAttemptNo {
				t.Errorf("judge = success %v done %v error %q attempt %d; want %v %v %q %d",
					r.Attempt.Success, r.Done, r.Attempt.Error, r.Attempt.Attempt, w.success, w.done, w.errText, w.logAttemptNo)
			}
			if r.Attempt.StatusCode != tt.resp.StatusCode || r.Attempt.OrgID != "acme" || r.Attempt.EventType != onboarding.EventApplicationCreated {
				t.Errorf("log line = %+v", r.Attempt)
			}
			if w.retryIn == 0 {
				if !r.RetryAt.IsZero() {
					t.Errorf("RetryAt = %v, want none", r.RetryAt)
				}
			} else {
				spread := time.Duration(float64(w.retryIn) * onboarding.RetryJitter)
				if w.retryIn == time.Minute || w.retryIn == onboarding.MaxRetryAfter {
					spread = 0 // Retry-After is honoured as given
				}
				// The pause runs from the end of the failed attempt.
				if got := r.RetryAt.Sub(ended); got < w.retryIn-spread || got > w.retryIn+spread {
					t.Errorf("retry %v after the failure, want %v ± %v", got, w.retryIn, spread)
				}
				if !r.Attempt.At.Equal(now) {
					t.Errorf("log line at %v, want the attempt's start %v", r.Attempt.At, now)
				}
			}
			if (r.Endpoint != nil) != w.endpointSet {
				t.Fatalf("endpoint change = %v, want %v", r.Endpoint != nil, w.endpointSet)
			}
			if r.Endpoint == nil {
				return
			}
			r.Endpoint(ep)
			if ep.Exhausted != w.exhausted || ep.Enabled != (w.disabledWhy == "") || ep.DisabledReason != w.disabledWhy || disabled != w.disabledWhy {
				t.Errorf("endpoint after = exhausted %d enabled %v reason %q (reported %q); want exhausted %d reason %q",
					ep.Exhausted, ep.Enabled, ep.DisabledReason, disabled, w.exhausted, w.disabledWhy)
			}
		})
	}
}

// TestJudgeSuccessResetsTheCountAsStored: another event of the endpoint
// may be given up while an attempt is in flight, raising the count the
// claim saw as zero; the success resets the count as it is when recorded.
func TestJudgeSuccessResetsTheCountAsStored(t *testing.T) {
	s := newQueue(t, []time.Duration{0})
	claimed := &onboarding.Endpoint{ID: "we_1", OrgID: "acme", Enabled: true}
	d := &onboarding.Delivery{EventID: "evt_1", EndpointID: claimed.ID, Event: &onboarding.Event{Type: onboarding.EventApplicationCreated}, Endpoint: claimed}
	var disabled string
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := judge(s, d, onboarding.WebhookResponse{StatusCode: 200}, nil, now, now, &disabled)
	if r.Endpoint == nil {
		t.Fatal("a success leaves the endpoint's count as it is")
	}
	stored := *claimed
	stored.Exhausted = onboarding.DisableAfterExhausted - 1
	r.Endpoint(&stored)
	if stored.Exhausted != 0 || !stored.Enabled || disabled != "" {
		t.Errorf("endpoint after a success = exhausted %d, enabled %v (reported disabled %q); want 0, enabled", stored.Exhausted, stored.Enabled, disabled)
	}
}

// newQueue is a Service with the retry schedule, for judge: it is never
// asked to store anything.
func newQueue(t *testing.T, schedule []time.Duration) *onboarding.Service {
	t.Helper()
	s, err := onboarding.New(onboarding.Options{
		Store:         struct{ onboarding.Store }{},
		PageCounter:   func(io.ReaderAt, int64) (int, error) { return 0, nil },
		RetrySchedule: schedule,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
