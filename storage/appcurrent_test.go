package storage

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// isCurrent reports whether the cache holds application id's entry as
// current.
func (s *Store) isCurrent(id uuid.UUID) bool {
	app, _ := s.apps.current(id)
	return app != nil
}

// readField reads one field of application id through ReadApplication.
func readField(t *testing.T, s *Store, id, field string) string {
	t.Helper()
	var v string
	if err := s.ReadApplication(context.Background(), id, func(a *onboarding.Application) error {
		v = string(a.Data.Fields[field])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// setIndustry is an update that sets the industry field to v.
func setIndustry(v string) func(*onboarding.Application) (onboarding.Changes, error) {
	return func(a *onboarding.Application) (onboarding.Changes, error) {
		if a.Data.Fields == nil {
			a.Data.Fields = map[string]json.RawMessage{}
		}
		a.Data.Fields["industry"] = json.RawMessage(strconv.Quote(v))
		return onboarding.Changes{}, nil
	}
}

// TestReadCurrent: a point read marks its entry current and the next one
// is served from it without the database (shown by a write behind the
// cache's back, which no code of onboard makes); an update clears the mark
// before it commits and marks its own version once committed; a read
// marks nothing when an update of its lock stripe began or ended since it
// took its count, or was under way then.
func TestReadCurrent(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	u := uuid.MustParse(app.ID)
	if _, err := s.UpdateApplication(ctx, app.ID, setIndustry("software")); err != nil {
		t.Fatal(err)
	}
	if !s.isCurrent(u) {
		t.Fatal("the update did not mark its version current")
	}
	s.apps.clear()
	if got := readField(t, s, app.ID, "industry"); got != `"software"` {
		t.Fatalf("read industry %s", got)
	}
	if !s.isCurrent(u) {
		t.Fatal("a read with no update under way did not mark its entry current")
	}

	// Behind the cache's back: a current entry is served without a read.
	behind := app.Clone()
	behind.Data.Fields = map[string]json.RawMessage{"industry": json.RawMessage(`"behind"`)}
	rec, err := record.Encode(behind)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(appKey(u), rec) }); err != nil {
		t.Fatal(err)
	}
	if got := readField(t, s, app.ID, "industry"); got != `"software"` {
		t.Errorf("a current entry was not served: read %s", got)
	}

	// An update clears the mark before it commits, and marks its own
	// version after.
	var currentDuring bool
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		currentDuring = currentDuring || s.isCurrent(u)
		return setIndustry("retail")(a)
	}); err != nil {
		t.Fatal(err)
	}
	if currentDuring {
		t.Error("the entry stayed current while an update was under way")
	}
	if got := readField(t, s, app.ID, "industry"); got != `"retail"` {
		t.Errorf("after the update, read industry %s", got)
	}
	if !s.isCurrent(u) {
		t.Error("the update did not mark its version current")
	}

	// Reads that must not mark: an update of another application of the
	// stripe began, or ended, or was under way.
	neighbour := u
	neighbour[0] ^= 0xff // same last two bytes: the same stripe
	if lockStripe(neighbour) != lockStripe(u) {
		t.Fatal("the neighbour is in another stripe")
	}
	for _, c := range []struct {
		name          string
		before, after func()
	}{
		{"an update began after the count", func() {}, func() { s.apps.beginWrite(neighbour) }},
		{"an update began and ended after the count", func() {}, func() { s.apps.beginWrite(neighbour); s.apps.endWrite(neighbour) }},
		{"an update was under way", func() { s.apps.beginWrite(neighbour) }, func() {}},
	} {
		s.apps.clear()
		s.apps.writes[lockStripe(u)] = 0
		c.before()
		_, count := s.apps.current(u)
		var version uint64
		if err := s.view(func(txn *badger.Txn) error {
			_, v, _, err := s.readSharedApplication(txn, u, true)
			version = v
			return err
		}); err != nil {
			t.Fatal(err)
		}
		c.after()
		s.apps.markRead(u, version, count)
		if s.isCurrent(u) {
			t.Errorf("%s: the read marked its entry current", c.name)
		}
	}
}
