package onboarding

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The applicant's access to the form (docs/applicant-form.md): a participant opens
// their link and proves control of their email address with a 6-digit code
// (or skips that with the partner's pre-auth code). The server then keeps a
// session for them; what the domain decides is whether a session still
// stands: a participant's sessions all end when their SessionEpoch moves on
// (removal, or a later verification).

// Limits of applicant access.
const (
	// VerifyCodeTTL is the lifetime of an email verification code.
	VerifyCodeTTL = 10 * time.Minute
	// VerifyCodeAttempts is how many wrong codes end a verification code.
	VerifyCodeAttempts = 5
	// verifyResendAfter paces sending codes to one participant.
	verifyResendAfter = 30 * time.Second
	// VerifyCodesPerDay bounds the codes sent to one participant in a
	// day, and so the guesses (VerifyCodesPerDay × VerifyCodeAttempts)
	// against a million possible codes.
	VerifyCodesPerDay = 10
	verifyWindow      = 24 * time.Hour
	verifyCodeDigits  = 6
	minSessionKey     = 32
)

// Errors of applicant access, shown on the form's pages.
var (
	ErrFormNotFound      = &Error{Kind: KindNotFound, Message: "This link is not valid. Check that you copied the whole link from the email."}
	ErrFormUnavailable   = &Error{Kind: KindUnavailable, Message: "The form is not available at the moment. Try again later."}
	ErrNotSignedIn       = &Error{Kind: KindUnauthorized, Message: "Your session has ended. Confirm your email address to continue."}
	ErrCSRF              = &Error{Kind: KindForbidden, Message: "This page has expired. Go back, reload the page and try again."}
	ErrNoCodeSent        = &Error{Kind: KindInvalid, Message: "Send yourself a code first."}
	ErrCodeExpired       = &Error{Kind: KindInvalid, Message: "The code has expired. Send a new code."}
	ErrCodeExhausted     = &Error{Kind: KindInvalid, Message: "Too many wrong codes. Send a new code."}
	ErrCodeFormat        = &Error{Kind: KindInvalid, Message: "Enter the 6-digit code from the email."}
	ErrCodeSendFailed    = &Error{Kind: KindUnavailable, Message: "We could not send the email. Try again in a few minutes."}
	ErrTooManyCodes      = &Error{Kind: KindRateLimited, Message: "Too many codes have been sent to this address today. Try again in 24 hours."}
	ErrApplicationFrozen = &Error{Kind: KindConflict, Message: "This application has been submitted and can no longer be changed."}
)

// ErrCodeWrong is the error for a wrong verification code, saying how many
// attempts are left.
func ErrCodeWrong(left int) *Error {
	if left == 1 {
		return Errorf(KindInvalid, "That code is not right. You have 1 more try.")
	}
	return Errorf(KindInvalid, "That code is not right. You have %d more tries.", left)
}

// ErrCodeResendTooSoon is the error for asking for another code too soon.
func ErrCodeResendTooSoon(wait time.Duration) *Error {
	return Errorf(KindRateLimited, "A code was sent moments ago. Wait %d seconds before asking for another.", int(wait.Seconds()+0.999))
}

// Visitor is someone at a participant's link: the application, the
// participant whose link it is, and whether they are signed in.
type Visitor struct {
	App         *Application
	Participant *Participant
	Org         *Organization
	Config      *Configuration
	// SignedIn is true when the visitor verified their email address or
	// used a valid pre-auth code, in this session or just now.
	SignedIn bool
	// SignedInNow is true when the visitor signed in during this request
	// (a pre-auth code or an email code): the server starts a new session.
	SignedInNow bool
	// acting, when set, is who the activity log names for what the
	// visitor does instead of the participant: the API key of a sandbox
	// test helper acting for them.
	acting *Actor
	// idem, when set, is the Idempotency-Key of the test helper's
	// request, whose outcome the submission commits.
	idem *Idempotency
}

