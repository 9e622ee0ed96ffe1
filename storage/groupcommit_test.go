package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// createApps stores n applications, each with a lock of its own (appLock),
// so that their updates never wait for one another's.
func createApps(t *testing.T, s *Store, n int) []*onboarding.Application {
	t.Helper()
	locks := map[*sync.Mutex]bool{}
	var apps []*onboarding.Application
	for i := 0; len(apps) < n; i++ {
		a := fixture.App("acme", i, onboarding.StatusCreated)
		if l := s.appLock(uuid.MustParse(a.ID)); !locks[l] {
			locks[l] = true
			if err := s.CreateApplication(context.Background(), a, onboarding.Changes{}); err != nil {
				t.Fatal(err)
			}
			apps = append(apps, a)
		}
	}
	return apps
}

// heldGroup queues a write whose prepare waits for release, so that the
// group loop is busy while a test queues more; it returns once that
// prepare is running, and wait returns the write's error.
func heldGroup(t *testing.T, s *Store, release <-chan struct{}) (wait func() error) {
	t.Helper()
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.grouped(context.Background(), func(*badger.Txn) (func() error, error) {
			select {
			case <-started: // a retry
			default:
				close(started)
			}
			<-release
			return func() error { return nil }, nil
		})
	}()
	<-started
	return func() error { return <-done }
}

// queued waits until n updates wait in the group loop's queue.
func queued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.updates) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d updates queued after 10s, want %d", len(s.updates), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommit: updates and creates queued while a commit is under way
// are committed together, each with its own outcome: one whose change
// fails, one whose change panics and one whose write fails (an event that
// cannot be stored) fail alone, and every other is applied, with its
// activity and events.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	const n = 12
	apps := createApps(t, s, n+1)
	release := make(chan struct{})
	held := heldGroup(t, s, release)

	type outcome struct {
		name     string
		err      error
		panicked any
	}
	results := make(chan outcome, n+3)
	var wg sync.WaitGroup
	update := func(name string, app string, change func(*onboarding.Application) error, eventID string) {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					results <- outcome{name: name, panicked: p}
				}
			}()
			_, err := s.UpdateApplication(ctx, app, func(a *onboarding.Application) (onboarding.Changes, error) {
				if err := change(a); err != nil {
					return onboarding.Changes{}, err
				}
				at := t0.Add(time.Minute)
				return onboarding.Changes{
					Log:    []onboarding.Activity{{At: at, Action: onboarding.ActionFieldsUpdated}},
					Events: []*onboarding.Event{{ID: eventID, Type: onboarding.EventApplicationSent, OrgID: "acme", Subject: a.ID, At: at, Body: json.RawMessage(`{}`)}},
				}, nil
			})
			results <- outcome{name: name, err: err}
		})
	}
	refused := errors.New("refused")
	setIndustry := func(a *onboarding.Application) error {
		a.Data.Fields["industry"] = json.RawMessage(`"software"`)
		return nil
	}
	for i := range n {
		eventID := "evt_" + ulid.Make().String()
		switch i {
		case 3:
			update("refused", apps[i].ID, func(*onboarding.Application) error { return refused }, eventID)
		case 5:
			update("panics", apps[i].ID, func(*onboarding.Application) error { panic("change panicked") }, eventID)
		case 7:
			update("bad event", apps[i].ID, setIndustry, "not an event id")
		default:
			update("applied", apps[i].ID, setIndustry, eventID)
		}
	}
	// Writes of the store's own that panic, before writing and part-way.
	for name, write := range map[string]func(*badger.Txn) (func() error, error){
		"panics preparing": func(*badger.Txn) (func() error, error) { panic("prepare panicked") },
		"panics writing": func(txn *badger.Txn) (func() error, error) {
			return func() error {
				if err := txn.Set([]byte("zz/half-written"), nil); err != nil {
					return err
				}
				panic("write panicked")
			}, nil
		},
	} {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					results <- outcome{name: name, panicked: p}
				}
			}()
			results <- outcome{name: name, err: s.grouped(ctx, write)}
		})
	}
	created := fixture.App("acme", 100, onboarding.StatusCreated)
	wg.Go(func() {
		results <- outcome{name: "created", err: s.CreateApplication(ctx, created, onboarding.Changes{})}
	})
	// The refused update and the one that panics end on their callers'
	// goroutines, before they are queued.
	queued(t, s, n+1)
	close(release)
	if err := held(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)

	var got []string
	for r := range results {
		switch {
		case r.panicked != nil:
			got = append(got, fmt.Sprintf("%s: panic %v", r.name, r.panicked))
		case errors.Is(r.err, refused):
			got = append(got, r.name+": refused")
		case r.err != nil:
			got = append(got, fmt.Sprintf("%s: %v", r.name, r.err))
		default:
			got = append(got, r.name)
		}
	}
	want := []string{"bad event: store event: \"not an event id\" is not an event id", "created", "panics: panic change panicked", "panics preparing: panic prepare panicked", "panics writing: panic write panicked", "refused: refused"}
	for range n - 3 {
		want = append(want, "applied")
	}
	if d := cmp.Diff(sorted(want), sorted(got)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	// The queued updates were tried as one group, which the bad event
	// failed, so each was then tried alone.
	if g := s.groups.Load(); g != 0 {
		t.Errorf("%d groups committed whole, want 0: the bad event was in it", g)
	}
	for i, app := range apps[:n] {
		a, err := s.Application(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		logged, _ := s.Activity(ctx, app.ID)
		applied := i != 3 && i != 5 && i != 7
		if has := a.Data.Fields["industry"] != nil; has != applied || (len(logged) == 1) != applied {
			t.Errorf("application %d: industry set %v, %d activity entries; applied should be %v", i, has, len(logged), applied)
		}
	}
	if _, err := s.Application(ctx, created.ID); err != nil {
		t.Errorf("the create in the group: %v", err)
	}
	if keys := keysWithPrefix(t, s, "zz/"); len(keys) != 0 {
		t.Errorf("the write that panicked part-way left %v", keys)
	}
	events, _, err := s.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != n-3 {
		t.Errorf("%d events, want %d (one per applied update)", len(events), n-3)
	}
}

// TestGroupCommitOneTransaction: updates queued meanwhile are committed in
// one transaction.
func TestGroupCommitOneTransaction(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	const n = 20
	apps := createApps(t, s, n+1)
	release := make(chan struct{})
	held := heldGroup(t, s, release)
	errs := make(chan error, n)
	for _, app := range apps[:n] {
		go func() {
			_, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				a.Status = onboarding.StatusSent
				return onboarding.Changes{}, nil
			})
			errs <- err
		}()
	}
	queued(t, s, n)
	close(release)
	if err := held(); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if g := s.groups.Load(); g != 1 {
		t.Errorf("%d updates queued together took %d group commits, want 1", n, g)
	}
	page, _, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Status: onboarding.StatusSent, Limit: 50})
	if err != nil || len(page) != n {
		t.Errorf("%d applications sent (%v), want %d", len(page), err, n)
	}
}

