package onboarding

import (
	"context"
	"errors"
	"time"
)

// The RFI expiry sweep (docs/api.md): an active request whose
// expires_at has passed becomes expired, with its rfi_request.expired
// event. Due requests are claimed through the Store with a lease, so that
// several sweepers (or a sweeper that died mid-batch) neither expire a
// request twice nor leave one behind.

const (
	// rfiExpiryLease is how long a sweeper holds the requests it claimed.
	rfiExpiryLease = time.Minute
	// rfiExpiryBatch is how many requests one claim takes.
	rfiExpiryBatch = 100
	// rfiExpiryRescan bounds a sweeper's sleep, so that requests another
	// process created are expired on time too.
	rfiExpiryRescan = time.Minute
)

// RunRFIExpiry expires RFI requests as they fall due, until ctx ends; it
// returns ctx's error.
func (s *Service) RunRFIExpiry(ctx context.Context) error {
	owner, err := newUUID(s.random)
	if err != nil {
		return err
	}
	for {
		now := s.now().UTC()
		ids, next, err := s.store.ClaimRFIExpiries(ctx, Claim{Owner: owner, Now: now, Lease: rfiExpiryLease, Limit: rfiExpiryBatch})
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrInsufficientStorage) { // the store logs a full disk once
			s.log.Error("rfi expiry: claim", "err", err)
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if _, err := s.expireRFI(ctx, id, Actor{Type: ActorSystem}, true, nil); err != nil && !errors.Is(err, errUnchanged) {
				s.log.Error("rfi expiry: expire", "rfi_request_id", id, "err", err)
			}
		}
		if len(ids) == rfiExpiryBatch {
			continue
		}
		if s.rfiExpiryIdle != nil {
			s.rfiExpiryIdle()
		}
		wait := rfiExpiryRescan
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(s.now()), 0))
		}
		if err != nil {
			wait = rfiExpiryRescan
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-s.rfiExpiryWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// wakeRFIExpiry tells a running sweep that a request expiring at at was
// created, so that it does not sleep past it.
func (s *Service) wakeRFIExpiry(at time.Time) {
	select {
	case s.rfiExpiryWake <- at:
	default: // a wake-up is already waiting
	}
}

// WakeRFIExpiry makes a running sweep look for due requests now: after the
// clock of a test moved, say.
func (s *Service) WakeRFIExpiry() { s.wakeRFIExpiry(s.now()) }

// expireRFI moves an active request to expired, with its event; with due,
// only once its expires_at has passed. A request that is not active (or not
// due) is errUnchanged.
func (s *Service) expireRFI(ctx context.Context, id string, by Actor, due bool, done func(*RFIRequest) *IdempotentOutcome) (*RFIRequest, error) {
	return s.updateRFIRequestFor(ctx, id, done, func(r *RFIRequest) ([]Activity, error) {
		now := s.now().UTC()
		if r.Status != RFIActive || (due && now.Before(r.ExpiresAt)) {
			return nil, errUnchanged
		}
		r.Status, r.ExpiredAt, r.UpdatedAt = RFIExpired, &now, now
		return []Activity{{At: now, Action: ActionRFIExpired, Actor: by}}, nil
	})
}
