package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestApplicationDuplicates: the creates the store refuses are
// errDuplicate and write nothing. (The reads and the refusals as seen
// through the Store are the suite's.)
func TestApplicationDuplicates(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	before := everything(t, s)
	dupSlug := fixture.App("acme", 2, onboarding.StatusCreated)
	dupSlug.Participants[0].LinkSlug = app.Participants[0].LinkSlug
	for name, dup := range map[string]*onboarding.Application{"the same id": app, "a slug taken": dupSlug} {
		if err := s.CreateApplication(ctx, dup, onboarding.Changes{Log: log}); !errors.Is(err, errDuplicate) {
			t.Errorf("CreateApplication(%s) = %v, want errDuplicate", name, err)
		}
	}
	if err := s.CreateApplication(ctx, &onboarding.Application{ID: "nope"}, onboarding.Changes{}); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateApplication(bad id) = %v, want an error", err)
	}
	if diff := cmp.Diff(before, everything(t, s)); diff != "" {
		t.Errorf("refused creates wrote (-before +after):\n%s", diff)
	}
}

// appRows is the applications' columns and slugs as the store keeps them.
func appRows(t *testing.T, s *Store) []string {
	t.Helper()
	return append(rows(t, s, `SELECT id::text, org_id, status, encode(seq, 'hex'), registry_documents_pending,
			coalesce(array_to_string(blob_ids, ','), '-') FROM applications`),
		rows(t, s, `SELECT slug, application_id::text FROM application_slugs`)...)
}

// wantAppRows is what appRows should be for apps.
func wantAppRows(apps ...*onboarding.Application) []string {
	var out []string
	for _, a := range apps {
		blobs := strings.Join(a.BlobIDs(), ",")
		if blobs == "" {
			blobs = "-"
		}
		out = append(out, line(uuid.MustParse(a.ID).String(), a.OrgID, string(a.Status), fmt.Sprintf("%x", a.Seq[:]),
			a.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending, blobs))
		for _, p := range a.Participants {
			out = append(out, line(p.LinkSlug, uuid.MustParse(a.ID).String()))
		}
	}
	return sortedCopy(out)
}

