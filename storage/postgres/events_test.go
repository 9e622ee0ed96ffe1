package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

// TestWebhookEventsStoredTwice: writeEvents of an event id stored already
// is errWebhookDuplicate, and fails its transaction, which stores none of
// its events. (The outbox as seen through the Store is the suite's.)
func TestWebhookEventsStoredTwice(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	h.Endpoint("acme")
	stored := h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now)
	h.Add(stored)
	fresh := h.Event(onboarding.EventApplicationOpened, "acme", "app-1", h.At(time.Second))
	err := h.S.inTx(ctx, func(tx pgx.Tx) error {
		return h.S.writeEvents(ctx, tx, []*onboarding.Event{fresh, stored})
	})
	if !errors.Is(err, errWebhookDuplicate) {
		t.Errorf("writeEvents(a stored event) = %v, want errWebhookDuplicate", err)
	}
	if _, err := h.S.Event(ctx, fresh.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("event of a failed transaction: %v, want ErrNotFound", err)
	}
	if n, err := h.S.QueuedDeliveries(ctx); n != 1 || err != nil {
		t.Errorf("QueuedDeliveries = %d, %v; want the stored event's 1", n, err)
	}
}
