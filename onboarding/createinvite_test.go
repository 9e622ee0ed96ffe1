package onboarding_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// storeCheckingMailer sends by looking at the store first: it records how
// many events the organization had when the invite went out.
type storeCheckingMailer struct {
	store        storetest.Store
	fail         error
	eventsAtSend int
	sends        int
}

func (m *storeCheckingMailer) Send(ctx context.Context, _ onboarding.Message) error {
	events, _, err := m.store.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 100})
	if err != nil {
		return err
	}
	m.eventsAtSend, m.sends = len(events), m.sends+1
	return m.fail
}

// TestCreateStoresInviteOutcomeInOneCommit: create sends the invite before
// it stores anything, then stores the application with the invite's
// outcome at once: `sent` with application.created (status created) then
// application.sent, or `created` with a warning and invite.failed.
func TestCreateStoresInviteOutcomeInOneCommit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fail        error
		wantStatus  onboarding.Status
		wantWarning string
		wantEvents  []string // type: status in the event's data
		wantLog     []string
	}{
		{
			name: "sent", wantStatus: onboarding.StatusSent,
			wantEvents: []string{"application.created: created", "application.sent: sent"},
			wantLog:    []string{onboarding.ActionCreated, onboarding.ActionInviteSent},
		},
		{
			name: "failed", fail: errors.New("mail server down"), wantStatus: onboarding.StatusCreated,
			wantWarning: onboarding.InviteWarning,
			wantEvents:  []string{"application.created: created"},
			wantLog:     []string{onboarding.ActionCreated, onboarding.ActionInviteFailed},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := storetest.Open(t)
			mailer := &storeCheckingMailer{store: store, fail: tc.fail}
			svc, err := onboarding.New(onboarding.Options{
				Store: store, Mailer: mailer, PageCounter: pdf.PageCount,
				Now: time.Now, // events expire by the wall clock
				Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: "std", Configs: []*onboarding.Configuration{
					{ID: "std", Form: onboarding.StandardForm(), Countries: []string{"FR"}},
				}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			_, key, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "test"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.CreateApplication(ctx, key, onboarding.CreateRequest{
				PrimaryContact: &onboarding.ContactInput{Email: "jane@acme.example", Name: "Jane"},
				Country:        "FR", CompanyNumber: "552100554", CompanyName: "Acme SARL",
			})
			if err != nil {
				t.Fatal(err)
			}
			if mailer.sends != 1 || mailer.eventsAtSend != 0 {
				t.Errorf("the invite went out %d times, with %d events stored; want once, before anything was stored", mailer.sends, mailer.eventsAtSend)
			}
			if res.Application.Status != tc.wantStatus || res.Warning != tc.wantWarning {
				t.Errorf("result: status %q, warning %q; want %q, %q", res.Application.Status, res.Warning, tc.wantStatus, tc.wantWarning)
			}
			stored, err := store.Application(ctx, res.Application.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != tc.wantStatus {
				t.Errorf("stored status %q, want %q", stored.Status, tc.wantStatus)
			}

			events, _, err := store.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := len(events) - 1; i >= 0; i-- { // newest first
				var body struct {
					Data struct{ Status string } `json:"data"`
				}
				if err := json.Unmarshal(events[i].Body, &body); err != nil {
					t.Fatal(err)
				}
				got = append(got, string(events[i].Type)+": "+body.Data.Status)
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			var actions []string
			err = store.ActivityLog(ctx, res.Application.ID, func(_ *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
				for e, err := range entries {
					if err != nil {
						return err
					}
					actions = append(actions, e.Action)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLog, actions); diff != "" {
				t.Errorf("activity log (-want +got):\n%s", diff)
			}
		})
	}
}