// TestGroupCommitAfterClose: an update queued before Close is committed;
// a write asked for after it fails.
func TestGroupCommitAfterClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTestStore(t, dir)
	apps := createApps(t, s, 2)
	release := make(chan struct{})
	held := heldGroup(t, s, release)
	queuedErr := make(chan error, 1)
	go func() {
		_, err := s.UpdateApplication(ctx, apps[1].ID, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = onboarding.StatusSent
			return onboarding.Changes{}, nil
		})
		queuedErr <- err
	}()
	queued(t, s, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	// Close stops new updates before it waits for the loop.
	for {
		s.groupMu.RLock()
		c := s.groupClosed
		s.groupMu.RUnlock()
		if c {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// (A create: an update of another application could wait for the
	// lock of one of the two.)
	if err := s.CreateApplication(ctx, fixture.App("acme", 3, onboarding.StatusCreated), onboarding.Changes{}); !errors.Is(err, errClosed) {
		t.Errorf("create after Close: %v, want %v", err, errClosed)
	}
	close(release)
	if err := held(); err != nil {
		t.Errorf("the update under way at Close: %v", err)
	}
	if err := <-queuedErr; err != nil {
		t.Errorf("the update queued at Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir)
	defer s.Close()
	if a, err := s.Application(ctx, apps[1].ID); err != nil || a.Status != onboarding.StatusSent {
		t.Errorf("after reopening, the update queued at Close: %v %v", a, err)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
