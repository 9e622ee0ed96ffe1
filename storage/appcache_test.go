package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// cached reports whether the store's cache holds application id.
func (s *Store) cached(id string) bool {
	s.apps.mu.Lock()
	defer s.apps.mu.Unlock()
	_, ok := s.apps.entries[uuid.MustParse(id)]
	return ok
}

// TestAppCache: a read keeps the application it decoded; the next read
// answers from it, a copy the caller may change; a write makes the next
// read decode the new version.
func TestAppCache(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	listed := fixture.App("acme", 2, onboarding.StatusCreated)
	for _, a := range []*onboarding.Application{app, listed} {
		if err := s.CreateApplication(ctx, a, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}

	page, _, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Limit: 10})
	if err != nil || len(page) != 2 {
		t.Fatalf("list = %d applications, %v", len(page), err)
	}
	if !s.cached(listed.ID) {
		t.Error("a list kept nothing in an empty cache")
	}

	first, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !s.cached(app.ID) {
		t.Fatal("a read kept nothing")
	}
	// The caller's copy is its own: changing it changes no later read.
	first.Data.Fields["company_name"] = json.RawMessage(`"CHANGED"`)
	first.Participants[0].Email = "changed@example.com"
	second, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(app, second); d != "" {
		t.Errorf("the read after a caller changed its copy (-stored +read):\n%s", d)
	}
	// A list finds the kept application and answers it as stored.
	page, _, _ = s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Limit: 10})
	if d := cmp.Diff(app, page[1]); d != "" {
		t.Errorf("listed (-stored +read):\n%s", d)
	}

	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Data.Fields["industry"] = json.RawMessage(`"software"`)
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// The update kept what it wrote, with the version its commit gave it.
	var version uint64
	if err := s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(appKey(uuid.MustParse(app.ID)))
		if err == nil {
			version = item.Version()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if kept := s.apps.get(uuid.MustParse(app.ID), version); kept == nil || string(kept.Data.Fields["industry"]) != `"software"` {
		t.Errorf("after the update the cache holds %v for the current version", kept)
	}
	// By id, by link slug and in a list, every read sees the write.
	bySlug, err := s.ApplicationBySlug(ctx, app.Participants[0].LinkSlug)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	page, _, _ = s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Limit: 10})
	for name, got := range map[string]*onboarding.Application{"by slug": bySlug, "by id": byID, "listed": page[1]} {
		if v := string(got.Data.Fields["industry"]); v != `"software"` {
			t.Errorf("%s after the update: industry = %s, want \"software\"", name, v)
		}
	}

	// An update that fails leaves no trace in later reads, though its
	// change had altered the copy it was given.
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusApproved
		return onboarding.Changes{}, fmt.Errorf("refused")
	}); err == nil {
		t.Fatal("the failing update succeeded")
	}
	if got, _ := s.Application(ctx, app.ID); got.Status != onboarding.StatusCreated {
		t.Errorf("status after a failed update = %s, want created", got.Status)
	}

	// ForgetCached empties the cache, and the next read decodes the
	// application as stored.
	s.ForgetCached()
	if s.cached(app.ID) || s.cached(listed.ID) || s.apps.size != 0 {
		t.Errorf("after ForgetCached: cached %v and %v, size %d", s.cached(app.ID), s.cached(listed.ID), s.apps.size)
	}
	if got, err := s.Application(ctx, app.ID); err != nil || string(got.Data.Fields["industry"]) != `"software"` || !s.cached(app.ID) {
		t.Errorf("read after ForgetCached: %v, %v; cached again %v", got, err, s.cached(app.ID))
	}
}

