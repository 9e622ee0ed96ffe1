package onboarding

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// PreAuthResult is what refresh pre-auth answers.
type PreAuthResult struct {
	Code            string
	Link            string // the participant's link with auth_code
	ExpiresAt       time.Time
	ParticipantID   string
	AlreadyVerified bool
}

// RefreshPreAuth issues a new pre-auth code for the primary participant,
// revoking any earlier one. idem, when not nil, is the request's
// Idempotency-Key: the outcome, with the code sealed, is committed with
// the change.
func (s *Service) RefreshPreAuth(ctx context.Context, k *APIKey, appID string, idem *Idempotency) (*PreAuthResult, error) {
	if err := Authorize(k, ScopeApplicationsCreate); err != nil {
		return nil, err
	}
	current, err := s.application(ctx, k, appID)
	if err != nil {
		return nil, err
	}
	code, err := randomString(s.random, preAuthCodeLength, alphanumeric)
	if err != nil {
		return nil, err
	}
	sealed, err := idem.seal(code)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	expires := now.Add(PreAuthTTL)
	done := func(a *Application) *IdempotentOutcome {
		o := idem.outcome(a.ID)
		if o != nil {
			p := a.Primary()
			o.SealedCode, o.ExpiresAt, o.AlreadyVerified = sealed, &expires, p.Verified
		}
		return o
	}
	app, err := s.updateOwnApplicationFor(ctx, k, current.ID, done, func(a *Application) ([]Activity, error) {
		if a.Status.Terminal() {
			return nil, ErrTerminalPreAuth
		}
		p := a.Primary()
		if p == nil {
			return nil, ErrNoPrimaryParticipant
		}
		p.PreAuthHash = hashSecret(code)
		p.PreAuthExpires = expires
		return []Activity{{At: now, Action: ActionPreAuthIssued, Actor: keyActor(k)}}, nil
	})
	if err != nil {
		return nil, err
	}
	p := app.Primary()
	return &PreAuthResult{
		Code:            code,
		Link:            withAuthCode(s.ParticipantLink(app, p), code),
		ExpiresAt:       expires,
		ParticipantID:   p.ID,
		AlreadyVerified: p.Verified,
	}, nil
}

// ReplayPreAuth rebuilds the answer of the refresh pre-auth request whose
// outcome is o, and whose code, opened from o.SealedCode, is code.
func (s *Service) ReplayPreAuth(ctx context.Context, k *APIKey, o *IdempotentOutcome, code string) (*PreAuthResult, error) {
	app, err := s.application(ctx, k, o.ID)
	if err != nil {
		return nil, err
	}
	p := app.Primary()
	if p == nil || o.ExpiresAt == nil {
		return nil, fmt.Errorf("replay pre-auth of application %s: no primary participant or no expiry", app.ID)
	}
	return &PreAuthResult{
		Code:            code,
		Link:            withAuthCode(s.ParticipantLink(app, p), code),
		ExpiresAt:       *o.ExpiresAt,
		ParticipantID:   p.ID,
		AlreadyVerified: o.AlreadyVerified,
	}, nil
}

// updateOwnApplication applies change to an application of k's organization in
// one transaction. A missing application, or another organization's, is
// ErrApplicationNotFound; domain errors from change come back unchanged.
func (s *Service) updateOwnApplication(ctx context.Context, k *APIKey, id string, change func(*Application) ([]Activity, error)) (*Application, error) {
	return s.updateOwnApplicationFor(ctx, k, id, nil, change)
}

// updateOwnApplicationFor is updateOwnApplication for a request with an
// Idempotency-Key: done, when not nil, gives the request's outcome from
// the changed application, committed with it.
func (s *Service) updateOwnApplicationFor(ctx context.Context, k *APIKey, id string, done func(*Application) *IdempotentOutcome, change func(*Application) ([]Activity, error)) (*Application, error) {
	app, err := s.updateApplicationFor(ctx, id, done, func(a *Application) ([]Activity, error) {
		if a.OrgID != k.OrgID {
			return nil, ErrApplicationNotFound
		}
		return change(a)
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, ErrApplicationNotFound
	case AsError(err) != nil:
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("update application %s: %w", id, err)
	}
	return app, nil
}

// application loads an application of k's organization; another
// organization's application is reported as not found.
func (s *Service) application(ctx context.Context, k *APIKey, id string) (*Application, error) {
	var app *Application
	err := s.readApplication(ctx, k, id, func(shared *Application) error {
		app = shared.Clone()
		return nil
	})
	return app, err
}

// readApplication calls read with an application of k's organization as
// the store shares it (Store.ReadApplication): read must not change it or
// keep any part of it. Another organization's application is reported as
// not found; read's error is answered unchanged.
func (s *Service) readApplication(ctx context.Context, k *APIKey, id string, read func(*Application) error) error {
	// Only the canonical form the API hands out names an application, so
	// that one resource has one path.
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return ErrApplicationNotFound
	}
	var readErr error
	err = s.store.ReadApplication(ctx, id, func(app *Application) error {
		if app.OrgID != k.OrgID {
			readErr = ErrApplicationNotFound
		} else {
			readErr = read(app)
		}
		return readErr
	})
	switch {
	case readErr != nil:
		return readErr
	case errors.Is(err, ErrNotFound):
		return ErrApplicationNotFound
	case err != nil:
		return fmt.Errorf("load application: %w", err)
	}
	return nil
}
