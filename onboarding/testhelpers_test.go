package onboarding_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// submittingStore is a Store on which the applicant submits the
// application right after the test helper's first entry is stored: the
// helper then finds the form frozen at its next step.
type submittingStore struct {
	storetest.Store
}

func (s submittingStore) UpdateApplication(ctx context.Context, id string, change func(*onboarding.Application) (onboarding.Changes, error)) (*onboarding.Application, error) {
	helper := false
	app, err := s.Store.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
		ch, err := change(a)
		helper = slices.ContainsFunc(ch.Log, func(x onboarding.Activity) bool { return x.Action == onboarding.ActionTestHelperSubmit })
		return ch, err
	})
	if err == nil && helper {
		_, err = s.Store.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = onboarding.StatusSubmitted
			return onboarding.Changes{}, nil
		})
	}
	return app, err
}

// TestSubmitForTestRace: an application submitted while the helper works
// answers the helper's status error, not the form's.
func TestSubmitForTestRace(t *testing.T) {
	dir := t.TempDir()
	store := storetest.Open(t)
	files, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: submittingStore{store}, PageCounter: pdf.PageCount, Blobs: files,
		PublicURL: "https://onboard.example", SessionKey: []byte(strings.Repeat("k", 32)),
		Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: "std", Configs: []*onboarding.Configuration{
			{ID: "std", Form: onboarding.StandardForm(), Countries: []string{"FR"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full, _, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := svc.Authenticate(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.CreateApplication(ctx, key, onboarding.CreateRequest{
		PrimaryContact: &onboarding.ContactInput{Email: "primary@example.com"},
		Country:        "FR", CompanyNumber: "123456789", CompanyName: "Acme SAS",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.SubmitForTest(ctx, key, res.Application.ID, nil)
	want := onboarding.ErrCannotSubmit(onboarding.StatusSubmitted)
	if diff := cmp.Diff(want, onboarding.AsError(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
