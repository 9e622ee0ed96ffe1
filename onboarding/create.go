package onboarding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
)

// PreAuthTTL is how long an application pre-auth code works.
const PreAuthTTL = 72 * time.Hour

const (
	preAuthCodeLength = 32
	linkSlugBytes     = 24 // 192 bits
	maxEmailLength    = 254
)

// CreateRequest is the body of create application.
type CreateRequest struct {
	PrimaryContact *ContactInput
	Country        string
	ConfigID       string
	PreAuth        bool
	CompanyNumber  string
	CompanyName    string
	// Idempotency, when set, is the request's Idempotency-Key: its
	// outcome is committed with the application.
	Idempotency *Idempotency
}

// ContactInput is the primary contact as the partner sends it.
type ContactInput struct {
	Email string
	Name  string
}

// CreateResult is what create application answers.
type CreateResult struct {
	Application *Application
	Link        string
	PreAuthCode string // empty unless asked for
	Warning     string // set when the invite email failed
}

// InviteWarning is the create warning when the invite email could not be sent.
const InviteWarning = "The invite email could not be sent. The application was created; share the link with the applicant or resend the invite."

// CreateApplication validates req in the order of the API's error table (docs/api.md),
// checks the company against its registry, sends the invite email and
// stores the application with the invite's outcome in one commit. A failed
// email never loses the application: it is stored `created` and the result
// carries a warning.
func (s *Service) CreateApplication(ctx context.Context, k *APIKey, req CreateRequest) (*CreateResult, error) {
	if err := Authorize(k, ScopeApplicationsCreate); err != nil {
		return nil, err
	}
	org := s.orgs[k.OrgID]
	email, name, err := validateContact(req.PrimaryContact)
	if err != nil {
		return nil, err
	}
	cfg, err := s.resolveConfig(org, req.ConfigID)
	if err != nil {
		return nil, err
	}
	number := strings.TrimSpace(req.CompanyNumber)
	companyName := strings.TrimSpace(req.CompanyName)
	if number == "" && !cfg.CompanySelection {
		return nil, ErrCompanyNumberRequired
	}
	rawCountry := strings.TrimSpace(req.Country)
	if rawCountry == "" {
		return nil, ErrCountryRequired
	}
	country := strings.ToUpper(rawCountry)
	if !cfg.AllowsCountry(country) {
		return nil, ErrCountryNotSupported(rawCountry)
	}
	if number == "" && !s.registry.Supports(country, FeatureSearch) {
		return nil, ErrSearchNotAvailable(rawCountry)
	}
	if number != "" && companyName == "" {
		return nil, ErrCompanyNameRequired
	}
	if err := checkRequestText("company_number", number, DefaultNameMaxLength); err != nil {
		return nil, err
	}
	if err := checkRequestText("company_name", companyName, DefaultNameMaxLength); err != nil {
		return nil, err
	}
	var company *companyCheck
	if number != "" && s.registry.Supports(country, FeatureVerify) {
		if company, err = s.checkCompany(ctx, country, number, companyName); err != nil {
			return nil, err
		}
	}

	now := s.now().UTC()
	app, code, err := s.newApplication(org, cfg, country, email, name, number, companyName, company, req.PreAuth, now)
	if err != nil {
		return nil, err
	}
	created := Activity{At: now, Action: ActionCreated, Actor: keyActor(k)}
	log := []Activity{created}
	if code != "" {
		log = append(log, Activity{At: now, Action: ActionPreAuthIssued, Actor: keyActor(k)})
	}
	if company != nil && company.partiesFailed {
		log = append(log, Activity{At: now, Action: ActionRegistryPartiesUnavailable, Actor: Actor{Type: ActorSystem},
			Detail: "officers and persons with significant control could not be fetched; the applicant enters them"})
	}
	res := &CreateResult{Application: app, Link: s.ParticipantLink(app, app.Primary()), PreAuthCode: code}
	events, err := s.applicationEvents(nil, app, now)
	if err != nil {
		return nil, err
	}
	done := req.Idempotency.outcome(app.ID)
	if done != nil {
		if done.SealedCode, err = req.Idempotency.seal(code); err != nil {
			return nil, err
		}
	}
	// The invite goes out before the application is stored, so that one
	// synced commit records both the application and the invite's outcome
	// (status `sent`, or `created` and a warning). Once it is sent, the
	// client going away must not stop the commit. A crash or a failed
	// commit after the send leaves the applicant a link to nothing, and
	// the partner, who got no answer, retries; storing first would instead
	// leave a second application behind the retry and cost a second commit.
	ctx = context.WithoutCancel(ctx)
	sendErr := s.mailInvite(ctx, org, app, res.Link)
	sentAt := s.now().UTC()
	if sendErr == nil {
		unsent := *app
		app.Status, app.UpdatedAt = StatusSent, sentAt
		sent, err := s.applicationEvents(&unsent, app, sentAt)
		if err != nil {
			return nil, err
		}
		events = append(events, sent...)
	} else {
		res.Warning = InviteWarning
	}
	log = append(log, inviteActivity(sendErr, sentAt))
	if done != nil {
		done.Mail = mailOutcome(sendErr)
	}
	if err := s.store.CreateApplication(ctx, app, Changes{Log: log, Events: events, Idempotent: done}); err != nil {
		if sendErr == nil {
			s.log.Error("invite sent for an application that could not be stored", "application_id", app.ID, "err", err)
		}
		return nil, fmt.Errorf("create application: %w", err)
	}
	s.wakeWebhooks()
	if app.RegistryDocumentsStatus == RegistryDocumentsPending {
		s.wakeRegistryDocuments()
	}
	return res, nil
}