// SignIn is what a form session says about who holds it: the participant
// of the application it signed in, at their session epoch then. The
// server keeps sessions; Visit decides whether one still stands.
type SignIn struct {
	AppID         string
	ParticipantID string
	Epoch         int
}

// Form returns the form of the visitor's application.
func (v *Visitor) Form() *Form { return v.Config.Form }

// OrgName is the organization's display name.
func (v *Visitor) OrgName() string { return v.Org.DisplayName() }

// Primary reports whether the visitor is the application's primary participant.
func (v *Visitor) Primary() bool { return v.Participant.Role == RolePrimary }

// Writable reports whether the applicant may still change the application.
func (v *Visitor) Writable() bool { return v.App.Status.Writable() }

// Visit identifies who is at the link slug: host is the Host the request
// came to (an organization's custom domain serves only its applications),
// authCode the link's auth_code query parameter, held the sign-in of the
// session the browser holds (nil for none). A valid pre-auth code signs
// the participant in; an expired or unknown one is ignored, so the visitor
// verifies by email. A held sign-in stands while it names this link's
// participant at their current session epoch. The first signed-in visit
// moves a created or sent application to in_progress.
func (s *Service) Visit(ctx context.Context, host, slug, authCode string, held *SignIn) (*Visitor, error) {
	if len(s.sessionKey) < minSessionKey {
		return nil, ErrFormUnavailable
	}
	app, p, err := s.participantBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	org := s.orgs[app.OrgID]
	cfg := s.configs[app.ConfigID]
	if org == nil || cfg == nil {
		return nil, fmt.Errorf("application %s: unknown organization or configuration", app.ID)
	}
	if !s.servesOrg(host, org) {
		return nil, ErrFormNotFound
	}
	v := &Visitor{App: app, Participant: p, Org: org, Config: cfg}
	now := s.now().UTC()
	switch {
	case authCode != "" && s.preAuthValid(p, authCode, now):
		if err := s.signIn(ctx, v, now, ActionPreAuthUsed); err != nil {
			return nil, err
		}
	case held != nil && held.AppID == app.ID && held.ParticipantID == p.ID && held.Epoch == p.SessionEpoch:
		v.SignedIn = true
		if app.Status == StatusCreated || app.Status == StatusSent {
			// Signed in before the status could move (a crash between the
			// two); move it now.
			return v, s.markOpened(ctx, v, now)
		}
	}
	return v, nil
}

// participantBySlug loads the application and participant of a link slug.
func (s *Service) participantBySlug(ctx context.Context, slug string) (*Application, *Participant, error) {
	if len(slug) < 16 || len(slug) > 64 {
		return nil, nil, ErrFormNotFound
	}
	app, err := s.store.ApplicationBySlug(ctx, slug)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, ErrFormNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load application by link: %w", err)
	}
	for i := range app.Participants {
		if app.Participants[i].LinkSlug == slug {
			return app, &app.Participants[i], nil
		}
	}
	return nil, nil, ErrFormNotFound
}

func (s *Service) preAuthValid(p *Participant, code string, now time.Time) bool {
	return len(p.PreAuthHash) > 0 && now.Before(p.PreAuthExpires) &&
		subtle.ConstantTimeCompare(p.PreAuthHash, hashSecret(code)) == 1
}

// signIn signs v's participant in (the server starts their session) and
// records the first open of the form.
func (s *Service) signIn(ctx context.Context, v *Visitor, now time.Time, how string) error {
	v.SignedIn, v.SignedInNow = true, true
	var log []Activity
	if how != "" {
		log = append(log, Activity{At: now, Action: how, Actor: v.actor(v.Participant)})
	}
	if len(log) == 0 && v.Participant.OpenedAt != nil && v.App.Status != StatusCreated && v.App.Status != StatusSent {
		return nil
	}
	return s.markOpened(ctx, v, now, log...)
}

