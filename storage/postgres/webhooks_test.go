package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

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