// ReplayCreate rebuilds the answer of the create whose outcome is o, and
// whose pre-auth code, opened from o.SealedCode, is code: the application
// as created, with its primary participant, link and the invite's warning.
func (s *Service) ReplayCreate(ctx context.Context, k *APIKey, o *IdempotentOutcome, code string) (*CreateResult, error) {
	app, err := s.application(ctx, k, o.ID)
	if err != nil {
		return nil, err
	}
	p := app.Primary()
	if p == nil {
		return nil, fmt.Errorf("replay create of application %s: no primary participant", app.ID)
	}
	app.Participants = []Participant{*p}
	res := &CreateResult{Application: app, Link: s.ParticipantLink(app, p), PreAuthCode: code}
	if o.Mail != MailSent {
		res.Warning = InviteWarning
	}
	return res, nil
}

func validateContact(c *ContactInput) (email, name string, err error) {
	if c == nil || strings.TrimSpace(c.Email) == "" {
		return "", "", ErrEmailRequired
	}
	email = strings.TrimSpace(c.Email)
	if !validEmail(email) {
		return "", "", ErrEmailInvalid
	}
	name = strings.TrimSpace(c.Name)
	if err := checkRequestText("primary_contact.name", name, DefaultNameMaxLength); err != nil {
		return "", "", err
	}
	return email, name, nil
}

// Limits of an e-mail address: its local part (RFC 5321 §4.5.3.1.1) and
// its domain (RFC 1035 §2.3.4).
const (
	maxLocalLength  = 64
	maxDomainLength = 253
	maxLabelLength  = 63
)

// validEmail accepts a bare UTF-8 address (no display name, no control
// characters, nothing invisible: see invisibleInEmail) with a local part
// of at most 64 bytes and a domain of at least two labels, each of 1 to 63
// letters, digits and hyphens (letters of any script, for
// internationalized domains) that neither starts nor ends with a hyphen,
// at most 253 in all: no address literal such as [127.0.0.1].
func validEmail(s string) bool {
	if len(s) > maxEmailLength || !utf8.ValidString(s) || strings.ContainsAny(s, " <>") || hasControl(s, false) || invisibleInEmail(s) {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at <= maxLocalLength && validDomain(s[at+1:])
}

// invisibleInEmail reports whether s has a character that is not seen as
// written: a format character (Unicode Cf: the bidirectional controls such
// as U+202E, which reorder what follows them, zero-width spaces and
// joiners, the soft hyphen, the byte order mark), a space or separator
// (Z: the no-break space, U+2028) or a private-use character (Co). An
// address is typed and read by people and goes into mail headers: one
// that shows as another, or as nothing, is refused rather than sent.
func invisibleInEmail(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && unicode.In(r, unicode.Cf, unicode.Z, unicode.Co) {
			return true
		}
	}
	return false
}

