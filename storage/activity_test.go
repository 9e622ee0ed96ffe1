package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// TestUpdateFromCachedHead: an update that starts from the cache chains
// its entries after the head the cache knows for the record's version;
// from a stale entry (a stale head with it) and from an entry a read put
// there (no head known), after the stored head.
func TestUpdateFromCachedHead(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	u := uuid.MustParse(app.ID)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	update := func(step string, a onboarding.Activity) {
		t.Helper()
		if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
			return onboarding.Changes{Log: []onboarding.Activity{a}}, nil
		}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		log = append(log, a)
		fixture.WantChained(t, s, app.ID, log)
	}
	update("after a read", fixture.Act("test.first", t0.Add(time.Minute)))
	old, oldVersion, oldHead := s.apps.latest(u)
	if old == nil || !oldHead.known || oldHead.head == nil {
		t.Fatalf("the update kept application %v with head %+v; want both", old != nil, oldHead)
	}
	update("from the cache", fixture.Act("test.second", t0.Add(2*time.Minute)))

	s.apps.clear()
	s.apps.put(u, oldVersion, 0, old, oldHead, true)
	update("from a stale entry", fixture.Act("test.third", t0.Add(3*time.Minute)))

	s.apps.clear()
	if _, err := s.Application(ctx, app.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, h := s.apps.latest(u); h.known {
		t.Fatalf("a read kept a head: %+v", h)
	}
	update("from a read's entry", fixture.Act("test.fourth", t0.Add(4*time.Minute)))
}

// legacyLog stores log as schema 4 did: plain entries under v/, no links,
// no head.
func legacyLog(t *testing.T, s *Store, id string, log []onboarding.Activity) {
	t.Helper()
	u := uuid.MustParse(id)
	entropy := ulid.Monotonic(ulid.DefaultEntropy(), 0)
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for i := range log {
		b, err := record.Encode(&log[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := wb.Set(activityKey(u, ulid.MustNew(ulid.Timestamp(log[i].At), entropy)), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
}

// versions returns the Badger version of every v/ and vh/ key: a key
// rewritten gets a new one.
func versions(t *testing.T, s *Store) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, prefix := range []string{prefixActivity, prefixActivityHead} {
		eachItem(t, s, badger.IteratorOptions{Prefix: []byte(prefix)}, func(item *badger.Item) error {
			out[string(item.KeyCopy(nil))] = item.Version()
			return nil
		})
	}
	return out
}

// TestMigrateSchema4 opens a version 4 data directory, whose activity
// entries have no hashes and whose logs no heads (more entries than one
// migration transaction reads, so that a log spans two): every log becomes
// its chain, with its head, and nothing else changes. A migration cut
// short by a crash after its first transaction is finished on the next
// open without rewriting what it had done.
func TestMigrateSchema4(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTestStore(t, dir)
	a1, a2 := fixture.App("acme", 1, onboarding.StatusSent), fixture.App("globex", 2, onboarding.StatusCreated)
	r := fixture.RFI("acme", 3, onboarding.RFIActive)
	for _, a := range []*onboarding.Application{a1, a2} {
		if err := s.CreateApplication(ctx, a, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	logs := map[string][]onboarding.Activity{}
	for i, id := range []string{a1.ID, a2.ID, r.ID} {
		n := []int{migrationBatch/2 + 3, migrationBatch, 5}[i]
		for j := range n {
			a := fixture.Act(fmt.Sprintf("test.%d", j), t0.Add(time.Duration(j)*time.Millisecond))
			if j%3 == 0 {
				a.Fields, a.Detail = []string{"industry"}, "stage <b>&</b>"
			}
			logs[id] = append(logs[id], a)
		}
		legacyLog(t, s, id, logs[id])
	}
	if err := s.setSchema(ctx, "4"); err != nil {
		t.Fatal(err)
	}
	before := allKeys(t, s)

	// The first transaction of the migration, then a crash.
	var st chainState
	if err := s.update(ctx, func(txn *badger.Txn) error {
		st2 := st
		done, err := chainBatch(txn, &st2)
		if done {
			t.Error("the first batch finished the migration")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	partial := versions(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTestStore(t, dir)
	defer s.Close()
	if v, _, err := s.schema(); err != nil || v != schemaVersion {
		t.Errorf("schema after migration = %q, %v; want %s", v, err, schemaVersion)
	}
	for id, log := range logs {
		fixture.WantChained(t, s, id, log)
	}
	after := versions(t, s)
	kept := 0
	for k, v := range partial {
		if k[:len(prefixActivity)] == prefixActivity && after[k] == v {
			kept++
		}
	}
	if kept != migrationBatch {
		t.Errorf("%d entries chained before the crash kept their version, want the %d of the first batch", kept, migrationBatch)
	}
	// Besides v/ values and the new heads, nothing changed.
	got := allKeys(t, s)
	for k := range got {
		if k[:len(prefixActivity)] == prefixActivity || k[:len(prefixActivityHead)] == prefixActivityHead {
			delete(got, k)
		}
	}
	for k := range before {
		if k[:len(prefixActivity)] == prefixActivity {
			delete(before, k)
		}
	}
	before[keySchema] = schemaVersion
	if diff := cmp.Diff(before, got); diff != "" {
		t.Errorf("other keys after migration (-want +got):\n%s", diff)
	}
}

func TestHeadEncoding(t *testing.T) {
	h := onboarding.ActivityHead{Seq: ulid.MustParse("01KAJ6F4G0000000000000000A"), Hash: onboarding.ActivityChainStart("x")}
	b, err := encodeHead(h)
	if err != nil || len(b) != headLen {
		t.Fatalf("encodeHead = %x, %v", b, err)
	}
	if got, err := decodeHead(b); err != nil || got != h {
		t.Errorf("decodeHead = %+v, %v; want %+v", got, err, h)
	}
	if _, err := encodeHead(onboarding.ActivityHead{Hash: "zz"}); err == nil {
		t.Error("encodeHead of a bad hash succeeded")
	}
	if _, err := decodeHead(b[:20]); err == nil {
		t.Error("decodeHead of a short value succeeded")
	}
	if got := successor(ulid.ULID{0: 1, 15: 0xff}); got != (ulid.ULID{0: 1, 14: 1}) {
		t.Errorf("successor carries wrongly: %x", got)
	}
}
