package onboarding_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// racingStore is the real store with one seam: then runs once, right after
// the next UpdateApplication returns, as another request's change that
// commits at that moment would.
type racingStore struct {
	storetest.Store
	mu   sync.Mutex
	then func()
}

func (s *racingStore) UpdateApplication(ctx context.Context, id string, change func(*onboarding.Application) (onboarding.Changes, error)) (*onboarding.Application, error) {
	app, err := s.Store.UpdateApplication(ctx, id, change)
	s.mu.Lock()
	then := s.then
	s.then = nil
	s.mu.Unlock()
	if then != nil {
		then()
	}
	return app, err
}

// TestRepeatedDecisionAnswersTheDecidedState: a decision that repeats the
// latest answers with the application as its transaction read it, not as a
// later change left it.
func TestRepeatedDecisionAnswersTheDecidedState(t *testing.T) {
	ctx := context.Background()
	inner := storetest.Open(t)
	store := &racingStore{Store: inner}
	clock := &formClock{now: formNow}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Now: clock.Now, PageCounter: pdf.PageCount, PublicURL: "https://onboard.example",
		SessionKey: []byte(strings.Repeat("k", 32)),
		Organizations: []*onboarding.Organization{{ID: "acme", Name: "Acme Payments", DefaultConfig: configStd, Configs: []*onboarding.Configuration{
			{ID: configStd, Form: onboarding.StandardForm(), Countries: []string{"FR"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "decisions"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := svc.Authenticate(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	created, err := svc.CreateApplication(ctx, key, onboarding.CreateRequest{
		PrimaryContact: &onboarding.ContactInput{Email: "primary@example.com", Name: "Pat Primary"},
		Country:        "FR", CompanyNumber: "123456789", CompanyName: "Acme SAS",
	})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Application.ID
	if _, err := inner.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusSubmitted
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	referred := onboarding.DecisionInput{Type: onboarding.DecisionReferred}
	if _, err := svc.RecordDecision(ctx, key, id, referred); err != nil {
		t.Fatal(err)
	}
	decided, err := inner.Application(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The repeat reads the application referred; the approval commits
	// right after.
	store.mu.Lock()
	store.then = func() {
		if _, err := svc.RecordDecision(ctx, key, id, onboarding.DecisionInput{Type: onboarding.DecisionApproved}); err != nil {
			t.Error(err)
		}
	}
	store.mu.Unlock()
	again, err := svc.RecordDecision(ctx, key, id, referred)
	if err != nil {
		t.Fatal(err)
	}
	if !again.AlreadyRecorded {
		t.Fatalf("the repeat was recorded again: %+v", again.Decision)
	}
	if diff := cmp.Diff(decided, again.Application); diff != "" {
		t.Errorf("the repeat's application, against the one the decision left (-want +got):\n%s", diff)
	}
	if now, err := inner.Application(ctx, id); err != nil || now.Status != onboarding.StatusApproved {
		t.Errorf("stored application = %+v, %v; want the approval that followed", now, err)
	}
}
