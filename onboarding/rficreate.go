package onboarding

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Limits of RFI requests.
const (
	// RFIPreAuthTTL is how long an RFI pre-auth code works.
	RFIPreAuthTTL = 10 * time.Minute
	// rfiPreAuthCodeLength is the length of an RFI pre-auth code.
	rfiPreAuthCodeLength = 16
	// DefaultRFIExpiryDays is an agent's expiry when the configuration
	// gives none.
	DefaultRFIExpiryDays = 14
)

// Activity of RFI requests.
const (
	ActionRFICreated   = "rfi_request.created"
	ActionRFIExpired   = "rfi_request.expired"
	ActionRFICompleted = "rfi_request.completed"
)

// RFICreateRequest is the body of create RFI request; pointers
// tell a member left out from one given empty where that matters.
type RFICreateRequest struct {
	CompanyName      string
	Country          string
	CompanyNumber    string
	PrimaryContact   *RFIContactInput
	AgentID          string
	PreAuthenticated bool
	// Idempotency, when set, is the request's Idempotency-Key: its
	// outcome is committed with the request, and again with the email's.
	Idempotency *Idempotency
}

// RFIContactInput is the primary contact of an RFI request.
type RFIContactInput struct {
	Name  string
	Email string
	Role  string
}

// RFICreated is what create RFI request answers.
type RFICreated struct {
	Request     *RFIRequest
	Link        string // carries auth_code when pre-authenticated
	PreAuthCode string // empty unless asked for
	Warning     string // set when the email to the contact failed
}

// rfiRequiredFields are the members every create names in its
// missing-fields error, in this order.
var rfiRequiredFields = [...]string{"company_name", "country", "primary_contact.name", "primary_contact.email"}

// rfiExample is the complete valid body the missing-fields error shows.
func rfiExample() map[string]any {
	return map[string]any{
		"company_name":   "Northwind Trading Ltd",
		"country":        "GB",
		"company_number": "10000001",
		"primary_contact": map[string]any{
			"name": "Jane Smith", "email": "jane@northwind.example", "role": "Director",
		},
		"pre_authenticated": false,
	}
}

// RFIInviteWarning is the create warning when the email to the contact
// could not be sent.
const RFIInviteWarning = "The email to the contact could not be sent. The RFI request was created; share the link with the contact."

// CreateRFIRequest validates req in the order of docs/api.md, checks a
// GB company against the registry, stores the request with its
// rfi_request.created event and emails the contact its link.
func (s *Service) CreateRFIRequest(ctx context.Context, k *APIKey, req RFICreateRequest) (*RFICreated, error) {
	if err := Authorize(k, ScopeRFICreate); err != nil {
		return nil, err
	}
	org := s.orgs[k.OrgID]
	in, err := checkRFIRequest(req)
	if err != nil {
		return nil, err
	}
	agent, err := pickAgent(org, in.AgentID)
	if err != nil {
		return nil, err
	}
	var registered string
	if in.Country == registryDocumentsCountry && s.registry.Supports(in.Country, FeatureVerify) {
		rctx, cancel := context.WithTimeout(ctx, s.registryBudget)
		c, err := s.registry.VerifyCompany(rctx, in.Country, in.CompanyNumber, "")
		cancel()
		if err != nil {
			return nil, err
		}
		registered, in.CompanyNumber = c.Name, c.Number
	}

	now := s.now().UTC()
	r, code, err := s.newRFIRequest(org, agent, in, registered, now)
	if err != nil {
		return nil, err
	}
	log := []Activity{{At: now, Action: ActionRFICreated, Actor: keyActor(k), Detail: "agent " + agent.ID}}
	if code != "" {
		log = append(log, Activity{At: now, Action: ActionPreAuthIssued, Actor: keyActor(k)})
	}
	ev, err := s.rfiEvent(EventRFIRequestCreated, r, now)
	if err != nil {
		return nil, err
	}
	done := req.Idempotency.outcome(r.ID)
	if done != nil {
		if done.SealedCode, err = req.Idempotency.seal(code); err != nil {
			return nil, err
		}
		done.Mail = MailUnknown
	}
	if err := s.store.CreateRFIRequest(ctx, r, Changes{Log: log, Events: []*Event{ev}, Idempotent: done}); err != nil {
		return nil, fmt.Errorf("create rfi request: %w", err)
	}
	s.wakeWebhooks()
	s.wakeRFIExpiry(r.ExpiresAt)
	// Committed: nothing may fail the request from here on.
	ctx = context.WithoutCancel(ctx)
	link := s.RFILink(r, r.Primary())
	res := &RFICreated{Request: r, Link: link, PreAuthCode: code}
	if code != "" {
		res.Link = withAuthCode(link, code)
	}
	if !s.sendRFIInvite(ctx, org, r, link, done) {
		res.Warning = RFIInviteWarning
	}
	return res, nil
}

