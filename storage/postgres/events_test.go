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
	h.endpoint("acme")
	stored := h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now)
	h.add(stored)
	fresh := h.event(onboarding.EventApplicationOpened, "acme", "app-1", h.at(time.Second))
	err := h.s.inTx(ctx, func(tx pgx.Tx) error {
		return h.s.writeEvents(ctx, tx, []*onboarding.Event{fresh, stored})
	})
	if !errors.Is(err, errWebhookDuplicate) {
		t.Errorf("writeEvents(a stored event) = %v, want errWebhookDuplicate", err)
	}
	if _, err := h.s.Event(ctx, fresh.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("event of a failed transaction: %v, want ErrNotFound", err)
	}
	if n, err := h.s.QueuedDeliveries(ctx); n != 1 || err != nil {
		t.Errorf("QueuedDeliveries = %d, %v; want the stored event's 1", n, err)
	}
}