// TestUpdateFromStaleCache: an update starts from the cached application
// without reading the database; when the record has changed behind the
// cache (written without the lock), the group's version check sends the
// update back to read it, and the change applies to the stored record,
// losing nothing of that write. A change that refuses the cached
// application is tried on the stored one before its error is believed.
func TestUpdateFromStaleCache(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	setField := func(id, value string) func(*onboarding.Application) (onboarding.Changes, error) {
		return func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Data.Fields[id] = json.RawMessage(value)
			return onboarding.Changes{}, nil
		}
	}
	if _, err := s.UpdateApplication(ctx, app.ID, setField("industry", `"software"`)); err != nil {
		t.Fatal(err)
	}
	if !s.cached(app.ID) {
		t.Fatal("the update kept nothing")
	}

	// A write that neither takes the lock nor tells the cache.
	behind, err := s.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	behind.Data.Fields["website"] = json.RawMessage(`"https://northwind.example"`)
	rec, err := record.Encode(behind)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(appKey(uuid.MustParse(app.ID)), rec) }); err != nil {
		t.Fatal(err)
	}

	for _, refuse := range []bool{false, true} {
		// The cache is behind again: it holds the application before
		// the write above.
		s.apps.clear()
		stale := app.Clone()
		stale.Data.Fields["industry"] = json.RawMessage(`"software"`)
		s.apps.put(uuid.MustParse(app.ID), 1, 0, stale, logHead{}, true)

		var seen []string // the website each call of the change found
		got, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
			seen = append(seen, string(a.Data.Fields["website"]))
			if refuse && a.Data.Fields["website"] == nil {
				return onboarding.Changes{}, errors.New("no website")
			}
			return setField("industry", `"retail"`)(a)
		})
		if err != nil {
			t.Fatalf("refusing the cached application %v: %v", refuse, err)
		}
		if d := cmp.Diff([]string{"", `"https://northwind.example"`}, seen); d != "" {
			t.Errorf("refusing the cached application %v: the change saw websites (-want +got):\n%s", refuse, d)
		}
		stored, err := s.Application(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		for name, a := range map[string]*onboarding.Application{"answered": got, "stored": stored} {
			if w, i := string(a.Data.Fields["website"]), string(a.Data.Fields["industry"]); w != `"https://northwind.example"` || i != `"retail"` {
				t.Errorf("refusing the cached application %v, %s: website %s, industry %s; want the write behind the cache and the update", refuse, name, w, i)
			}
		}
	}

	// Up to date again, the cache is where the next update starts.
	var seen []string
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		seen = append(seen, string(a.Data.Fields["industry"]))
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{`"retail"`}, seen); d != "" {
		t.Errorf("the next update's change saw industries (-want +got):\n%s", d)
	}
}

