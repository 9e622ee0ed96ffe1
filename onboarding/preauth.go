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
// revoking any earlier one.
func (s *Service) RefreshPreAuth(ctx context.Context, k *APIKey, appID string) (*PreAuthResult, error) {
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
	now := s.now().UTC()
	expires := now.Add(PreAuthTTL)
	app, err := s.updateOwnApplication(ctx, k, current.ID, func(a *Application) ([]Activity, error) {
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

// updateOwnApplication applies change to an application of k's organization in
// one transaction. A missing application, or another organization's, is
// ErrApplicationNotFound; domain errors from change come back unchanged.
func (s *Service) updateOwnApplication(ctx context.Context, k *APIKey, id string, change func(*Application) ([]Activity, error)) (*Application, error) {
	app, err := s.updateApplication(ctx, id, func(a *Application) ([]Activity, error) {
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
