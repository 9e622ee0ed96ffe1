package onboarding_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestInviteCollaborator(t *testing.T) {
	tests := []struct {
		name        string
		collab      bool  // invite as a collaborator rather than the primary
		existing    int   // collaborators stored before
		mailFail    error // the mailer refuses
		email, who  string
		wantErr     error
		wantName    string
		wantMailed  bool
		wantInvited string // the stored address of the new collaborator
	}{
		{name: "invites and emails a colleague", email: " colleague@example.com ", who: "  Col   League ", wantName: "Col League", wantMailed: true, wantInvited: "colleague@example.com"},
		{name: "a long name is cut to 200 bytes", email: "long@example.com", who: strings.Repeat("n", 250), wantName: strings.Repeat("n", 200), wantMailed: true, wantInvited: "long@example.com"},
		{name: "a failed email still invites", email: "colleague@example.com", mailFail: errors.New("smtp down"), wantInvited: "colleague@example.com"},
		{name: "the tenth collaborator", existing: onboarding.MaxCollaborators - 1, email: "tenth@example.com", wantMailed: true, wantInvited: "tenth@example.com"},
		{name: "no more than the limit", existing: onboarding.MaxCollaborators, email: "eleventh@example.com", wantErr: onboarding.ErrTooManyCollaborator},
		{name: "an address that already has a link", existing: 1, email: "Colleague0@Example.com", wantErr: onboarding.ErrAlreadyInvited("Colleague0@Example.com")},
		{name: "the primary contact's own address", email: "PRIMARY@example.com", wantErr: onboarding.ErrAlreadyInvited("PRIMARY@example.com")},
		{name: "not an address", email: "colleague at example.com", wantErr: onboarding.ErrCollaboratorEmail},
		{name: "an empty address", email: "  ", wantErr: onboarding.ErrCollaboratorEmail},
		{name: "only the primary contact invites", collab: true, existing: 1, email: "x@example.com", wantErr: onboarding.ErrPrimaryOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			for i := range tt.existing {
				e.addCollaborator(id, fmt.Sprintf("colleague%d@example.com", i))
			}
			e.mail.setFail(tt.mailFail)
			v := e.primary(id)
			if tt.collab {
				v = e.visitor(id, "colleague0@example.com")
			}
			mailed := len(e.mail.messages())
			before := len(e.activity(id))
			res, err := e.svc.InviteCollaborator(context.Background(), v, tt.email, tt.who)
			checkErr(t, err, tt.wantErr)
			app := e.app(id)
			if tt.wantErr != nil {
				if n := len(app.Participants); n != 1+tt.existing {
					t.Errorf("%d participants after a refused invite, want %d", n, 1+tt.existing)
				}
				if n := len(e.mail.messages()); n != mailed {
					t.Errorf("a refused invite sent %d emails", n-mailed)
				}
				e.checkActivity(id, before, nil)
				return
			}
			got := app.Participants[len(app.Participants)-1]
			want := onboarding.Participant{ID: res.Participant.ID, LinkSlug: res.Participant.LinkSlug, Email: tt.wantInvited, Name: tt.wantName,
				Role: onboarding.RoleCollaborator, InvitedBy: v.Participant.ID}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stored collaborator (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, res.Participant); diff != "" {
				t.Errorf("result's participant (-want +got):\n%s", diff)
			}
			if len(got.LinkSlug) < 16 || res.Link != e.svc.ParticipantLink(app, &got) || res.Sent != tt.wantMailed {
				t.Errorf("result = link %q (slug %q), sent %v; want the collaborator's link, sent %v", res.Link, got.LinkSlug, res.Sent, tt.wantMailed)
			}
			var wantMail []onboarding.Message
			if tt.wantMailed {
				wantMail = []onboarding.Message{onboarding.CollaboratorInvite{To: onboarding.Recipient{Email: tt.wantInvited, Name: tt.wantName},
					OrgName: "Acme Payments", Inviter: "Pat Primary", Company: "Acme SAS", Link: res.Link}}
			}
			if diff := cmp.Diff(wantMail, e.mail.messages()[mailed:], cmpEmpty); diff != "" {
				t.Errorf("emails (-want +got):\n%s", diff)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionInvited, tt.wantInvited)})
		})
	}
}

