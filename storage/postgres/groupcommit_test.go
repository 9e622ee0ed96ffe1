package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// holdWrites makes the writes to table wait, in a transaction of its own
// that locks it, until the returned function ends that transaction.
func holdWrites(t *testing.T, s *Store, table string) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE `+pgx.Identifier{table}.Sanitize()+` IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := tx.Rollback(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// waitUntil waits until cond, read under the group's lock, holds: the
// event the test synchronises on (a write in flight, writes waiting).
func waitUntil(t *testing.T, g *commitGroup, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		g.mu.Lock()
		ok := cond()
		g.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// queueBehindOne sends first, waits until it is in flight (held by a
// lock the test holds), then sends each of rest and waits until all of
// them wait in the group.
func queueBehindOne(t *testing.T, g *commitGroup, first func(), rest ...func()) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(first)
	waitUntil(t, g, "the first write in flight", func() bool { return g.inFlight == g.sending })
	for _, f := range rest {
		wg.Go(f)
	}
	waitUntil(t, g, "the writes waiting", func() bool { return len(g.waiting) == len(rest) })
	return &wg
}

// TestGroupedCreatesAnswerAsAlone: creates that wait behind a busy store
// go in groups, and each gets the answer it would have had alone: of two
// creates of one link slug, one is stored and the other is errDuplicate
// and leaves nothing, even when it failed the group it was in.
func TestGroupedCreatesAnswerAsAlone(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	s.writes = newCommitGroup(s.pool, 1, 8)
	const queued = 32
	apps := make([]*onboarding.Application, queued+1)
	for i := range apps {
		apps[i] = fixture.App("acme", i, onboarding.StatusSent)
	}
	apps[20].Participants[0].LinkSlug = apps[9].Participants[0].LinkSlug
	errs := make([]error, len(apps))
	create := func(i int) func() {
		return func() {
			errs[i] = s.CreateApplication(ctx, apps[i], onboarding.Changes{
				Log:    []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)},
				Events: []*onboarding.Event{testEvent(onboarding.EventApplicationCreated, "acme", apps[i].ID)},
			})
		}
	}
	// The organization's endpoints (none) cached, its creates' events go
	// in the batch of the create.
	warm := fixture.App("acme", 99, onboarding.StatusSent)
	if err := s.CreateApplication(ctx, warm, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)},
		Events: []*onboarding.Event{testEvent(onboarding.EventApplicationCreated, "acme", warm.ID)}}); err != nil {
		t.Fatal(err)
	}
	release := holdWrites(t, s, "application_slugs")
	var rest []func()
	for i := 1; i < len(apps); i++ {
		rest = append(rest, create(i))
	}
	wg := queueBehindOne(t, s.writes, create(0), rest...)
	release()
	wg.Wait()

	stored := []*onboarding.Application{warm}
	for i, err := range errs {
		switch {
		case err == nil:
			stored = append(stored, apps[i])
		case (i == 9 || i == 20) && errors.Is(err, errDuplicate):
		default:
			t.Errorf("create %d: %v", i, err)
		}
	}
	if len(stored) != len(apps) {
		t.Errorf("%d creates stored, want all but one of the two of one slug (%d)", len(stored)-1, len(apps)-1)
	}
	if diff := cmp.Diff(wantAppRows(stored...), sortedCopy(appRows(t, s))); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	for _, table := range []string{"activity_entries", "events"} {
		if n := len(rows(t, s, `SELECT 1 FROM `+table)); n != len(stored) {
			t.Errorf("%d rows in %s, want one per stored application (%d)", n, table, len(stored))
		}
	}
	if n := s.writes.committed.Load(); n < 2 {
		t.Errorf("%d groups committed, want at least 2 of the 4 the %d waiting creates make", n, queued)
	}
}

// TestGroupedUpdates: updates of one application never share a group,
// and each applies to what the one before wrote, whether it went in a
// group or, its version gone, alone; updates of other applications go
// together, and a stale one does not keep the others of its group from
// committing.
func TestGroupedUpdates(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	s.writes = newCommitGroup(s.pool, 1, 8)
	hot := fixture.StoredApp(t, s, "acme", 0, onboarding.StatusSent)
	others := make([]*onboarding.Application, 12)
	for i := range others {
		others[i] = fixture.StoredApp(t, s, "acme", i+1, onboarding.StatusSent)
	}
	increment := func(id string) func() {
		return func() {
			if _, err := s.UpdateApplication(ctx, id, func(app *onboarding.Application) (onboarding.Changes, error) {
				n, _ := strconv.Atoi(string(app.Data.Fields["count"]))
				app.Data.Fields["count"] = json.RawMessage(strconv.Itoa(n + 1))
				return onboarding.Changes{Log: []onboarding.Activity{{At: t0, Action: onboarding.ActionFieldsUpdated}}}, nil
			}); err != nil {
				t.Errorf("update %s: %v", id, err)
			}
		}
	}
	want := map[string]int{hot.ID: 7}
	release := holdWrites(t, s, "applications")
	var rest []func()
	for i, o := range others {
		rest = append(rest, increment(o.ID))
		want[o.ID] = 1
		if i%2 == 0 {
			rest = append(rest, increment(hot.ID))
		}
	}
	wg := queueBehindOne(t, s.writes, increment(hot.ID), rest...)
	release()
	wg.Wait()

	for id, n := range want {
		got, err := s.Application(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if c := string(got.Data.Fields["count"]); c != strconv.Itoa(n) {
			t.Errorf("count of %s = %s after %d updates (an update lost)", id, c, n)
		}
		if logged, _ := s.Activity(ctx, id); len(logged) != n {
			t.Errorf("%d activity entries of %s, want %d", len(logged), id, n)
		}
	}
	if n := s.writes.committed.Load(); n == 0 {
		t.Error("no group committed: the updates of other applications never went together")
	}
}

// TestGroupedWriteGivenUp: a write whose context ends while it waits is
// withdrawn: it answers the context's error and is not written.
func TestGroupedWriteGivenUp(t *testing.T) {
	s, _ := openTest(t, Options{})
	s.writes = newCommitGroup(s.pool, 1, 8)
	first, late := fixture.App("acme", 1, onboarding.StatusSent), fixture.App("acme", 2, onboarding.StatusSent)
	ctx, cancel := context.WithCancel(context.Background())
	var lateErr error
	release := holdWrites(t, s, "application_slugs")
	wg := queueBehindOne(t, s.writes, func() {
		if err := s.CreateApplication(context.Background(), first, onboarding.Changes{}); err != nil {
			t.Errorf("first create: %v", err)
		}
	}, func() { lateErr = s.CreateApplication(ctx, late, onboarding.Changes{}) })
	cancel()
	waitUntil(t, s.writes, "the write withdrawn", func() bool { return len(s.writes.waiting) == 0 })
	release()
	wg.Wait()
	if !errors.Is(lateErr, context.Canceled) {
		t.Errorf("create given up = %v, want context.Canceled", lateErr)
	}
	if diff := cmp.Diff(wantAppRows(first), sortedCopy(appRows(t, s))); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