// markOpened records the participant's first open and moves a created or
// sent application to in_progress, once.
func (s *Service) markOpened(ctx context.Context, v *Visitor, now time.Time, extra ...Activity) error {
	pid := v.Participant.ID
	app, err := s.updateApplication(ctx, v.App.ID, func(a *Application) ([]Activity, error) {
		p := a.participant(pid)
		if p == nil {
			return nil, ErrFormNotFound
		}
		log := extra
		if p.OpenedAt == nil {
			p.OpenedAt = &now
		}
		if a.Status == StatusCreated || a.Status == StatusSent {
			a.Status = StatusInProgress
			a.UpdatedAt = now
			log = append(log, Activity{At: now, Action: ActionOpened, Actor: v.actor(p)})
		}
		return log, nil
	})
	if err != nil {
		return s.formError("record form opened", err)
	}
	v.refresh(app)
	return nil
}

// refresh points v at a newer copy of its application.
func (v *Visitor) refresh(app *Application) {
	if p := app.participant(v.Participant.ID); p != nil {
		v.App, v.Participant = app, p
	}
}

// participant returns the participant with id, or nil.
func (a *Application) participant(id string) *Participant {
	for i := range a.Participants {
		if a.Participants[i].ID == id {
			return &a.Participants[i]
		}
	}
	return nil
}

// SendVerificationCode emails the visitor a new 6-digit code, replacing
// any earlier one.
func (s *Service) SendVerificationCode(ctx context.Context, v *Visitor) error {
	return s.sendCode(ctx, s.applicationDoor(v))
}

// VerifyCode checks a verification code; the right one signs the visitor in.
func (s *Service) VerifyCode(ctx context.Context, v *Visitor, code string) error {
	now := s.now().UTC()
	if err := s.checkCode(ctx, s.applicationDoor(v), code, now); err != nil {
		return err
	}
	return s.signIn(ctx, v, now, "")
}

// door is a record an applicant signs into with their email address: an
// application (the form) or an RFI request (its page). The code rules of
// applicant access are written once, over doors.
type door struct {
	kind        string // for logs: "application" or "rfi_request"
	id          string
	orgName     string
	participant *Participant
	// update applies change to the stored participant in the record's own
	// transaction, writing the activity it returns, and points the visitor
	// at the updated record.
	update func(ctx context.Context, change func(p *Participant) ([]Activity, error)) error
}

// applicationDoor is v's application as a door.
func (s *Service) applicationDoor(v *Visitor) door {
	return door{kind: "application", id: v.App.ID, orgName: v.OrgName(), participant: v.Participant,
		update: func(ctx context.Context, change func(*Participant) ([]Activity, error)) error {
			pid := v.Participant.ID
			app, err := s.updateApplication(ctx, v.App.ID, func(a *Application) ([]Activity, error) {
				p := a.participant(pid)
				if p == nil {
					return nil, ErrFormNotFound
				}
				return change(p)
			})
			if err != nil {
				return err
			}
			v.refresh(app)
			return nil
		}}
}

