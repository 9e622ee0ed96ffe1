package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// Applications under concurrency and restarts: updates that race, the registry documents queue, a reopened store, reads that never go back.

// concurrentUpdates runs writers updates of app, each through one of
// stores, each adding its own field and an activity entry, and checks
// that every one applied.
func concurrentUpdates(t *testing.T, app *onboarding.Application, stores ...onboarding.Store) {
	ctx := context.Background()
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[i%len(stores)]
			field := fmt.Sprintf("f%02d", i)
			for {
				got, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
					a.Data.Fields[field] = json.RawMessage(`true`)
					return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionFieldsUpdated, t0)}}, nil
				})
				if errors.Is(err, onboarding.ErrWriteConflict) {
					continue // the caller may retry
				}
				if err == nil && string(got.Data.Fields[field]) != "true" {
					err = fmt.Errorf("update %s answered an application without its own change", field)
				}
				errs <- err
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent update: %v", err)
		}
	}
	got, err := stores[0].Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Data.Fields); n != writers+1 {
		t.Errorf("fields after %d concurrent updates = %d, want %d (a lost update)", writers, n, writers+1)
	}
	if n := len(activity(t, stores[0], app.ID)); n != writers {
		t.Errorf("activity entries = %d, want %d", n, writers)
	}
	verifyChains(t, stores[0], "acme")
}

// testConcurrentUpdatesAllApply: conflicting updates of one application
// all apply.
func testConcurrentUpdatesAllApply(t *testing.T, open Opener) {
	s := fresh(t, open)
	concurrentUpdates(t, fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated), s)
}

// testConcurrentUpdatesTwoInstances: conflicting updates of one
// application through two stores on the same data all apply.
func testConcurrentUpdatesTwoInstances(t *testing.T, open Opener) {
	s := fresh(t, open)
	s2 := beside(t, open, s)
	concurrentUpdates(t, fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated), s, s2)
}

// testPendingRegistryDocuments checks the queue of the registry documents
// job: an application stored pending is in it, the update that finishes
// it takes it out, one that sets it pending again puts it back, and it
// survives a restart.
func testPendingRegistryDocuments(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	if got, err := s.PendingRegistryDocuments(ctx); err != nil || len(got) != 0 {
		t.Errorf("pending of an empty store = %v, %v; want none", got, err)
	}
	pending, done, later := fixture.App("acme", 1, onboarding.StatusSent), fixture.App("acme", 2, onboarding.StatusSent), fixture.App("acme", 3, onboarding.StatusSent)
	pending.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
	done.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
	other := fixture.App("acme", 4, onboarding.StatusSent) // not registry-eligible
	for _, app := range []*onboarding.Application{pending, done, later, other} {
		if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(id string, st onboarding.RegistryDocumentsStatus) {
		t.Helper()
		if _, err := s.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.RegistryDocumentsStatus = st
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(done.ID, onboarding.RegistryDocumentsPartial)
	set(later.ID, onboarding.RegistryDocumentsPending)
	want := sorted(pending.ID, later.ID)
	got, err := s.PendingRegistryDocuments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, sorted(got...)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	s = reopen(t, open, s, nil)
	if got, err = s.PendingRegistryDocuments(ctx); err != nil || !cmp.Equal(want, sorted(got...)) {
		t.Errorf("pending after a restart = %v, %v; want %v", got, err, want)
	}
}

// testRestart: what was written is there after a restart.
func testRestart(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0), fixture.Act(onboarding.ActionInviteSent, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log[:1]}); err != nil {
		t.Fatal(err)
	}
	updated, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusSent
		return onboarding.Changes{Log: log[1:]}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	key := &onboarding.APIKey{ClientID: "abc", OrgID: "acme", Name: "ci", SecretHash: []byte{1}, CreatedAt: t0}
	if err := s.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, open, s, nil)
	got, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(updated, got); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if got, err := s.ApplicationBySlug(ctx, app.Participants[0].LinkSlug); err != nil || got.ID != app.ID {
		t.Errorf("ApplicationBySlug after reopen = %v, %v", got, err)
	}
	listed, _, _ := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Status: onboarding.StatusSent, Limit: 10})
	if len(listed) != 1 {
		t.Errorf("status list after reopen lists %d, want 1", len(listed))
	}
	wantActivity(t, s, app.ID, log)
	if k, err := s.APIKey(ctx, "abc"); err != nil || !cmp.Equal(key, k) {
		t.Errorf("APIKey after reopen = %+v, %v", k, err)
	}
	// The log goes on chaining after a restart.
	if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionOpened, t0)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	verifyChains(t, s, "acme")
}

// testReadsNeverGoBack: while applications are updated, every read that
// starts after an update returned finds that update or a later one, and
// each reader's reads of an application never go back.
func testReadsNeverGoBack(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	const apps, updates, readers = 4, 60, 4
	ids := make([]string, apps)
	for i := range ids {
		ids[i] = fixture.StoredApp(t, s, "acme", i, onboarding.StatusCreated).ID
	}
	// read reads the industry field's number of application id (0: unset).
	read := func(id string) (int, error) {
		n := 0
		err := s.ReadApplication(ctx, id, func(a *onboarding.Application) error {
			if v, ok := a.Data.Fields["industry"]; ok {
				return json.Unmarshal(v, &n)
			}
			return nil
		})
		return n, err
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= updates; n++ {
				if _, err := s.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
					a.Data.Fields["industry"] = json.RawMessage(fmt.Sprint(n))
					return onboarding.Changes{}, nil
				}); err != nil {
					t.Error(err)
					return
				}
				if got, err := read(id); err != nil || got != n {
					t.Errorf("app %d: update %d returned, then read %d, %v", i, n, got, err)
					return
				}
			}
		}()
	}
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := make([]int, apps)
			for k := 0; k < 4*updates; k++ {
				i := (r + k) % apps
				n, err := read(ids[i])
				if err != nil {
					t.Error(err)
					return
				}
				if n < last[i] {
					t.Errorf("reader %d, app %d: read update %d after %d", r, i, n, last[i])
					return
				}
				last[i] = n
			}
		}()
	}
	wg.Wait()
}
