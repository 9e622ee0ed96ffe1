package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestWebhookFanOut checks which endpoints an event is queued for: those
// of its organization that are enabled and want its type, or the one a
// webhook.test is addressed to.
func TestWebhookFanOut(t *testing.T) {
	h := newHookEnv(t)
	all, sentOnly, disabled, other := h.Endpoint("acme"), h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme"), h.Endpoint("acme2")
	if _, err := h.S.UpdateEndpoint(context.Background(), disabled.ID, func(ep *onboarding.Endpoint) error { ep.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	test := h.Event(onboarding.EventWebhookTest, "acme", "", h.Now)
	test.Endpoint = sentOnly.ID
	tests := []struct {
		name  string
		event *onboarding.Event
		want  []*onboarding.Endpoint
	}{
		{"every endpoint wanting the type", h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now), []*onboarding.Endpoint{all}},
		{"a filter naming the type", h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now), []*onboarding.Endpoint{all, sentOnly}},
		{"a test addressed to one endpoint", test, []*onboarding.Endpoint{sentOnly}},
		{"another organization", h.Event(onboarding.EventApplicationSent, "acme2", "app-2", h.Now), []*onboarding.Endpoint{other}},
		{"an organization without endpoints", h.Event(onboarding.EventApplicationSent, "acm", "app-3", h.Now), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.Add(tt.event)
			want := []string{}
			for _, ep := range tt.want {
				want = append(want, fixture.Pair(ep.ID, tt.event.ID))
			}
			got := []string{}
			for _, q := range h.queued() {
				if q.EventID == tt.event.ID {
					got = append(got, fixture.Pair(q.EndpointID, q.EventID))
					if q.EventType != tt.event.Type || q.Subject != tt.event.Subject || q.Attempts != 0 || !q.NextAt.Equal(tt.event.At) {
						t.Errorf("queued %+v for event %+v", q, tt.event)
					}
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("queued for (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWebhookDuplicateEndpoint: creating an endpoint whose id exists is
// errWebhookDuplicate. (The rest of the endpoints' contract is the Store
// suite's.)
func TestWebhookDuplicateEndpoint(t *testing.T) {
	h := newHookEnv(t)
	ep := h.Endpoint("acme")
	if err := h.S.CreateEndpoint(context.Background(), ep); !errors.Is(err, errWebhookDuplicate) {
		t.Errorf("CreateEndpoint(duplicate) = %v, want errWebhookDuplicate", err)
	}
}

// TestWebhookDeliveryAttemptsOfOneTime: log lines of the same time come
// newest written first. (The rest of the log's reading is the Store
// suite's.)
func TestWebhookDeliveryAttemptsOfOneTime(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	same := []onboarding.DeliveryAttempt{{EventID: "evt_c", EndpointID: "we_4", At: h.Now, Attempt: 1}, {EventID: "evt_c", EndpointID: "we_4", At: h.Now, Attempt: 2}}
	if err := h.S.inTx(ctx, func(tx pgx.Tx) error { return h.S.writeAttempts(ctx, tx, same) }); err != nil {
		t.Fatal(err)
	}
	got, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: "evt_c"})
	if diff := cmp.Diff([]onboarding.DeliveryAttempt{same[1], same[0]}, got); err != nil || diff != "" {
		t.Errorf("lines of one time (-want +got):\n%s%v", diff, err)
	}
}