// validDomain reports whether domain is a host name of two or more labels
// that DNS could hold.
func validDomain(domain string) bool {
	labels := strings.Split(domain, ".")
	if len(domain) > maxDomainLength || len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > maxLabelLength || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return false
		}
		for _, r := range l {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r) {
				return false
			}
		}
	}
	return true
}

// resolveConfig picks the configuration for a new application.
func (s *Service) resolveConfig(org *Organization, id string) (*Configuration, error) {
	if id == "" {
		cfg, ok := s.configs[org.DefaultConfig]
		if org.DefaultConfig == "" || !ok {
			return nil, ErrNoActiveConfig
		}
		return cfg, nil
	}
	cfg, ok := s.configs[id]
	if !ok {
		return nil, ErrInvalidConfigID
	}
	if cfg.OrgID != org.ID {
		return nil, ErrConfigForbidden
	}
	return cfg, nil
}

func (s *Service) newApplication(org *Organization, cfg *Configuration, country, email, name, number, companyName string, check *companyCheck, preAuth bool, now time.Time) (*Application, string, error) {
	ids, err := s.newRecordIDs(now)
	if err != nil {
		return nil, "", err
	}
	id, seq := ids.id, ids.seq
	primary := Participant{ID: ids.participantID, LinkSlug: ids.slug, Email: email, Name: name, Role: RolePrimary}
	var code string
	if preAuth {
		if code, err = randomString(s.random, preAuthCodeLength, alphanumeric); err != nil {
			return nil, "", err
		}
		primary.PreAuthHash = hashSecret(code)
		primary.PreAuthExpires = now.Add(PreAuthTTL)
	}
	app := &Application{
		ID:           id,
		Seq:          seq,
		OrgID:        org.ID,
		ConfigID:     cfg.ID,
		Country:      country,
		Status:       StatusCreated,
		Participants: []Participant{primary},
		CreatedAt:    now,
		UpdatedAt:    now,
		Data: Data{
			Fields: make(map[string]json.RawMessage),
			Meta:   Meta{PrimaryContact: &Contact{Name: name, Email: email}},
		},
	}
	if err := s.applyCompany(app, cfg, number, companyName, check, func() (string, error) { return newUUID(s.random) }, now); err != nil {
		return nil, "", err
	}
	return app, code, nil
}

// prefill sets each value the form has a field for and accepts; a value the
// form would refuse (a registry address missing a city, say) is left for the
// applicant to enter rather than failing the create.
func (s *Service) prefill(form *Form, fields map[string]json.RawMessage, values map[string]any, now time.Time) {
	for id, v := range values {
		f, ok := form.Field(id)
		if !ok || !f.Patchable() {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			continue
		}
		norm, err := f.Normalize(raw, now)
		if err != nil || norm == nil {
			s.log.Debug("prefill skipped", "field", id, "err", err)
			continue
		}
		fields[id] = norm
	}
}

// ParticipantLink is p's form URL: on the organization's custom domain when
// one is active, else on the public URL.
func (s *Service) ParticipantLink(app *Application, p *Participant) string {
	if p == nil {
		return ""
	}
	return s.linkURL(app.OrgID, "/a/"+p.LinkSlug)
}

// linkURL is path on the organization's custom domain when one is active,
// else on the public URL: where applicants' links point.
func (s *Service) linkURL(orgID, path string) string {
	if org, ok := s.orgs[orgID]; ok && org.CustomDomainActive && org.CustomDomain != "" {
		return "https://" + org.CustomDomain + path
	}
	return s.publicURL + path
}

