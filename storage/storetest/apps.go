package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var applicationCases = []suiteCase{
	{"RoundTrip", testApplicationRoundTrip},
	{"ReadApplication", testReadApplication},
	{"BySlug", testApplicationBySlug},
	{"Update", testUpdateApplication},
	{"List", testListApplications},
	{"ListBigNextToSmall", testListBigNextToSmall},
	{"ConcurrentUpdatesAllApply", testConcurrentUpdatesAllApply},
	{"ConcurrentUpdatesTwoInstances", testConcurrentUpdatesTwoInstances},
	{"ReadsNeverGoBack", testReadsNeverGoBack},
	{"PendingRegistryDocuments", testPendingRegistryDocuments},
	{"Restart", testRestart},
}

// testApplicationRoundTrip: a created application reads back as it was
// stored, with its activity; a second create of its id fails; a missing
// or malformed id is ErrNotFound.
func testApplicationRoundTrip(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(app, got); diff != "" {
		t.Errorf("Application() mismatch (-want +got):\n%s", diff)
	}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateApplication(duplicate) = %v, want an error", err)
	}
	// A second application with another's link slug is refused too.
	dupSlug := fixture.App("acme", 2, onboarding.StatusCreated)
	dupSlug.Participants[0].LinkSlug = app.Participants[0].LinkSlug
	if err := s.CreateApplication(ctx, dupSlug, onboarding.Changes{}); err == nil {
		t.Errorf("CreateApplication(duplicate slug) succeeded, want an error")
	}
	_, err = s.Application(ctx, dupSlug.ID)
	wantNotFound(t, "Application(refused create)", err)
	_, err = s.Application(ctx, uuid.NewString())
	wantNotFound(t, "Application(unknown)", err)
	_, err = s.Application(ctx, "not-a-uuid")
	wantNotFound(t, "Application(malformed)", err)
	wantActivity(t, s, app.ID, log)
	// A returned application is the caller's: changing it changes nothing stored.
	got.Status = onboarding.StatusApproved
	if again, err := s.Application(ctx, app.ID); err != nil || again.Status != onboarding.StatusCreated {
		t.Errorf("Application after changing a returned copy = %+v, %v", again, err)
	}
}