// sendCode emails d's participant a new 6-digit code, replacing any
// earlier one: at most one every verifyResendAfter, VerifyCodesPerDay a day.
func (s *Service) sendCode(ctx context.Context, d door) error {
	now := s.now().UTC()
	if wait := d.participant.VerifyCodeSentAt.Add(verifyResendAfter).Sub(now); wait > 0 {
		return ErrCodeResendTooSoon(wait)
	}
	if s.mailer == nil {
		return ErrCodeSendFailed
	}
	code, err := randomString(s.random, verifyCodeDigits, "0123456789")
	if err != nil {
		return err
	}
	hash := s.codeHash(d.participant.ID, code)
	err = d.update(ctx, func(p *Participant) ([]Activity, error) {
		if wait := p.VerifyCodeSentAt.Add(verifyResendAfter).Sub(now); wait > 0 {
			return nil, ErrCodeResendTooSoon(wait)
		}
		if !now.Before(p.VerifyWindowStart.Add(verifyWindow)) {
			p.VerifyWindowStart, p.VerifyCodesSent = now, 0
		}
		if p.VerifyCodesSent >= VerifyCodesPerDay {
			return nil, ErrTooManyCodes
		}
		p.VerifyCodesSent++
		p.VerifyCodeHash, p.VerifyCodeExpires, p.VerifyAttempts, p.VerifyCodeSentAt = hash, now.Add(VerifyCodeTTL), 0, now
		return []Activity{{At: now, Action: ActionVerificationSent, Actor: participantActor(p)}}, nil
	})
	if err != nil {
		return s.formError("store verification code", err)
	}
	to := Recipient{Email: d.participant.Email, Name: d.participant.Name}
	if err := s.mailer.Send(context.WithoutCancel(ctx), VerificationCode{To: to, OrgName: d.orgName, Code: code, ValidFor: VerifyCodeTTL}); err != nil {
		s.log.Warn("verification email failed", d.kind+"_id", d.id, "err", err)
		return ErrCodeSendFailed
	}
	return nil
}

// checkCode checks a verification code of d's participant: a wrong one is
// counted (and committed) before it is reported; the right one marks the
// participant verified and ends their other sessions.
func (s *Service) checkCode(ctx context.Context, d door, code string, now time.Time) error {
	code = strings.Join(strings.Fields(code), "")
	if len(code) != verifyCodeDigits || strings.Trim(code, "0123456789") != "" {
		return ErrCodeFormat
	}
	hash := s.codeHash(d.participant.ID, code)
	var wrong *Error
	err := d.update(ctx, func(p *Participant) ([]Activity, error) {
		wrong = nil
		switch {
		case len(p.VerifyCodeHash) == 0:
			return nil, ErrNoCodeSent
		case p.VerifyAttempts >= VerifyCodeAttempts:
			return nil, ErrCodeExhausted
		case !now.Before(p.VerifyCodeExpires):
			return nil, ErrCodeExpired
		}
		if !hmac.Equal(p.VerifyCodeHash, hash) {
			p.VerifyAttempts++
			if left := VerifyCodeAttempts - p.VerifyAttempts; left > 0 {
				wrong = ErrCodeWrong(left)
			} else {
				wrong = ErrCodeExhausted
			}
			return nil, nil
		}
		p.Verified = true
		p.VerifyCodeHash, p.VerifyAttempts, p.VerifyCodesSent = nil, 0, 0
		// Sessions started before this verification (on another device,
		// say, by someone else) end now.
		p.SessionEpoch++
		return []Activity{{At: now, Action: ActionVerified, Actor: participantActor(p)}}, nil
	})
	if err != nil {
		return s.formError("verify code", err)
	}
	if wrong != nil {
		return wrong
	}
	return nil
}

// codeHash binds a verification code to its participant with the session
// key, so that a copy of the store does not reveal codes by brute force.
func (s *Service) codeHash(participantID, code string) []byte {
	m := hmac.New(sha256.New, s.sessionKey)
	m.Write([]byte("verify\x00" + participantID + "\x00" + code))
	return m.Sum(nil)
}

// formError passes domain errors through and wraps the others.
func (s *Service) formError(what string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrFormNotFound
	}
	if AsError(err) != nil {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

func participantActor(p *Participant) Actor {
	return Actor{Type: ActorParticipant, ID: p.ID, Name: p.Email}
}

// actor is who the activity log names for what v does as participant p:
// p, unless someone acts for them.
func (v *Visitor) actor(p *Participant) Actor {
	if v.acting != nil {
		return *v.acting
	}
	return participantActor(p)
}

// hostName is the one form in which host names are compared (a request's
// Host, an organization's custom domain): lower case, without a :port
// suffix, and without the one trailing dot of a fully qualified name
// ("Onboard.Example.:443" is "onboard.example").
func hostName(host string) string {
	h := strings.ToLower(strings.TrimSpace(host))
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}