// recordIDs are what a new application or RFI request is given: its id, its
// primary participant's id and link slug, and its creation sequence.
type recordIDs struct {
	id, participantID, slug string
	seq                     ulid.ULID
}

// newRecordIDs mints the ids of a new application or RFI request created
// at now, always in the same order, so that a seeded random source gives
// the same ids.
func (s *Service) newRecordIDs(now time.Time) (recordIDs, error) {
	var ids recordIDs
	var err error
	if ids.id, err = newUUID(s.random); err != nil {
		return recordIDs{}, err
	}
	if ids.participantID, err = newUUID(s.random); err != nil {
		return recordIDs{}, err
	}
	if ids.slug, err = randomToken(s.random, linkSlugBytes); err != nil {
		return recordIDs{}, err
	}
	if ids.seq, err = s.nextSeq(now); err != nil {
		return recordIDs{}, err
	}
	return ids, nil
}

// withAuthCode appends the auth_code query parameter to a link.
func withAuthCode(link, code string) string {
	return link + "?auth_code=" + url.QueryEscape(code)
}

// sendInvite emails the primary participant of a stored application
// their link and records the outcome. When the transport accepts the
// message the application moves to `sent` and the updated application is
// returned. When sending fails, the failure is recorded in the activity
// log and (nil, nil) is returned. An error means the message was sent but
// the status change could not be recorded. done, when not nil, gives the
// outcome of the request with an Idempotency-Key that sends the invite,
// committed with the record of the email's outcome.
func (s *Service) sendInvite(ctx context.Context, org *Organization, app *Application, link string, done func(MailOutcome) func(*Application) *IdempotentOutcome) (*Application, error) {
	sendErr := s.mailInvite(ctx, org, app, link)
	now := s.now().UTC()
	entry := inviteActivity(sendErr, now)
	var outcome func(*Application) *IdempotentOutcome
	if done != nil {
		outcome = done(mailOutcome(sendErr))
	}
	if sendErr != nil {
		_, err := s.updateApplicationFor(ctx, app.ID, outcome, func(a *Application) ([]Activity, error) {
			return []Activity{entry}, nil
		})
		if err != nil {
			s.log.Error("record invite failure", "application_id", app.ID, "err", err)
		}
		return nil, nil
	}
	updated, err := s.updateApplicationFor(ctx, app.ID, outcome, func(a *Application) ([]Activity, error) {
		if a.Status == StatusCreated {
			a.Status = StatusSent
			a.UpdatedAt = now
		}
		return []Activity{entry}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("record invite: %w", err)
	}
	return updated, nil
}

// mailInvite hands the primary participant's invite to the mail
// transport; a failure is logged and returned.
func (s *Service) mailInvite(ctx context.Context, org *Organization, app *Application, link string) error {
	if s.mailer == nil {
		return errNoMailer
	}
	p := app.Primary()
	err := s.mailer.Send(ctx, Invite{To: Recipient{Email: p.Email, Name: p.Name}, OrgName: org.DisplayName(), Company: app.CompanyName(), Link: link})
	if err != nil {
		s.log.Warn("invite email failed", "application_id", app.ID, "err", err)
	}
	return err
}

// inviteActivity is the activity entry of an invite's outcome: sent, or
// failed with the reason.
func inviteActivity(sendErr error, at time.Time) Activity {
	system := Actor{Type: ActorSystem}
	if sendErr != nil {
		return Activity{At: at, Action: ActionInviteFailed, Actor: system, Detail: inviteFailure(sendErr)}
	}
	return Activity{At: at, Action: ActionInviteSent, Actor: system}
}

var errNoMailer = errors.New("no mail transport is configured")

// inviteFailure says why an invite failed, for the activity log: the
// Mailer's reason when it gives one.
func inviteFailure(err error) string {
	if se, ok := errors.AsType[*SendError](err); ok {
		return se.Reason
	}
	if errors.Is(err, errNoMailer) {
		return err.Error()
	}
	return "the mail transport failed"
}