// ReplayRFICreate rebuilds the answer of the create whose outcome is o,
// and whose pre-auth code, opened from o.SealedCode, is code: the request
// as it is now, its link, and the warning unless the email was sent.
func (s *Service) ReplayRFICreate(ctx context.Context, k *APIKey, o *IdempotentOutcome, code string) (*RFICreated, error) {
	r, err := s.rfiRequest(ctx, k.OrgID, o.ID)
	if err != nil {
		return nil, err
	}
	link := s.RFILink(r, r.Primary())
	res := &RFICreated{Request: r, Link: link, PreAuthCode: code}
	if code != "" {
		res.Link = withAuthCode(link, code)
	}
	if o.Mail != MailSent {
		res.Warning = RFIInviteWarning
	}
	return res, nil
}

// checkRFIRequest applies the body checks of docs/api.md in order and
// returns the request trimmed and normalised.
func checkRFIRequest(req RFICreateRequest) (RFICreateRequest, error) {
	var c RFIContactInput
	if req.PrimaryContact != nil {
		c = *req.PrimaryContact
	}
	in := RFICreateRequest{
		CompanyName:      strings.TrimSpace(req.CompanyName),
		Country:          strings.TrimSpace(req.Country),
		CompanyNumber:    strings.TrimSpace(req.CompanyNumber),
		PrimaryContact:   &RFIContactInput{Name: strings.TrimSpace(c.Name), Email: strings.TrimSpace(c.Email), Role: strings.TrimSpace(c.Role)},
		AgentID:          strings.TrimSpace(req.AgentID),
		PreAuthenticated: req.PreAuthenticated,
	}
	values := [...]string{in.CompanyName, in.Country, in.PrimaryContact.Name, in.PrimaryContact.Email}
	var missing []string
	for i, v := range values {
		if v == "" {
			missing = append(missing, rfiRequiredFields[i])
		}
	}
	switch {
	case len(missing) == 1 && missing[0] == "country":
		return in, ErrRFICountryRequired
	case len(missing) > 0:
		return in, &Error{Kind: KindInvalid, Message: "Missing required fields",
			Required: rfiRequiredFields[:], Missing: missing, Example: rfiExample()}
	}
	if !validEmail(in.PrimaryContact.Email) {
		return in, ErrEmailInvalid
	}
	if upper := strings.ToUpper(in.Country); IsCountryCode(upper) {
		in.Country = upper
	} else {
		return in, ErrInvalidRFICountry(ClipInput(in.Country))
	}
	if in.Country == registryDocumentsCountry && in.CompanyNumber == "" {
		return in, ErrUKCompanyNumber
	}
	// The same checks, limits and messages as an application's create.
	for _, m := range []struct{ name, value string }{
		{"company_name", in.CompanyName}, {"company_number", in.CompanyNumber},
		{"primary_contact.name", in.PrimaryContact.Name}, {"primary_contact.role", in.PrimaryContact.Role},
	} {
		if err := checkRequestText(m.name, m.value, DefaultNameMaxLength); err != nil {
			return in, err
		}
	}
	return in, nil
}

