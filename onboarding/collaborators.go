package onboarding

import (
	"context"
	"slices"
	"strings"
	"time"
)

// MaxCollaborators bounds the collaborators of one application.
const MaxCollaborators = 10

// Invitations are emails in the organization's name to an address and
// with a name the applicant chooses: MaxCollaboratorInvites in
// collaboratorInviteWindow bound them per application, so that inviting
// and removing in turn cannot make the form a relay for mail. Twice the
// collaborators an application may have leaves room for slips.
const (
	MaxCollaboratorInvites   = 2 * MaxCollaborators
	collaboratorInviteWindow = 24 * time.Hour
)

// Errors of inviting collaborators, shown to the applicant.
var (
	ErrCollaboratorEmail   = &Error{Kind: KindInvalid, Message: "Enter an email address such as name@example.com.", Details: map[string]string{"email": "must be an email address such as name@example.com"}}
	ErrTooManyCollaborator = Errorf(KindInvalid, "An application can have at most %d collaborators. Remove one before inviting another.", MaxCollaborators)
	ErrParticipantNotFound = &Error{Kind: KindNotFound, Message: "This person is no longer invited."}
	ErrTooManyInvites      = Errorf(KindRateLimited, "You have sent %d invitations in the last 24 hours. Try again tomorrow.", MaxCollaboratorInvites)
)

// ErrAlreadyInvited is the error for inviting an address that already has a link.
func ErrAlreadyInvited(email string) *Error {
	return Errorf(KindInvalid, "%s already has a link to this application.", email)
}

// InviteResult says how an invitation went.
type InviteResult struct {
	Participant Participant
	Link        string
	// Sent is false when the email could not be sent: the collaborator
	// is invited, and the primary contact shares Link themselves.
	Sent bool
}

// InviteCollaborator gives a colleague of the primary participant their own
// link to the form, and emails it. Only the primary participant invites.
func (s *Service) InviteCollaborator(ctx context.Context, v *Visitor, email, name string) (*InviteResult, error) {
	if err := editable(v); err != nil {
		return nil, err
	}
	if !v.Primary() {
		return nil, ErrPrimaryOnly
	}
	email = strings.TrimSpace(email)
	name = strings.Join(strings.Fields(name), " ")
	if !validEmail(email) {
		return nil, ErrCollaboratorEmail
	}
	if len(name) > 200 {
		name = name[:200]
	}
	id, err := newUUID(s.random)
	if err != nil {
		return nil, err
	}
	slug, err := randomToken(s.random, linkSlugBytes)
	if err != nil {
		return nil, err
	}
	p := Participant{ID: id, LinkSlug: slug, Email: email, Name: name, Role: RoleCollaborator, InvitedBy: v.Participant.ID}
	now := s.now().UTC()
	err = s.changeForm(ctx, v, now, func(a *Application) (Activity, error) {
		recent := within(a.CollaboratorInvites, now, collaboratorInviteWindow)
		if len(recent) >= MaxCollaboratorInvites {
			return Activity{}, ErrTooManyInvites
		}
		n := 0
		for _, q := range a.Participants {
			if strings.EqualFold(q.Email, email) {
				return Activity{}, ErrAlreadyInvited(email)
			}
			if q.Role == RoleCollaborator {
				n++
			}
		}
		if n >= MaxCollaborators {
			return Activity{}, ErrTooManyCollaborator
		}
		a.Participants = append(a.Participants, p)
		a.CollaboratorInvites = append(recent, now)
		return Activity{Action: ActionInvited, Detail: email}, nil
	})
	if err != nil {
		return nil, err
	}
	res := &InviteResult{Participant: p, Link: s.ParticipantLink(v.App, &p)}
	if s.mailer != nil {
		msg := collaboratorInvite(v, &p, res.Link)
		if err := s.mailer.Send(context.WithoutCancel(ctx), msg); err != nil {
			s.log.Warn("collaborator invite email failed", "application_id", v.App.ID, "err", err)
		} else {
			res.Sent = true
		}
	}
	return res, nil
}

// RemoveCollaborator takes a collaborator's link away; their sessions end.
func (s *Service) RemoveCollaborator(ctx context.Context, v *Visitor, participantID string) error {
	if err := editable(v); err != nil {
		return err
	}
	if !v.Primary() {
		return ErrPrimaryOnly
	}
	return s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		i := slices.IndexFunc(a.Participants, func(p Participant) bool { return p.ID == participantID && p.Role == RoleCollaborator })
		if i < 0 {
			return Activity{}, ErrParticipantNotFound
		}
		email := a.Participants[i].Email
		a.Participants = slices.Delete(a.Participants, i, i+1)
		return Activity{Action: ActionUninvited, Detail: email}, nil
	})
}

// collaboratorInvite is the email that gives collaborator p their link.
func collaboratorInvite(v *Visitor, p *Participant, link string) CollaboratorInvite {
	inviter := v.Participant.Name
	if inviter == "" {
		inviter = v.Participant.Email
	}
	return CollaboratorInvite{To: Recipient{Email: p.Email, Name: p.Name}, OrgName: v.OrgName(), Inviter: inviter, Company: v.App.CompanyName(), Link: link}
}
