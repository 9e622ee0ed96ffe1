package onboarding

import (
	"errors"
	"testing"
	"time"
)

// TestJudge checks the delivery policy of DESIGN §5.7 for each kind of
// answer: what is logged, whether the delivery is done, when it is tried
// again, and what happens to the endpoint.
func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	schedule := []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute}
	s := &Service{retrySchedule: schedule}
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
		resp      WebhookResponse
		err       error
		want      want
	}{
		{"2xx delivers (and resets the count, whatever it was at the claim)", 0, 0, WebhookResponse{StatusCode: 204}, nil,
			want{success: true, done: true, endpointSet: true, logAttemptNo: 1}},
		{"2xx resets the endpoint's failure count", 2, 3, WebhookResponse{StatusCode: 200}, nil,
			want{success: true, done: true, endpointSet: true, logAttemptNo: 3}},
		{"410 disables the endpoint", 0, 0, WebhookResponse{StatusCode: 410}, nil,
			want{done: true, errText: "410 Gone: the endpoint is disabled", endpointSet: true, disabledWhy: DisabledGone, logAttemptNo: 1}},
		{"500 is retried after the next pause", 0, 0, WebhookResponse{StatusCode: 500}, nil,
			want{retryIn: 5 * time.Second, errText: "answered 500 Internal Server Error", logAttemptNo: 1}},
		{"3xx is a failure, not followed", 1, 0, WebhookResponse{StatusCode: 302}, nil,
			want{retryIn: 5 * time.Minute, errText: "answered 302 Found", logAttemptNo: 2}},
		{"no answer is retried", 0, 0, WebhookResponse{}, errors.New("connection refused"),
			want{retryIn: 5 * time.Second, errText: "connection refused", logAttemptNo: 1}},
		{"429 waits for a longer Retry-After", 0, 0, WebhookResponse{StatusCode: 429, RetryAfter: time.Minute}, nil,
			want{retryIn: time.Minute, errText: "answered 429 Too Many Requests", logAttemptNo: 1}},
		{"503 with a shorter Retry-After keeps the schedule", 1, 0, WebhookResponse{StatusCode: 503, RetryAfter: time.Second}, nil,
			want{retryIn: 5 * time.Minute, errText: "answered 503 Service Unavailable", logAttemptNo: 2}},
		{"Retry-After is capped at a day", 0, 0, WebhookResponse{StatusCode: 503, RetryAfter: 72 * time.Hour}, nil,
			want{retryIn: maxRetryAfter, errText: "answered 503 Service Unavailable", logAttemptNo: 1}},
		{"Retry-After on a 500 is ignored", 0, 0, WebhookResponse{StatusCode: 500, RetryAfter: time.Hour}, nil,
			want{retryIn: 5 * time.Second, errText: "answered 500 Internal Server Error", logAttemptNo: 1}},
		{"the last attempt gives up and counts against the endpoint", 3, 1, WebhookResponse{StatusCode: 500}, nil,
			want{done: true, errText: "answered 500 Internal Server Error; gave up after 4 attempts", endpointSet: true, exhausted: 2, logAttemptNo: 4}},
		{"the fifth event given up in a row disables the endpoint", 3, DisableAfterExhausted - 1, WebhookResponse{}, errors.New("timed out after 15s"), want{
			done: true, errText: "timed out after 15s; gave up after 4 attempts", endpointSet: true,
			exhausted: DisableAfterExhausted, disabledWhy: "5 events in a row failed every delivery attempt", logAttemptNo: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &Endpoint{ID: "we_1", OrgID: "acme", Enabled: true, Exhausted: tt.exhausted}
			d := &Delivery{EventID: "evt_1", EndpointID: ep.ID, Attempts: tt.attempts, Event: &Event{Type: EventApplicationCreated}, Endpoint: ep}
			var disabled string
			ended := now.Add(15 * time.Second)
			r := s.judge(d, tt.resp, tt.err, now, ended, &disabled)
			w := tt.want
			if r.Attempt.Success != w.success || r.Done != w.done || r.Attempt.Error != w.errText || r.Attempt.Attempt != w.logAttemptNo {
				t.Errorf("judge = success %v done %v error %q attempt %d; want %v %v %q %d",
					r.Attempt.Success, r.Done, r.Attempt.Error, r.Attempt.Attempt, w.success, w.done, w.errText, w.logAttemptNo)
			}
			if r.Attempt.StatusCode != tt.resp.StatusCode || r.Attempt.OrgID != "acme" || r.Attempt.EventType != EventApplicationCreated {
				t.Errorf("log line = %+v", r.Attempt)
			}
			if w.retryIn == 0 {
				if !r.RetryAt.IsZero() {
					t.Errorf("RetryAt = %v, want none", r.RetryAt)
				}
			} else {
				spread := time.Duration(float64(w.retryIn) * retryJitter)
				if w.retryIn == time.Minute || w.retryIn == maxRetryAfter {
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
	s := &Service{retrySchedule: []time.Duration{0}}
	claimed := &Endpoint{ID: "we_1", OrgID: "acme", Enabled: true}
	d := &Delivery{EventID: "evt_1", EndpointID: claimed.ID, Event: &Event{Type: EventApplicationCreated}, Endpoint: claimed}
	var disabled string
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := s.judge(d, WebhookResponse{StatusCode: 200}, nil, now, now, &disabled)
	if r.Endpoint == nil {
		t.Fatal("a success leaves the endpoint's count as it is")
	}
	stored := *claimed
	stored.Exhausted = DisableAfterExhausted - 1
	r.Endpoint(&stored)
	if stored.Exhausted != 0 || !stored.Enabled || disabled != "" {
		t.Errorf("endpoint after a success = exhausted %d, enabled %v (reported disabled %q); want 0, enabled", stored.Exhausted, stored.Enabled, disabled)
	}
}

func TestJitterStaysWithinTenPercent(t *testing.T) {
	for range 1000 {
		if got := jitter(time.Hour); got < 54*time.Minute || got > 66*time.Minute {
			t.Fatalf("jitter(1h) = %v", got)
		}
	}
	if got := jitter(0); got != 0 {
		t.Errorf("jitter(0) = %v", got)
	}
}

func TestEndpointWantsAndSigningKeys(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	ep := &Endpoint{ID: "we_a", OrgID: "acme", Enabled: true, Events: []EventType{EventApplicationSubmitted},
		Secrets: []SigningSecret{{Key: []byte("new")}, {Key: []byte("old"), ExpiresAt: &later}}}
	tests := []struct {
		e    Event
		want bool
	}{
		{Event{OrgID: "acme", Type: EventApplicationSubmitted}, true},
		{Event{OrgID: "acme", Type: EventApplicationCreated}, false},
		{Event{OrgID: "other", Type: EventApplicationSubmitted}, false},
		{Event{OrgID: "acme", Type: EventWebhookTest, Endpoint: "we_a"}, true},
		{Event{OrgID: "acme", Type: EventWebhookTest, Endpoint: "we_b"}, false},
	}
	for _, tt := range tests {
		if got := ep.Wants(&tt.e); got != tt.want {
			t.Errorf("Wants(%+v) = %v, want %v", tt.e, got, tt.want)
		}
	}
	ep.Enabled = false
	if ep.Wants(&Event{OrgID: "acme", Type: EventApplicationSubmitted}) {
		t.Error("a disabled endpoint wants events")
	}
	if got := ep.SigningKeys(now); len(got) != 2 || string(got[0]) != "new" || string(got[1]) != "old" {
		t.Errorf("SigningKeys during the overlap = %q", got)
	}
	if got := ep.SigningKeys(later); len(got) != 1 || string(got[0]) != "new" {
		t.Errorf("SigningKeys after the overlap = %q", got)
	}
}