func TestUpdateKeepsIndexesConsistent(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	a, b := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated), fixture.StoredApp(t, s, "acme", 2, onboarding.StatusSent)
	if diff := cmp.Diff(wantAppRows(a, b), sortedCopy(appRows(t, s))); diff != "" {
		t.Fatalf("rows after create (-want +got):\n%s", diff)
	}
	updated, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.Status = onboarding.StatusInProgress
		app.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
		app.Participants[0].PreAuthHash = bytes.Repeat([]byte{7}, 32)
		app.Participants[0].LinkSlug = "moved"
		app.Participants = append(app.Participants, onboarding.Participant{ID: "p2", LinkSlug: "second"})
		app.Data.Documents = map[string]onboarding.Document{"x": {FileID: "f", BlobID: "blob-1"}}
		return onboarding.Changes{Log: []onboarding.Activity{{At: t0, Action: onboarding.ActionPreAuthIssued}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status != onboarding.StatusInProgress {
		t.Errorf("updated status = %s, want in_progress", updated.Status)
	}
	if diff := cmp.Diff(wantAppRows(updated, b), sortedCopy(appRows(t, s))); diff != "" {
		t.Errorf("rows after status, slug and document changes (-want +got):\n%s", diff)
	}
	if got, err := s.Application(ctx, a.ID); err != nil || !cmp.Equal(updated, got) {
		t.Errorf("Application after update = %v (-answered +read):\n%s", err, cmp.Diff(updated, got))
	}
	for slug, want := range map[string]string{"moved": a.ID, "second": a.ID, a.Participants[0].LinkSlug: ""} {
		got, err := s.ApplicationBySlug(ctx, slug)
		switch {
		case want == "" && !errors.Is(err, onboarding.ErrNotFound):
			t.Errorf("ApplicationBySlug(%s) = %v, want ErrNotFound", slug, err)
		case want != "" && (err != nil || got.ID != want):
			t.Errorf("ApplicationBySlug(%s) = %v, want %s", slug, err, want)
		}
	}

	before := everything(t, s)
	boom := errors.New("boom")
	refused := map[string]struct {
		change func(*onboarding.Application) error
		want   func(error) bool
	}{
		"a failing change": {func(app *onboarding.Application) error { app.Status = onboarding.StatusApproved; return boom }, func(err error) bool { return err == boom }},
		"changing the id":  {func(app *onboarding.Application) error { app.ID = uuid.NewString(); return nil }, immutable},
		"changing the org": {func(app *onboarding.Application) error { app.OrgID = "other"; return nil }, immutable},
		"changing the seq": {func(app *onboarding.Application) error { app.Seq = ulid.Make(); return nil }, immutable},
		"taking another app's slug": {func(app *onboarding.Application) error {
			app.Participants[0].LinkSlug = b.Participants[0].LinkSlug
			return nil
		}, func(err error) bool { return errors.Is(err, errDuplicate) }},
	}
	for name, r := range refused {
		_, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
			err := r.change(app)
			return onboarding.Changes{Log: []onboarding.Activity{{At: t0, Action: "test.refused"}}, Idempotent: &onboarding.IdempotentOutcome{ClientID: "c", Key: name}}, err
		})
		if !r.want(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.UpdateApplication(ctx, uuid.NewString(), func(*onboarding.Application) (onboarding.Changes, error) {
		t.Error("change called for an unknown application")
		return onboarding.Changes{}, nil
	}); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("UpdateApplication(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateApplication(ctx, "nope", nil); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("UpdateApplication(malformed) = %v, want ErrNotFound", err)
	}
	if diff := cmp.Diff(before, everything(t, s)); diff != "" {
		t.Errorf("refused updates wrote (-before +after):\n%s", diff)
	}
	logged, _ := s.Activity(ctx, a.ID)
	if len(logged) != 1 || logged[0].Action != onboarding.ActionPreAuthIssued {
		t.Errorf("activity = %+v, want one pre_auth.issued entry", logged)
	}
}

func immutable(err error) bool {
	return err != nil && bytes.Contains([]byte(err.Error()), []byte("immutable"))
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sortStrings(out)
	return out
}

// TestListIsAnIndexScan checks the plan of every page query: an index
// scan with a LIMIT, never a sort or a scan of the table, so that a page
// costs the same however many applications exist.
func TestListIsAnIndexScan(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	// Enough rows that a sequential scan is not simply cheapest.
	if _, err := s.pool.Exec(ctx, `INSERT INTO applications (id, org_id, status, seq, registry_documents_pending, version, record)
		SELECT gen_random_uuid(), 'org' || (i % 10), CASE WHEN i % 3 = 0 THEN 'sent' ELSE 'created' END,
			decode(lpad(to_hex(i), 32, '0'), 'hex'), i % 100 = 0, 1, '\x01'
		FROM generate_series(1, 20000) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE applications`); err != nil {
		t.Fatal(err)
	}
	cursor := ulid.ULID{14: 0x40} // most rows are older
	for _, q := range []onboarding.ListQuery{
		{OrgID: "org1", Limit: 50},
		{OrgID: "org1", Limit: 50, Before: cursor},
		{OrgID: "org1", Status: onboarding.StatusSent, Limit: 50},
		{OrgID: "org1", Status: onboarding.StatusSent, Limit: 50, Before: cursor},
	} {
		sql, args := listQuery("applications", q.OrgID, string(q.Status), q.Before[:], q.Limit)
		plan := explain(t, s, sql, args...)
		if !bytes.Contains([]byte(plan), []byte("Limit")) || !bytes.Contains([]byte(plan), []byte("Index Scan Backward")) ||
			bytes.Contains([]byte(plan), []byte("Sort")) || bytes.Contains([]byte(plan), []byte("Seq Scan")) {
			t.Errorf("%+v: plan is not an index scan with a limit:\n%s", q, plan)
		}
	}
	// The plan PostgreSQL keeps for the prepared statement once it
	// stops planning each execution: the same.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET plan_cache_mode`)
	for i, q := range []onboarding.ListQuery{
		{OrgID: "org1", Limit: 50},
		{OrgID: "org1", Limit: 50, Before: cursor},
		{OrgID: "org1", Status: onboarding.StatusSent, Limit: 50},
		{OrgID: "org1", Status: onboarding.StatusSent, Limit: 50, Before: cursor},
	} {
		sql, args := listQuery("applications", q.OrgID, string(q.Status), q.Before[:], q.Limit)
		types := []string{"text", "bigint", "text", "bytea"}[:len(args)]
		if q.Status == "" && len(args) == 3 {
			types = []string{"text", "bigint", "bytea"}
		}
		name := fmt.Sprintf("list%d", i)
		if _, err := conn.Exec(ctx, fmt.Sprintf("PREPARE %s(%s) AS %s", name, strings.Join(types, ", "), sql)); err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, a := range args {
			switch v := a.(type) {
			case []byte:
				vals = append(vals, fmt.Sprintf(`'\x%x'::bytea`, v))
			case string:
				vals = append(vals, "'"+v+"'")
			default:
				vals = append(vals, fmt.Sprint(v))
			}
		}
		rs, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN EXECUTE %s(%s)", name, strings.Join(vals, ", ")))
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rs.Next() {
			var line string
			if err := rs.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		rs.Close()
		if p := plan.String(); !strings.Contains(p, "Index Scan Backward") || strings.Contains(p, "Sort") || strings.Contains(p, "Seq Scan") {
			t.Errorf("%+v: the generic plan is not an index scan with a limit:\n%s", q, p)
		}
	}
	if plan := explain(t, s, `SELECT id::text FROM applications WHERE registry_documents_pending ORDER BY id`); bytes.Contains([]byte(plan), []byte("Seq Scan")) {
		t.Errorf("pending registry documents scan the table:\n%s", plan)
	}
}

// explain returns the plan of a query.
func explain(t *testing.T, s *Store, sql string, args ...any) string {
	t.Helper()
	var plan bytes.Buffer
	for _, line := range rowsInOrder(t, s, "EXPLAIN "+sql, args...) {
		plan.WriteString(line + "\n")
	}
	return plan.String()
}

// rowsInOrder is rows without the sort.
func rowsInOrder(t *testing.T, s *Store, sql string, args ...any) []string {
	t.Helper()
	rs, err := s.pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConcurrentUpdatesAllApply: updates of one application from many
// goroutines, over two Stores (two instances) on one database, all apply,
// each on what the one before wrote, and none fails: the Store retries
// its serialization failures, where the suite lets a backend answer
// ErrWriteConflict.
func TestConcurrentUpdatesAllApply(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t, Options{MaxConnections: 4})
	other := openOn(t, url, Options{MaxConnections: 4})
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	const writers = 24
	var wg sync.WaitGroup
	for i := range writers {
		store := s
		if i%2 == 1 {
			store = other
		}
		wg.Go(func() {
			if _, err := store.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				a.Data.Fields[fmt.Sprintf("f%02d", i)] = json.RawMessage(`true`)
				return onboarding.Changes{Log: []onboarding.Activity{{At: t0, Action: onboarding.ActionFieldsUpdated}}}, nil
			}); err != nil {
				t.Errorf("concurrent update: %v", err)
			}
		})
	}
	wg.Wait()
	got, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Data.Fields); n != writers+1 {
		t.Errorf("fields after %d concurrent updates = %d, want %d (a lost update)", writers, n, writers+1)
	}
	if logged, _ := s.Activity(ctx, app.ID); len(logged) != writers {
		t.Errorf("activity entries = %d, want %d", len(logged), writers)
	}
}

