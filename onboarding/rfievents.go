package onboarding

import (
	"context"
	"time"
)

// updateRFIRequest applies change to the stored RFI request and commits,
// in the same transaction, the activity it returns and the events the
// change emits (rfiEvents). Every change of an RFI request goes through
// here, so no status move can forget its event.
func (s *Service) updateRFIRequest(ctx context.Context, id string, change func(*RFIRequest) ([]Activity, error)) (*RFIRequest, error) {
	return updateAndEmit(ctx, s, id, s.store.UpdateRFIRequest, change, s.rfiEvents, nil)
}

// rfiEvents returns the events an RFI request change emits: opened on its
// first open, completed and expired on those status moves (docs/webhooks.md).
func (s *Service) rfiEvents(before, after *RFIRequest, at time.Time) ([]*Event, error) {
	var types []EventType
	if before.OpenedAt == nil && after.OpenedAt != nil {
		types = append(types, EventRFIRequestOpened)
	}
	if before.Status != after.Status {
		switch after.Status {
		case RFICompleted:
			types = append(types, EventRFIRequestCompleted)
		case RFIExpired:
			types = append(types, EventRFIRequestExpired)
		}
	}
	events := make([]*Event, len(types))
	for i, t := range types {
		var err error
		if events[i], err = s.rfiEvent(t, after, at); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// updateRFIRequestFor is updateRFIRequest for a request with an
// Idempotency-Key: done, when not nil, gives the request's outcome from
// the changed request, committed with it.
func (s *Service) updateRFIRequestFor(ctx context.Context, id string, done func(*RFIRequest) *IdempotentOutcome, change func(*RFIRequest) ([]Activity, error)) (*RFIRequest, error) {
	return updateAndEmit(ctx, s, id, s.store.UpdateRFIRequest, change, s.rfiEvents, done)
}