// TestCollaboratorInvitesPerDay: inviting and removing in turn cannot
// send mail without end: an application sends MaxCollaboratorInvites in a
// day, then the next is refused, with no email and nothing stored, until
// the oldest is a day old.
func TestCollaboratorInvitesPerDay(t *testing.T) {
	ctx := context.Background()
	e := newFormEnv(t)
	id := e.create()
	invite := func(i int) error {
		t.Helper()
		res, err := e.svc.InviteCollaborator(ctx, e.primary(id), fmt.Sprintf("victim%d@example.com", i), "Call us now")
		if err != nil {
			return err
		}
		if err := e.svc.RemoveCollaborator(ctx, e.primary(id), res.Participant.ID); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	for i := range onboarding.MaxCollaboratorInvites {
		if err := invite(i); err != nil {
			t.Fatalf("invitation %d: %v", i+1, err)
		}
		e.clock.Advance(time.Minute)
	}
	mailed, before := len(e.mail.messages()), len(e.activity(id))
	checkErr(t, invite(onboarding.MaxCollaboratorInvites), onboarding.ErrTooManyInvites)
	if n := len(e.mail.messages()) - mailed; n != 0 {
		t.Errorf("a refused invitation sent %d emails", n)
	}
	e.checkActivity(id, before, nil)
	if n := len(e.app(id).Participants); n != 1 {
		t.Errorf("%d participants after a refused invitation, want 1", n)
	}
	// A day after the first, there is room for one more.
	e.clock.Advance(24*time.Hour - time.Duration(onboarding.MaxCollaboratorInvites)*time.Minute)
	if err := invite(-1); err != nil {
		t.Errorf("an invitation a day after the first: %v", err)
	}
	checkErr(t, invite(-2), onboarding.ErrTooManyInvites)
}

func TestRemoveCollaborator(t *testing.T) {
	tests := []struct {
		name      string
		collab    bool
		remove    string
		wantErr   error
		wantEmail []string // the participants left
	}{
		{name: "removes a collaborator", remove: "collab-colleague@example.com", wantEmail: []string{"primary@example.com", "other@example.com"}},
		{name: "the primary contact cannot be removed", remove: "primary", wantErr: onboarding.ErrParticipantNotFound},
		{name: "an unknown participant", remove: "nobody", wantErr: onboarding.ErrParticipantNotFound},
		{name: "only the primary contact removes", collab: true, remove: "collab-other@example.com", wantErr: onboarding.ErrPrimaryOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.addCollaborator(id, "colleague@example.com")
			e.addCollaborator(id, "other@example.com")
			v := e.primary(id)
			if tt.collab {
				v = e.visitor(id, "colleague@example.com")
			}
			remove := tt.remove
			if remove == "primary" {
				remove = e.app(id).Participants[0].ID
			}
			before := len(e.activity(id))
			err := e.svc.RemoveCollaborator(context.Background(), v, remove)
			checkErr(t, err, tt.wantErr)
			var emails []string
			for _, p := range e.app(id).Participants {
				emails = append(emails, p.Email)
			}
			want := tt.wantEmail
			var wantLog []onboarding.Activity
			if tt.wantErr == nil {
				wantLog = []onboarding.Activity{did(v, onboarding.ActionUninvited, "colleague@example.com")}
			} else {
				want = []string{"primary@example.com", "colleague@example.com", "other@example.com"}
			}
			if diff := cmp.Diff(want, emails); diff != "" {
				t.Errorf("participants (-want +got):\n%s", diff)
			}
			e.checkActivity(id, before, wantLog)
		})
	}
}
