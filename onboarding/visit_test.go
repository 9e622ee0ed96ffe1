package onboarding_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"onboard/onboarding"
	"onboard/pdf"
)

// TestVisit: who is at a link, and whether the session they hold (or the
// pre-auth code in the link) signs them in.
func TestVisit(t *testing.T) {
	type visit struct {
		slug, code string
		held       *onboarding.SignIn
	}
	tests := []struct {
		name string
		// visit builds the visit from the application, its primary
		// participant and its pre-auth code.
		visit        func(app *onboarding.Application, p *onboarding.Participant, code string) visit
		advance      time.Duration // moves the clock before the visit
		wantErr      error
		wantSignedIn bool
		wantNow      bool     // signed in by this visit
		wantActions  []string // activity recorded by the visit
	}{
		{
			name: "no session, no code",
			visit: func(app *onboarding.Application, p *onboarding.Participant, _ string) visit {
				return visit{slug: p.LinkSlug}
			},
		},
		{
			name: "the session of this participant at their epoch",
			visit: func(app *onboarding.Application, p *onboarding.Participant, _ string) visit {
				return visit{slug: p.LinkSlug, held: &onboarding.SignIn{AppID: app.ID, ParticipantID: p.ID, Epoch: p.SessionEpoch}}
			},
			wantSignedIn: true, wantActions: []string{onboarding.ActionOpened},
		},
		{
			name: "a session from before a later verification",
			visit: func(app *onboarding.Application, p *onboarding.Participant, _ string) visit {
				return visit{slug: p.LinkSlug, held: &onboarding.SignIn{AppID: app.ID, ParticipantID: p.ID, Epoch: p.SessionEpoch - 1}}
			},
		},
		{
			name: "another participant's session",
			visit: func(app *onboarding.Application, p *onboarding.Participant, _ string) visit {
				return visit{slug: p.LinkSlug, held: &onboarding.SignIn{AppID: app.ID, ParticipantID: "someone-else", Epoch: p.SessionEpoch}}
			},
		},
		{
			name: "a session of another application",
			visit: func(app *onboarding.Application, p *onboarding.Participant, _ string) visit {
				return visit{slug: p.LinkSlug, held: &onboarding.SignIn{AppID: "another", ParticipantID: p.ID, Epoch: p.SessionEpoch}}
			},
		},
		{
			name: "the pre-auth code",
			visit: func(app *onboarding.Application, p *onboarding.Participant, code string) visit {
				return visit{slug: p.LinkSlug, code: code}
			},
			wantSignedIn: true, wantNow: true, wantActions: []string{onboarding.ActionPreAuthUsed, onboarding.ActionOpened},
		},
		{
			name: "a wrong pre-auth code is ignored",
			visit: func(app *onboarding.Application, p *onboarding.Participant, code string) visit {
				return visit{slug: p.LinkSlug, code: code + "x"}
			},
		},
		{
			name: "an expired pre-auth code is ignored",
			visit: func(app *onboarding.Application, p *onboarding.Participant, code string) visit {
				return visit{slug: p.LinkSlug, code: code}
			},
			advance: onboarding.PreAuthTTL,
		},
		{
			name: "an unknown link",
			visit: func(*onboarding.Application, *onboarding.Participant, string) visit {
				return visit{slug: "abcdefghijklmnopqrstuvwx"}
			},
			wantErr: onboarding.ErrFormNotFound,
		},
		{
			name:    "a link too short to be one",
			visit:   func(*onboarding.Application, *onboarding.Participant, string) visit { return visit{slug: "short"} },
			wantErr: onboarding.ErrFormNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			res, err := e.svc.CreateApplication(context.Background(), e.key, onboarding.CreateRequest{
				PrimaryContact: &onboarding.ContactInput{Email: "primary@example.com"},
				Country:        "FR", CompanyNumber: "123456789", CompanyName: "Acme SAS", PreAuth: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			app := res.Application
			e.seed(app.ID, func(a *onboarding.Application) { a.Participants[0].SessionEpoch = 2 })
			app = e.app(app.ID)
			vis := tt.visit(app, &app.Participants[0], res.PreAuthCode)
			e.clock.Advance(tt.advance)
			before := len(e.activity(app.ID))

			v, err := e.svc.Visit(context.Background(), "onboard.example", vis.slug, vis.code, vis.held)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Visit error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if v.SignedIn != tt.wantSignedIn || v.SignedInNow != tt.wantNow {
				t.Errorf("signed in %v, signed in now %v; want %v, %v", v.SignedIn, v.SignedInNow, tt.wantSignedIn, tt.wantNow)
			}
			var actions []string
			for _, a := range e.activity(app.ID)[before:] {
				actions = append(actions, a.Action)
			}
			if len(actions) != len(tt.wantActions) {
				t.Fatalf("activity = %v, want %v", actions, tt.wantActions)
			}
			for i := range actions {
				if actions[i] != tt.wantActions[i] {
					t.Errorf("activity = %v, want %v", actions, tt.wantActions)
				}
			}
			wantStatus := onboarding.StatusSent
			if tt.wantSignedIn {
				wantStatus = onboarding.StatusInProgress
			}
			if got := e.app(app.ID).Status; got != wantStatus {
				t.Errorf("status = %s, want %s", got, wantStatus)
			}
		})
	}
}

// TestVisitWithoutSessionKey: without a session key the form is not
// available at all.
func TestVisitWithoutSessionKey(t *testing.T) {
	e := newFormEnv(t)
	id := e.create()
	svc, err := onboarding.New(onboarding.Options{Store: e.store, PageCounter: pdf.PageCount, Organizations: []*onboarding.Organization{e.org}})
	if err == nil {
		_, err = svc.Visit(context.Background(), "", e.app(id).Participants[0].LinkSlug, "", nil)
	}
	if !errors.Is(err, onboarding.ErrFormUnavailable) {
		t.Errorf("Visit without a session key: %v, want %v", err, onboarding.ErrFormUnavailable)
	}
}