// TestConcurrentCreatesOfOneSlug: of creates that race for one link slug,
// from two instances, exactly one wins; the others are errDuplicate and
// leave nothing behind.
func TestConcurrentCreatesOfOneSlug(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t, Options{})
	other := openOn(t, url, Options{})
	const n = 8
	errs := make([]error, n)
	apps := make([]*onboarding.Application, n)
	var wg sync.WaitGroup
	for i := range n {
		apps[i] = fixture.App("acme", i, onboarding.StatusCreated)
		apps[i].Participants[0].LinkSlug = "contested"
		store := s
		if i%2 == 1 {
			store = other
		}
		wg.Go(func() {
			errs[i] = store.CreateApplication(ctx, apps[i], onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}})
		})
	}
	wg.Wait()
	var winner *onboarding.Application
	for i, err := range errs {
		switch {
		case err == nil && winner != nil:
			t.Errorf("two creates of one slug succeeded")
		case err == nil:
			winner = apps[i]
		case !errors.Is(err, errDuplicate):
			t.Errorf("create %d: %v, want errDuplicate", i, err)
		}
	}
	if winner == nil {
		t.Fatal("no create succeeded")
	}
	if diff := cmp.Diff(wantAppRows(winner), sortedCopy(appRows(t, s))); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if n := len(rows(t, s, `SELECT * FROM activity_entries`)); n != 1 {
		t.Errorf("%d activity entries, want the winner's one", n)
	}
}