// pickAgent returns the agent a request names, or org's default.
func pickAgent(org *Organization, id string) (*RFIAgent, error) {
	if id == "" {
		if a := org.defaultAgent(); a != nil {
			return a, nil
		}
		return nil, ErrNoActiveAgent
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, ErrInvalidAgentID
	}
	a := org.agent(u.String())
	if a == nil {
		return nil, ErrInvalidAgentID
	}
	if !a.Active {
		return nil, ErrAgentNotActive
	}
	return a, nil
}

func (s *Service) newRFIRequest(org *Organization, agent *RFIAgent, in RFICreateRequest, registered string, now time.Time) (*RFIRequest, string, error) {
	ids, err := s.newRecordIDs(now)
	if err != nil {
		return nil, "", err
	}
	id, seq := ids.id, ids.seq
	c := in.PrimaryContact
	p := Participant{ID: ids.participantID, LinkSlug: ids.slug, Email: c.Email, Name: c.Name, Role: RolePrimary}
	var code string
	if in.PreAuthenticated {
		if code, err = randomString(s.random, rfiPreAuthCodeLength, alphanumeric); err != nil {
			return nil, "", err
		}
		p.PreAuthHash, p.PreAuthExpires = hashSecret(code), now.Add(RFIPreAuthTTL)
	}
	days := agent.ExpiryDays
	if days <= 0 {
		days = DefaultRFIExpiryDays
	}
	r := &RFIRequest{
		ID: id, Seq: seq, OrgID: org.ID, AgentID: agent.ID, Status: RFIActive,
		CompanyName: in.CompanyName, RegisteredName: registered, CompanyNumber: in.CompanyNumber, Country: in.Country,
		Contact:      Contact{Name: c.Name, Email: c.Email, Role: c.Role},
		Participants: []Participant{p},
		Documents:    make(map[string]Document),
		CreatedAt:    now, UpdatedAt: now, ExpiresAt: now.AddDate(0, 0, days),
	}
	return r, code, nil
}

// RFILink is p's link to r's page: on the organization's custom domain when
// one is active, else on the public URL.
func (s *Service) RFILink(r *RFIRequest, p *Participant) string {
	if p == nil {
		return ""
	}
	return s.linkURL(r.OrgID, "/r/"+p.LinkSlug)
}

// sendRFIInvite emails the contact the request's link and records the
// outcome; false when the email could not be sent.
func (s *Service) sendRFIInvite(ctx context.Context, org *Organization, r *RFIRequest, link string, done *IdempotentOutcome) bool {
	p := r.Primary()
	var labels []string
	for _, f := range s.RFIDocumentFields(r) {
		labels = append(labels, f.Label)
	}
	err := errNoMailer
	if s.mailer != nil {
		err = s.mailer.Send(ctx, RFIInvite{To: Recipient{Email: p.Email, Name: p.Name}, OrgName: org.DisplayName(),
			Company: r.DisplayName(), Documents: labels, Link: link, ExpiresAt: r.ExpiresAt})
	}
	now := s.now().UTC()
	a := Activity{At: now, Action: ActionInviteSent, Actor: Actor{Type: ActorSystem}}
	if err != nil {
		s.log.Warn("rfi request email failed", "rfi_request_id", r.ID, "err", err)
		a.Action, a.Detail = ActionInviteFailed, inviteFailure(err)
	}
	var outcome *IdempotentOutcome
	if done != nil {
		o := *done
		o.Mail = mailOutcome(err)
		outcome = &o
	}
	if _, uerr := s.store.UpdateRFIRequest(ctx, r.ID, func(*RFIRequest) (Changes, error) {
		return Changes{Log: []Activity{a}, Idempotent: outcome}, nil
	}); uerr != nil {
		s.log.Error("record rfi request email", "rfi_request_id", r.ID, "err", uerr)
	}
	return err == nil
}

// DisplayName is the company's name as the contact reads it: the registered
// name when the registry gave one.
func (r *RFIRequest) DisplayName() string {
	if r.RegisteredName != "" {
		return r.RegisteredName
	}
	return r.CompanyName
}
