package onboarding

import (
	"context"
	"time"
)

// Resending the invite (docs/api.md): the partner asks for the primary
// participant's invite email again, with the same link.

// Limits of invite resends.
const (
	maxInviteResends   = 5
	inviteResendWindow = 24 * time.Hour
)

// ActionInviteResendRequested is the activity log's entry for a resend the
// partner asked for; the send itself is logged as for create (invite.sent
// or invite.failed).
const ActionInviteResendRequested = "invite.resend_requested"

// ResendWarning is the resend's warning when the email could not be sent.
const ResendWarning = "The invite email could not be sent. Share the link with the applicant or try again later."

// ErrTooManyResends is the 429 for a sixth resend within 24 hours; the
// next is possible after wait.
func ErrTooManyResends(wait time.Duration) *Error {
	return &Error{Kind: KindRateLimited, Message: "Rate limit exceeded", Retryable: true, RetryAfter: wait}
}

// ErrCannotResend is the 400 for an application whose invite can no longer
// be resent.
func ErrCannotResend(st Status) *Error {
	return Errorf(KindInvalid, "Cannot resend the invite for application in %s status", st)
}

// ResendResult is what resending the invite answers.
type ResendResult struct {
	Application *Application
	Warning     string // set when the email could not be sent
}

// ResendInvite sends the primary participant's invite again, at most
// maxInviteResends times in inviteResendWindow per application. A
// successful send moves a `created` application to `sent`.
func (s *Service) ResendInvite(ctx context.Context, k *APIKey, appID string, idem *Idempotency) (*ResendResult, error) {
	if err := Authorize(k, ScopeApplicationsCreate); err != nil {
		return nil, err
	}
	current, err := s.application(ctx, k, appID)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	// The resend is counted, and the request's outcome committed with it
	// (the email's outcome unknown yet); the commit that records the
	// email's outcome replaces it.
	done := func(mail MailOutcome) func(*Application) *IdempotentOutcome {
		return func(a *Application) *IdempotentOutcome {
			o := idem.outcome(a.ID)
			if o != nil {
				o.ApplicationStatus, o.Mail = a.Status, mail
			}
			return o
		}
	}
	app, err := s.updateOwnApplicationFor(ctx, k, current.ID, done(MailUnknown), func(a *Application) ([]Activity, error) {
		switch a.Status {
		case StatusCreated, StatusSent, StatusInProgress:
		default:
			return nil, ErrCannotResend(a.Status)
		}
		recent := within(a.InviteResends, now, inviteResendWindow)
		if len(recent) >= maxInviteResends {
			// Room comes back when the oldest resend of the window leaves it.
			return nil, ErrTooManyResends(recent[0].Add(inviteResendWindow).Sub(now))
		}
		a.InviteResends = append(recent, now)
		return []Activity{{At: now, Action: ActionInviteResendRequested, Actor: keyActor(k)}}, nil
	})
	if err != nil {
		return nil, err
	}
	// The resend is counted: from here on the request succeeds, whatever
	// the mail transport says, and the client going away does not stop it.
	ctx = context.WithoutCancel(ctx)
	res := &ResendResult{Application: app}
	sent, err := s.sendInvite(ctx, s.orgs[app.OrgID], app, s.ParticipantLink(app, app.Primary()), done)
	switch {
	case sent != nil:
		res.Application = sent
	case err != nil:
		s.log.Error("record invite", "application_id", app.ID, "err", err)
	default:
		res.Warning = ResendWarning
	}
	return res, nil
}

// ReplayResend rebuilds the answer of the resend request whose outcome is
// o: the status it gave, and the warning unless the email was sent.
func (s *Service) ReplayResend(ctx context.Context, k *APIKey, o *IdempotentOutcome) (*ResendResult, error) {
	app, err := s.application(ctx, k, o.ID)
	if err != nil {
		return nil, err
	}
	app.Status = o.ApplicationStatus
	res := &ResendResult{Application: app}
	if o.Mail != MailSent {
		res.Warning = ResendWarning
	}
	return res, nil
}

// within returns the times of ts (oldest first) less than window before
// now, in a new slice: what a per-day limit counts.
func within(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	recent := ts[:0:0]
	for _, t := range ts {
		if now.Sub(t) < window {
			recent = append(recent, t)
		}
	}
	return recent
}