// testReadApplication: the shared read answers the stored application and
// read's own error; a missing application is ErrNotFound and read is not
// called.
func testReadApplication(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	for i := range 2 {
		if err := s.ReadApplication(ctx, app.ID, func(a *onboarding.Application) error {
			if d := cmp.Diff(app, a); d != "" {
				t.Errorf("read %d (-stored +read):\n%s", i, d)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	errRead := errors.New("read failed")
	if err := s.ReadApplication(ctx, app.ID, func(*onboarding.Application) error { return errRead }); err != errRead {
		t.Errorf("ReadApplication with a failing read = %v, want %v", err, errRead)
	}
	called := false
	err := s.ReadApplication(ctx, uuid.NewString(), func(*onboarding.Application) error { called = true; return nil })
	if !errors.Is(err, onboarding.ErrNotFound) || called {
		t.Errorf("ReadApplication of a missing application = %v (read called: %v), want ErrNotFound", err, called)
	}
	// After an update, a read sees the new version.
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusSent
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadApplication(ctx, app.ID, func(a *onboarding.Application) error {
		if a.Status != onboarding.StatusSent {
			t.Errorf("read after update: status %s, want sent", a.Status)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// testApplicationBySlug: each participant's slug finds its application;
// a slug changed by an update finds it under the new slug only.
func testApplicationBySlug(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusSent)
	app.Participants = append(app.Participants, onboarding.Participant{ID: uuid.NewString(), LinkSlug: "second-" + uuid.NewString(),
		Email: "b@example.com", Role: onboarding.RoleCollaborator})
	other := fixture.StoredApp(t, s, "acme", 2, onboarding.StatusSent)
	if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range app.Participants {
		got, err := s.ApplicationBySlug(ctx, p.LinkSlug)
		if err != nil || got.ID != app.ID {
			t.Errorf("ApplicationBySlug(%s) = %v, %v; want %s", p.LinkSlug, got, err, app.ID)
		} else if diff := cmp.Diff(app, got); diff != "" {
			t.Errorf("ApplicationBySlug (-want +got):\n%s", diff)
		}
	}
	old := app.Participants[0].LinkSlug
	updated, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Participants[0].LinkSlug = "renewed-" + uuid.NewString()
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ApplicationBySlug(ctx, updated.Participants[0].LinkSlug); err != nil || got.ID != app.ID {
		t.Errorf("ApplicationBySlug(new slug) = %v, %v", got, err)
	}
	_, err = s.ApplicationBySlug(ctx, old)
	wantNotFound(t, "ApplicationBySlug(old slug)", err)
	_, err = s.ApplicationBySlug(ctx, "nope")
	wantNotFound(t, "ApplicationBySlug(unknown)", err)
	_, err = s.ApplicationBySlug(ctx, "")
	wantNotFound(t, "ApplicationBySlug(empty)", err)
	_, err = s.ApplicationBySlug(ctx, "\xff\x00")
	wantNotFound(t, "ApplicationBySlug(not UTF-8)", err)
	if got, err := s.ApplicationBySlug(ctx, other.Participants[0].LinkSlug); err != nil || got.ID != other.ID {
		t.Errorf("ApplicationBySlug(other) = %v, %v", got, err)
	}
	// Dropping a participant drops its slug.
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Participants = a.Participants[:1]
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = s.ApplicationBySlug(ctx, app.Participants[1].LinkSlug)
	wantNotFound(t, "ApplicationBySlug(removed participant)", err)
}

// testUpdateApplication: an update applies its change and its activity in
// one write, moves the application between the status lists; a failing
// change writes nothing and answers its error unchanged; changing the
// organization is refused; an unknown id is ErrNotFound without calling
// change.
func testUpdateApplication(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	a, b := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated), fixture.StoredApp(t, s, "acme", 2, onboarding.StatusSent)
	hash := bytes.Repeat([]byte{7}, 32)
	updated, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.Status = onboarding.StatusInProgress
		app.Participants[0].PreAuthHash = hash
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionPreAuthIssued, t0)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status != onboarding.StatusInProgress || !bytes.Equal(updated.Participants[0].PreAuthHash, hash) {
		t.Errorf("updated = %+v, want in_progress with the code", updated)
	}
	if got, err := s.Application(ctx, a.ID); err != nil || !cmp.Equal(updated, got) {
		t.Errorf("Application after update (-want +got):\n%s %v", cmp.Diff(updated, got), err)
	}
	listed := func(status onboarding.Status) []string {
		t.Helper()
		apps, _, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Status: status, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return ids(apps)
	}
	if diff := cmp.Diff([]string{a.ID}, listed(onboarding.StatusInProgress)); diff != "" {
		t.Errorf("in_progress list (-want +got):\n%s", diff)
	}
	if got := listed(onboarding.StatusCreated); len(got) != 0 {
		t.Errorf("created list after the move = %v, want none", got)
	}
	if diff := cmp.Diff([]string{b.ID, a.ID}, listed("")); diff != "" {
		t.Errorf("whole list (-want +got):\n%s", diff)
	}
	// A failing change writes nothing, its log and events included.
	e := &onboarding.Event{ID: "evt_" + ulid.Make().String(), Type: onboarding.EventApplicationApproved, OrgID: "acme", Subject: a.ID, At: t0,
		Body: json.RawMessage(`{}`)}
	if _, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.Status = onboarding.StatusApproved
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionFieldsUpdated, t0)}, Events: []*onboarding.Event{e}}, errBoom
	}); err != errBoom {
		t.Errorf("UpdateApplication(failing change) = %v, want boom unchanged", err)
	}
	if got, _ := s.Application(ctx, a.ID); got.Status != onboarding.StatusInProgress {
		t.Errorf("status after failed change = %s, want in_progress", got.Status)
	}
	_, err = s.Event(ctx, e.ID)
	wantNotFound(t, "Event of a failed change", err)
	if _, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.OrgID = "other"
		return onboarding.Changes{}, nil
	}); err == nil {
		t.Errorf("UpdateApplication(changing the organization) succeeded, want an error")
	}
	if got, _ := s.Application(ctx, a.ID); got.OrgID != "acme" {
		t.Errorf("organization after a refused move = %s", got.OrgID)
	}
	_, err = s.UpdateApplication(ctx, uuid.NewString(), func(*onboarding.Application) (onboarding.Changes, error) {
		t.Error("change called for an unknown application")
		return onboarding.Changes{}, nil
	})
	wantNotFound(t, "UpdateApplication(unknown)", err)
	_, err = s.UpdateApplication(ctx, "not-a-uuid", func(*onboarding.Application) (onboarding.Changes, error) { return onboarding.Changes{}, nil })
	wantNotFound(t, "UpdateApplication(malformed)", err)
	wantActivity(t, s, a.ID, []onboarding.Activity{fixture.Act(onboarding.ActionPreAuthIssued, t0)})
}