// TestAPIKeyErrors: a duplicate key is errDuplicate, a change of its
// client id the immutable error. (The keys' contract is the suite's.)
func TestAPIKeyErrors(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	k := &onboarding.APIKey{ClientID: "aaa", OrgID: "acme", Name: "kaaa", CreatedAt: t0}
	if err := s.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, k); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateAPIKey(duplicate) = %v, want errDuplicate", err)
	}
	if _, err := s.UpdateAPIKey(ctx, "aaa", func(k *onboarding.APIKey) error { k.ClientID = "bbb"; return nil }); !immutable(err) {
		t.Errorf("UpdateAPIKey(changing the client id) = %v, want the immutable error", err)
	}
}

// TestConcurrentAPIKeyUpdatesAllApply: updates of one key queue on its
// row, and none fails (the suite lets a backend answer ErrWriteConflict).
func TestConcurrentAPIKeyUpdatesAllApply(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	if err := s.CreateAPIKey(ctx, &onboarding.APIKey{ClientID: "abc", OrgID: "acme", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := s.UpdateAPIKey(ctx, "abc", func(k *onboarding.APIKey) error {
				k.Scopes = append(k.Scopes, onboarding.Scope(fmt.Sprint(i)))
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if k, err := s.APIKey(ctx, "abc"); err != nil || len(k.Scopes) != n {
		t.Errorf("after %d concurrent updates: %v, %v", n, k, err)
	}
}

// TestCacheFollowsOtherInstances: each instance keeps decoded
// applications, and never serves one once another instance has updated
// it; readers of an unchanged application share it, Application's callers
// get their own copy, and an update starts from the stored version.
func TestCacheFollowsOtherInstances(t *testing.T) {
	ctx := context.Background()
	a, url := openTest(t, Options{})
	b := openOn(t, url, Options{})
	app := fixture.StoredApp(t, a, "acme", 1, onboarding.StatusCreated)
	shared := func(s *Store) *onboarding.Application {
		t.Helper()
		var got *onboarding.Application
		if err := s.ReadApplication(ctx, app.ID, func(x *onboarding.Application) error { got = x; return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := shared(a)
	if again := shared(a); again != first {
		t.Errorf("two reads of an unchanged application did not share it")
	}
	own, err := a.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	own.Status = onboarding.StatusRejected // the caller's copy
	if got := shared(a); got != first || got.Status != onboarding.StatusCreated {
		t.Errorf("a change of Application's answer reached the cache: %s", got.Status)
	}
	shared(b) // b caches it too
	for i, s := range []*Store{b, a, b} {
		status := []onboarding.Status{onboarding.StatusSent, onboarding.StatusInProgress, onboarding.StatusSubmitted}[i]
		if _, err := s.UpdateApplication(ctx, app.ID, func(x *onboarding.Application) (onboarding.Changes, error) {
			x.Status = status
			x.Data.Fields[string(status)] = json.RawMessage(`true`)
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, reader := range []*Store{a, b} {
			got := shared(reader)
			if got.Status != status || len(got.Data.Fields) != i+2 {
				t.Errorf("after update %d: status %s with %d fields, want %s with %d", i, got.Status, len(got.Data.Fields), status, i+2)
			}
		}
	}
	if got := shared(a); got == first {
		t.Errorf("the application read before the updates is still served")
	}
	// A change that refuses the cached application is decided again on
	// the stored one: a holds the last version it wrote, b moves on.
	if _, err := b.UpdateApplication(ctx, app.ID, func(x *onboarding.Application) (onboarding.Changes, error) {
		x.Status = onboarding.StatusReview
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := a.UpdateApplication(ctx, app.ID, func(x *onboarding.Application) (onboarding.Changes, error) {
		calls++
		if x.Status != onboarding.StatusReview {
			return onboarding.Changes{}, errors.New("not in review")
		}
		x.Status = onboarding.StatusApproved
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act("test.approved", t0)}}, nil
	})
	if err != nil || got.Status != onboarding.StatusApproved || calls != 2 {
		t.Errorf("update refused on the cached version: %v, %v after %d calls; want approved after 2", got, err, calls)
	}
	if head, log := fixture.ReadLog(t, b, app.ID); len(log) != 1 || head == nil || head.Hash != log[0].Hash {
		t.Errorf("log after the update = %+v, head %+v", log, head)
	}
}