// TestReadApplication: the shared read answers the application the cache
// keeps once it is read, not a copy; a copying read answers a copy. (What
// the reads answer is the Store suite's.)
func TestReadApplication(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	var reads []*onboarding.Application
	for range 2 {
		if err := s.ReadApplication(ctx, app.ID, func(a *onboarding.Application) error {
			reads = append(reads, a)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(app, reads[0]); d != "" {
		t.Errorf("read (-stored +read):\n%s", d)
	}
	if reads[0] != reads[1] {
		t.Error("the second read copied the application the first one kept")
	}
	// A copying read answers a copy of that same application.
	if copied, err := s.Application(ctx, app.ID); err != nil || copied == reads[1] {
		t.Errorf("Application = %p, %v; want a copy of %p", copied, err, reads[1])
	}
}

// TestAppCacheBudget: the entries' sizes stay within the budget, lists
// evict nothing, an application larger than a quarter of it is never
// kept, and a negative budget keeps nothing.
func TestAppCacheBudget(t *testing.T) {
	c := newAppCache(1000)
	for i := range 50 {
		c.put(uuid.New(), 1, 90, &onboarding.Application{}, logHead{}, true)
		if c.size > c.budget {
			t.Fatalf("after %d puts the cache holds %d bytes, budget %d", i+1, c.size, c.budget)
		}
	}
	if len(c.entries) != 11 {
		t.Errorf("a budget of 1000 holds %d entries of 90, want 11", len(c.entries))
	}
	// Lists fill only the room left: they evict nothing.
	before := maps.Clone(c.entries)
	listed := uuid.New()
	if c.room(90, false) {
		t.Error("a full cache has room for a list's entry")
	}
	c.put(listed, 1, 90, &onboarding.Application{}, logHead{}, false)
	if _, ok := c.entries[listed]; ok {
		t.Error("a list's entry was kept in a full cache")
	}
	if !maps.EqualFunc(before, c.entries, func(a, b cachedApp) bool { return a == b }) {
		t.Error("a list's entry evicted another")
	}
	big := uuid.New()
	c.put(big, 1, 251, &onboarding.Application{}, logHead{}, true)
	if _, ok := c.entries[big]; ok || c.room(251, true) {
		t.Error("an entry over a quarter of the budget was kept")
	}

	// A later version replaces an entry; an earlier one does not.
	id := uuid.New()
	c.put(id, 5, 10, &onboarding.Application{Status: onboarding.StatusReview}, logHead{}, true)
	c.put(id, 4, 10, &onboarding.Application{Status: onboarding.StatusCreated}, logHead{}, true)
	if got := c.get(id, 5); got == nil || got.Status != onboarding.StatusReview {
		t.Errorf("version 5 after putting 4 = %v", got)
	}
	if got := c.get(id, 4); got != nil {
		t.Error("an older version was answered")
	}
	c.put(id, 6, 10, &onboarding.Application{Status: onboarding.StatusApproved}, logHead{}, true)
	if got := c.get(id, 6); got == nil || got.Status != onboarding.StatusApproved {
		t.Errorf("version 6 = %v", got)
	}
	total := 0
	for _, e := range c.entries {
		total += e.size
	}
	if total != c.size {
		t.Errorf("size = %d, entries add up to %d", c.size, total)
	}

	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{AppCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	for range 2 {
		got, err := s.Application(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(app, got); d != "" {
			t.Errorf("without a cache (-stored +read):\n%s", d)
		}
	}
	if s.cached(app.ID) {
		t.Error("a store without a cache kept an application")
	}
}

// TestAppCacheSecondChance: a full cache evicts an entry that has not been
// used since it was kept before any that has (a point read, a current read,
// an update's start), and an entry's new version keeps its mark; when every
// entry has been used, one is evicted all the same.
func TestAppCacheSecondChance(t *testing.T) {
	uses := map[string]func(c *appCache, id uuid.UUID){
		"get":     func(c *appCache, id uuid.UUID) { c.get(id, 1) },
		"current": func(c *appCache, id uuid.UUID) { c.markWritten(id, 1); c.current(id) },
		"latest":  func(c *appCache, id uuid.UUID) { c.latest(id) },
		"new version": func(c *appCache, id uuid.UUID) {
			c.get(id, 1)
			c.put(id, 2, 250, &onboarding.Application{}, logHead{}, true)
		},
	}
	for name, use := range uses {
		t.Run(name, func(t *testing.T) {
			for range 20 { // the hand starts at a random entry each time
				c := newAppCache(1000) // four entries of 250
				ids := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
				for _, id := range ids {
					c.put(id, 1, 250, &onboarding.Application{}, logHead{}, true)
				}
				for i, id := range ids {
					if i != 2 {
						use(c, id)
					}
				}
				c.put(uuid.New(), 1, 250, &onboarding.Application{}, logHead{}, true)
				if _, ok := c.entries[ids[2]]; ok || len(c.entries) != 4 {
					t.Fatalf("the unused entry was kept (%d entries), want it evicted and the used ones kept", len(c.entries))
				}
			}
		})
	}

	c := newAppCache(1000)
	for range 4 {
		id := uuid.New()
		c.put(id, 1, 250, &onboarding.Application{}, logHead{}, true)
		c.get(id, 1)
	}
	added := uuid.New()
	c.put(added, 1, 250, &onboarding.Application{}, logHead{}, true)
	if _, ok := c.entries[added]; !ok || len(c.entries) != 4 || c.size != 1000 {
		t.Errorf("with every entry used, a new one: kept %v, %d entries of %d bytes; want it kept among 4 of 1000", ok, len(c.entries), c.size)
	}
}

// TestAppCacheConcurrent: readers and writers of one application at once
// (run with -race): every read is a whole committed version, and the last
// read has every write.
func TestAppCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	const writers, readers, writes = 4, 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes+readers*writes)
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				_, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
					// Fields and UpdatedAt change together, so a read
					// that mixed two versions shows.
					a.Data.Fields[fmt.Sprintf("w%d-%d", w, i)] = json.RawMessage(`true`)
					a.UpdatedAt = t0.Add(timeOf(len(a.Data.Fields)))
					return onboarding.Changes{}, nil
				})
				errs <- err
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for range writes {
				got, err := s.Application(ctx, app.ID)
				if err == nil && !got.UpdatedAt.Equal(t0.Add(timeOf(len(got.Data.Fields)))) && len(got.Data.Fields) > 1 {
					err = fmt.Errorf("read %d fields updated at %s", len(got.Data.Fields), got.UpdatedAt)
				}
				if err == nil {
					// Readers change their copies, as handlers do.
					got.Data.Fields["company_name"] = json.RawMessage(`"MINE"`)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	got, _ := s.Application(ctx, app.ID)
	if n := len(got.Data.Fields); n != writers*writes+1 {
		t.Errorf("fields after %d writes = %d, want %d", writers*writes, n, writers*writes+1)
	}
	if v := string(got.Data.Fields["company_name"]); v != `"COMPANY 1"` {
		t.Errorf("company_name = %s: a reader's change reached the store's copy", v)
	}
}

// timeOf is the UpdatedAt offset TestAppCacheConcurrent pairs with n fields.
func timeOf(n int) time.Duration { return time.Duration(n) * time.Second }