// walkPages lists every page of limit records, from the first (list
// with a zero cursor) to the one that says no more follow, checking that
// each is full while more follow, and returns the records in the order
// listed. seq is a record's cursor.
func walkPages[R any](t *testing.T, name string, limit int, seq func(R) ulid.ULID, list func(before ulid.ULID) ([]R, bool, error)) []R {
	t.Helper()
	var walked []R
	var before ulid.ULID
	for n := 0; ; n++ {
		page, more, err := list(before)
		if err != nil {
			t.Fatal(err)
		}
		if more && len(page) != limit || len(page) > limit {
			t.Errorf("%s page %d: %d records, more=%v, limit %d", name, n, len(page), more, limit)
		}
		walked = append(walked, page...)
		if !more {
			return walked
		}
		before = seq(page[len(page)-1])
		if n > 10 {
			t.Fatal("pagination does not end")
		}
	}
}

func ids(apps []*onboarding.Application) []string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a.ID
	}
	return out
}

// testListApplications lists an organization's applications newest first,
// by status, in pages, next to another organization's whose id starts
// with the first's.
func testListApplications(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	var acme []*onboarding.Application // newest first
	for i := 0; i < 7; i++ {
		status := onboarding.StatusSent
		if i%3 == 0 {
			status = onboarding.StatusCreated
		}
		acme = append([]*onboarding.Application{fixture.StoredApp(t, s, "acme", i, status)}, acme...)
		fixture.StoredApp(t, s, "acme2", i, status)
	}
	page := func(status onboarding.Status, before ulid.ULID, limit int) ([]string, bool) {
		t.Helper()
		apps, more, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Status: status, Before: before, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return ids(apps), more
	}
	got, more := page("", ulid.ULID{}, 100)
	if diff := cmp.Diff(ids(acme), got); diff != "" || more {
		t.Errorf("all (-want +got):\n%s more=%v", diff, more)
	}
	of := func(status onboarding.Status) []string {
		var out []string
		for _, a := range acme {
			if status == "" || a.Status == status {
				out = append(out, a.ID)
			}
		}
		return out
	}
	// Walk the pages of each list in pages of each size: no repeats, no
	// gaps, full pages while there are more.
	for _, tt := range []struct {
		status onboarding.Status
		limit  int
	}{
		{"", 100}, {"", 3}, {"", 7}, {"", 1},
		{onboarding.StatusCreated, 100}, {onboarding.StatusCreated, 2},
		{onboarding.StatusSent, 100}, {onboarding.StatusSent, 1},
		{onboarding.StatusApproved, 10},
	} {
		walked := ids(walkPages(t, fmt.Sprintf("status %q", tt.status), tt.limit, func(a *onboarding.Application) ulid.ULID { return a.Seq },
			func(before ulid.ULID) ([]*onboarding.Application, bool, error) {
				return s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Status: tt.status, Before: before, Limit: tt.limit})
			}))
		if diff := cmp.Diff(of(tt.status), walked, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("status %q, pages of %d (-want +got):\n%s", tt.status, tt.limit, diff)
		}
	}
	var created []string
	for _, a := range acme {
		if a.Status == onboarding.StatusCreated {
			created = append(created, a.ID)
		}
	}
	got, more = page(onboarding.StatusCreated, ulid.ULID{}, 100)
	if diff := cmp.Diff(created, got); diff != "" || more {
		t.Errorf("status filter (-want +got):\n%s more=%v", diff, more)
	}
	got, more = page(onboarding.StatusCreated, acme[0].Seq, 1)
	if diff := cmp.Diff(created[1:2], got); diff != "" || !more {
		t.Errorf("status filter after a cursor (-want +got):\n%s more=%v", diff, more)
	}
	got, more = page(onboarding.StatusApproved, ulid.ULID{}, 10)
	if len(got) != 0 || more {
		t.Errorf("approved = %v more=%v, want none", got, more)
	}
	got, more = page("", ulid.ULID{}, 7)
	if len(got) != 7 || more {
		t.Errorf("limit equal to count: %d apps, more=%v; want 7, false", len(got), more)
	}
	got, more = page("", acme[2].Seq, 2)
	if diff := cmp.Diff(ids(acme[3:5]), got); diff != "" || !more {
		t.Errorf("page strictly before a cursor (-want +got):\n%s more=%v", diff, more)
	}
	if apps, more, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "nobody", Limit: 10}); err != nil || len(apps) != 0 || more {
		t.Errorf("unknown organization: %d, %v, %v", len(apps), more, err)
	}
	if apps, more, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Limit: 0}); err != nil || len(apps) != 0 || !more {
		t.Errorf("a limit of none: %d, %v, %v; want none and more", len(apps), more, err)
	}
	// A status move carries an application between the status lists.
	moved, err := s.UpdateApplication(ctx, acme[0].ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusApproved
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := page(onboarding.StatusApproved, ulid.ULID{}, 10); !cmp.Equal(got, []string{moved.ID}) {
		t.Errorf("approved after the move = %v, want [%s]", got, moved.ID)
	}
	if got, _ := page(onboarding.StatusCreated, ulid.ULID{}, 10); slices.Contains(got, moved.ID) {
		t.Errorf("created after the move = %v, still with %s", got, moved.ID)
	}
}

// testListBigNextToSmall lists the newest page of a large organization and
// of a small one beside it.
func testListBigNextToSmall(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	const big = 1000
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < big; i += 4 {
				if err := s.CreateApplication(ctx, fixture.App("big", i, onboarding.StatusSent), onboarding.Changes{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		fixture.StoredApp(t, s, "small", i, onboarding.StatusSent)
	}
	apps, more, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "big", Limit: 5})
	if err != nil || len(apps) != 5 || !more {
		t.Fatalf("big first page: %d apps, more=%v, err=%v", len(apps), more, err)
	}
	for i, a := range apps {
		if want := fixture.App("big", big-1-i, "").CreatedAt; !a.CreatedAt.Equal(want) {
			t.Errorf("big page entry %d created %v, want %v", i, a.CreatedAt, want)
		}
	}
	apps, more, err = s.ListApplications(ctx, onboarding.ListQuery{OrgID: "small", Limit: 5})
	if err != nil || len(apps) != 3 || more {
		t.Fatalf("small page: %d apps, more=%v, err=%v", len(apps), more, err)
	}
}
