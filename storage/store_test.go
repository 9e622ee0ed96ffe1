package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
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

func openTestStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return s
}

// t0 is the fixtures' creation time.
var t0 = fixture.T0

func TestKeys(t *testing.T) {
	seq := ulid.ULID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}
	id := uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"app", appKey(id), append([]byte("a/"), id[:]...)},
		{"org index", orgIndexKey("acme", seq), append([]byte("xo/acme\x00"), seq[:]...)},
		{"status index", statusIndexKey("acme", onboarding.StatusSent, seq), append([]byte("xs/acme\x00sent\x00"), seq[:]...)},
		{"list all", listPrefix("acme", ""), []byte("xo/acme\x00")},
		{"list status", listPrefix("acme", onboarding.StatusInProgress), []byte("xs/acme\x00in_progress\x00")},
		{"slug", slugIndexKey("abc_-"), []byte("xl/abc_-")},
		{"activity", activityKey(id, seq), append(append([]byte("v/"), id[:]...), seq[:]...)},
		{"api key", apiKeyKey("abc123"), []byte("k/abc123")},
		{"org key index", orgKeyIndexKey("acme", "abc123"), []byte("xk/acme\x00abc123")},
		{"event", eventKey(seq), append([]byte("e/"), seq[:]...)},
		{"org event index", append(orgEventPrefix("acme"), seq[:]...), append([]byte("xe/acme\x00"), seq[:]...)},
		{"type event index", append(typeEventPrefix("acme", onboarding.EventApplicationSent), seq[:]...), append([]byte("xet/acme\x00application.sent\x00"), seq[:]...)},
		{"events of all types", eventListPrefix("acme", ""), []byte("xe/acme\x00")},
		{"endpoint", endpointKey("we_1"), []byte("w/we_1")},
		{"org endpoint index", orgEndpointKey("acme", "we_1"), []byte("xw/acme\x00we_1")},
		{"delivery", deliveryKey("we_1", "app", seq), append([]byte("q/we_1\x00app\x00"), seq[:]...)},
		{"queue head", queueHeadKey("we_1", "app"), []byte("qh/we_1\x00app")},
		{"due index", dueKey(time.Unix(0, 0x0102), deliveryKey("we_1", "app", seq)), append([]byte("xq/we_1\x00\x00\x00\x00\x00\x00\x00\x01\x02app\x00"), seq[:]...)},
		{"lease index", leaseKey(time.Unix(0, 0x0102), deliveryKey("we_1", "app", seq)), append([]byte("xu/we_1\x00\x00\x00\x00\x00\x00\x00\x01\x02app\x00"), seq[:]...)},
		{"delivery log", attemptKey(seq), append([]byte("d/"), seq[:]...)},
		{"delivery log by endpoint", append(endpointAttemptPrefix("we_1"), seq[:]...), append([]byte("xdw/we_1\x00"), seq[:]...)},
		{"delivery log by event", append(eventAttemptPrefix("evt_1"), seq[:]...), append([]byte("xde/evt_1\x00"), seq[:]...)},
	}
	for _, tt := range tests {
		if !bytes.Equal(tt.got, tt.want) {
			t.Errorf("%s key = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	// An organization whose id is a prefix of another's must not list the other's applications.
	if bytes.HasPrefix(orgIndexKey("acme2", seq), orgIndexPrefix("acme")) {
		t.Errorf("org index of acme2 falls under the prefix of acme")
	}
	// Nor an endpoint the other's deliveries.
	if bytes.HasPrefix(deliveryKey("we_10", "app", seq), endpointQueuePrefix("we_1")) {
		t.Errorf("queue of we_10 falls under the prefix of we_1")
	}
	due, delivery, err := parseTimedKey(indexSpace(prefixLeaseIndex, "we_1"), leaseKey(t0, deliveryKey("we_1", "app", seq)))
	if err != nil || !due.Equal(t0) || !bytes.Equal(delivery, deliveryKey("we_1", "app", seq)) {
		t.Errorf("parseTimedKey = %v, %q, %v", due, delivery, err)
	}
	// No family's prefix starts another's, so no prefix scan crosses families.
	families := []string{prefixApp, prefixOrgIndex, prefixStatusIndex, prefixSlugIndex, prefixPendingDocs, prefixActivity, prefixKey,
		prefixOrgKeyIndex, prefixIdempotency, "m/", prefixRetiredPreAuthIndex, prefixEvent, prefixOrgEventIndex, prefixTypeEventIndex,
		prefixEndpoint, prefixOrgEndpointIndex, prefixDelivery, prefixQueueHead, prefixDueIndex, prefixLeaseIndex, prefixAttempt, prefixEndpointAttempts,
		prefixEventAttempts, prefixActivityHead}
	for i, a := range families {
		for j, b := range families {
			if i != j && strings.HasPrefix(b, a) {
				t.Errorf("family %q starts with family %q", b, a)
			}
		}
	}
}

// indexSnapshot returns every index key in the store, sorted.
func indexSnapshot(t *testing.T, s *Store) []string {
	t.Helper()
	return sortedKeys(t, s, "x")
}

// sortedKeys returns the store's keys under prefixes, sorted.
func sortedKeys(t *testing.T, s *Store, prefixes ...string) []string {
	t.Helper()
	var keys []string
	for _, p := range prefixes {
		for k := range keysWithPrefix(t, s, p) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// wantIndexes returns the index keys of apps, sorted.
func wantIndexes(apps ...*onboarding.Application) []string {
	return wantKeys(func(a *onboarding.Application) map[string][]byte { return appIndexes(a, uuid.MustParse(a.ID)) }, apps...)
}

// wantKeys returns the keys of index of each record, sorted.
func wantKeys[R any](index func(R) map[string][]byte, records ...R) []string {
	var keys []string
	for _, r := range records {
		for k := range index(r) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func TestUpdateKeepsIndexesConsistent(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	a, b := fixture.App("acme", 1, onboarding.StatusCreated), fixture.App("acme", 2, onboarding.StatusSent)
	for _, app := range []*onboarding.Application{a, b} {
		if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(wantIndexes(a, b), indexSnapshot(t, s)); diff != "" {
		t.Fatalf("indexes after create (-want +got):\n%s", diff)
	}
	hash := bytes.Repeat([]byte{7}, 32)
	updated, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.Status = onboarding.StatusInProgress
		app.Participants[0].PreAuthHash = hash
		return onboarding.Changes{Log: []onboarding.Activity{{At: t0, Action: onboarding.ActionPreAuthIssued}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status != onboarding.StatusInProgress {
		t.Errorf("updated status = %s, want in_progress", updated.Status)
	}
	if diff := cmp.Diff(wantIndexes(updated, b), indexSnapshot(t, s)); diff != "" {
		t.Errorf("indexes after status and pre-auth change (-want +got):\n%s", diff)
	}
	// A new code changes no index entry.
	updated, err = s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.Participants[0].PreAuthHash = bytes.Repeat([]byte{8}, 32)
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantIndexes(updated, b), indexSnapshot(t, s)); diff != "" {
		t.Errorf("indexes after pre-auth refresh (-want +got):\n%s", diff)
	}
	// A failing change writes nothing.
	boom := errors.New("boom")
	if _, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.Status = onboarding.StatusApproved
		return onboarding.Changes{}, boom
	}); !errors.Is(err, boom) {
		t.Errorf("UpdateApplication(failing change) = %v, want boom", err)
	}
	got, _ := s.Application(ctx, a.ID)
	if got.Status != onboarding.StatusInProgress {
		t.Errorf("status after failed change = %s, want in_progress", got.Status)
	}
	if _, err := s.UpdateApplication(ctx, a.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
		app.OrgID = "other"
		return onboarding.Changes{}, nil
	}); err == nil {
		t.Errorf("UpdateApplication(changing the organization) succeeded, want an error")
	}
	if _, err := s.UpdateApplication(ctx, uuid.NewString(), func(*onboarding.Application) (onboarding.Changes, error) { return onboarding.Changes{}, nil }); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("UpdateApplication(unknown) = %v, want ErrNotFound", err)
	}
	logged, _ := s.Activity(ctx, a.ID)
	if len(logged) != 1 || logged[0].Action != onboarding.ActionPreAuthIssued {
		t.Errorf("activity = %+v, want one pre_auth.issued entry", logged)
	}
}

func TestCloseTwice(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)
	defer s.Close()
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open = %v, want ErrLocked", err)
	}
}

func TestUnknownCodecIsAnError(t *testing.T) {
	var v struct{}
	if err := record.Decode([]byte{9, '{', '}'}, &v); err == nil {
		t.Errorf("decode with codec 9 succeeded, want an error")
	}
	if err := record.Decode(nil, &v); err == nil {
		t.Errorf("decode of an empty value succeeded, want an error")
	}
}

func TestSchemaVersionIsChecked(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir)
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(keySchema), []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(dir, Options{}); err == nil {
		t.Errorf("Open with schema 99 succeeded, want an error")
	}
}

// TestMigrateSchema1 opens a version 1 data directory: applications stored
// pending before the xr/ index existed are queued, and the version moves to 2.
func TestMigrateSchema1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTestStore(t, dir)
	pending, done := fixture.App("acme", 1, onboarding.StatusSent), fixture.App("acme", 2, onboarding.StatusSent)
	pending.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
	done.RegistryDocumentsStatus = onboarding.RegistryDocumentsComplete
	for _, app := range []*onboarding.Application{pending, done} {
		if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}
	// Make it look like version 1 wrote it.
	if err := s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(pendingDocsKey(uuid.MustParse(pending.ID))); err != nil {
			return err
		}
		return txn.Set([]byte(keySchema), []byte("1"))
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.PendingRegistryDocuments(ctx); len(got) != 0 {
		t.Fatalf("pending before migration = %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir)
	defer s.Close()
	got, err := s.PendingRegistryDocuments(ctx)
	if err != nil || !cmp.Equal(got, []string{pending.ID}) {
		t.Errorf("pending after migration = %v, %v; want [%s]", got, err, pending.ID)
	}
	if err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(keySchema))
		if err != nil {
			return err
		}
		v, _ := item.ValueCopy(nil)
		if string(v) != schemaVersion {
			t.Errorf("schema after migration = %q, want %s", v, schemaVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateSchema2 opens a version 2 data directory, which kept an xp/
// entry per pre-auth code (more than one migration transaction's worth
// here): every xp/ key is gone, everything else is as it was, and the
// version moves to 3.
func TestMigrateSchema2(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTestStore(t, dir)
	withCode, other := fixture.App("acme", 1, onboarding.StatusSent), fixture.App("acme", 2, onboarding.StatusCreated)
	withCode.Participants[0].PreAuthHash = bytes.Repeat([]byte{7}, 32)
	withCode.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
	for _, app := range []*onboarding.Application{withCode, other} {
		if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{{At: t0, Action: onboarding.ActionCreated}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateAPIKey(ctx, &onboarding.APIKey{ClientID: "abc", OrgID: "acme", Name: "ci", SecretHash: []byte{1}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	before := allKeys(t, s)
	// Make it look like version 2 wrote it: the code's entry, plus as many
	// more as take three migration transactions.
	id := uuid.MustParse(withCode.ID)
	if err := s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(append([]byte("xp/"), withCode.Participants[0].PreAuthHash...), id[:]); err != nil {
			return err
		}
		for i := 0; i < 2*migrationBatch; i++ {
			hash := make([]byte, 32)
			binary.BigEndian.PutUint32(hash, uint32(i))
			if err := txn.Set(append([]byte("xp/"), hash...), id[:]); err != nil {
				return err
			}
		}
		return txn.Set([]byte(keySchema), []byte("2"))
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(keysWithPrefix(t, s, "xp/")); n != 2*migrationBatch+1 {
		t.Fatalf("xp/ keys before migration = %d, want %d", n, 2*migrationBatch+1)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTestStore(t, dir)
	defer s.Close()
	if got := keysWithPrefix(t, s, "xp/"); len(got) != 0 {
		t.Errorf("%d xp/ keys after migration, want none", len(got))
	}
	before[keySchema] = schemaVersion
	if diff := cmp.Diff(before, allKeys(t, s)); diff != "" {
		t.Errorf("data after migration (-want +got):\n%s", diff)
	}
	if got, err := s.ApplicationBySlug(ctx, withCode.Participants[0].LinkSlug); err != nil || !cmp.Equal(got, withCode) {
		t.Errorf("ApplicationBySlug after migration = %+v, %v; want the application", got, err)
	}
}

// allKeys returns every key in the store with its value.
func allKeys(t *testing.T, s *Store) map[string]string {
	t.Helper()
	return keysWithPrefix(t, s, "")
}

// keysWithPrefix returns the store's keys that start with prefix, with their values.
func keysWithPrefix(t *testing.T, s *Store, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachItem(t, s, badger.IteratorOptions{Prefix: []byte(prefix)}, func(item *badger.Item) error {
		v, err := item.ValueCopy(nil)
		out[string(item.KeyCopy(nil))] = string(v)
		return err
	})
	return out
}

// eachItem calls fn with every item an iterator of o visits, in one read
// transaction, and fails t on an error.
func eachItem(t *testing.T, s *Store, o badger.IteratorOptions, fn func(*badger.Item) error) {
	t.Helper()
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := fn(it.Item()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrateSchema3 opens a version 3 data directory, whose keys were
// stored without AllScopes (more of them than one migration transaction
// reads): those that carry every scope version 3 knew, in any order, were
// created without a scope list and become AllScopes; the others keep
// exactly their scopes. The version moves on (to 4, then to the current one).
func TestMigrateSchema3(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTestStore(t, dir)
	all3 := []onboarding.Scope{onboarding.ScopeApplicationsCreate, onboarding.ScopeApplicationsRead, onboarding.ScopeApplicationsWrite, onboarding.ScopeRFICreate}
	// v3Key is the API key record as version 3 stored it.
	type v3Key struct {
		ClientID, OrgID, Name string
		Scopes                []onboarding.Scope
		SecretHash            []byte
		CreatedAt             time.Time
		ExpiresAt, LastUsedAt *time.Time
		RevokedAt             *time.Time
	}
	scopeSets := [][]onboarding.Scope{
		all3,
		{onboarding.ScopeRFICreate, onboarding.ScopeApplicationsWrite, onboarding.ScopeApplicationsRead, onboarding.ScopeApplicationsCreate},
		{onboarding.ScopeApplicationsRead},
		all3[:3],
		nil,
	}
	want := map[string]bool{} // client id → AllScopes after the migration
	n := 2*migrationBatch + 1
	if err := s.db.Update(func(txn *badger.Txn) error {
		for i := 0; i < n; i++ {
			k := v3Key{ClientID: fmt.Sprintf("c%05d", i), OrgID: "acme", Name: "ci", Scopes: scopeSets[i%len(scopeSets)], SecretHash: []byte{1}, CreatedAt: t0}
			want[k.ClientID] = i%len(scopeSets) < 2
			if err := setRecord(txn, apiKeyKey(k.ClientID), &k); err != nil {
				return err
			}
			if err := txn.Set(orgKeyIndexKey(k.OrgID, k.ClientID), nil); err != nil {
				return err
			}
		}
		return txn.Set([]byte(keySchema), []byte("3"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTestStore(t, dir)
	defer s.Close()
	keys, err := s.APIKeys(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != n {
		t.Fatalf("%d keys after migration, want %d", len(keys), n)
	}
	got := map[string]bool{}
	for i, k := range keys {
		got[k.ClientID] = k.AllScopes
		if i < len(scopeSets) && !cmp.Equal(k.Scopes, scopeSets[i]) {
			t.Errorf("key %s scopes = %v, want them kept: %v", k.ClientID, k.Scopes, scopeSets[i])
		}
		if k.Has(onboarding.ScopeEventsRead) != want[k.ClientID] {
			t.Errorf("key %s (scopes %v) has events:read = %v", k.ClientID, k.Scopes, !want[k.ClientID])
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AllScopes after migration (-want +got):\n%s", diff)
	}
	if v, _, err := s.schema(); err != nil || v != schemaVersion {
		t.Errorf("schema after migration = %q, %v; want %s", v, err, schemaVersion)
	}
}

// TestWriteConflictIsDomainError makes every attempt of a transaction lose
// a real Badger conflict and checks what leaves the Store: a
// onboarding.ErrWriteConflict that keeps Badger's message.
func TestWriteConflictIsDomainError(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	key := []byte("test/conflict")
	attempts := 0
	err := s.update(context.Background(), func(txn *badger.Txn) error {
		attempts++
		if _, err := txn.Get(key); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		// A concurrent transaction writes what this one read, and commits first.
		if err := s.db.Update(func(other *badger.Txn) error { return other.Set(key, []byte{byte(attempts)}) }); err != nil {
			return err
		}
		return txn.Set(key, []byte("mine"))
	})
	if !errors.Is(err, onboarding.ErrWriteConflict) {
		t.Fatalf("update = %v, want an onboarding.ErrWriteConflict", err)
	}
	if attempts != maxAttempts {
		t.Errorf("attempts = %d, want %d", attempts, maxAttempts)
	}
	if want := fmt.Sprintf("transaction still conflicting after %d attempts: %v", maxAttempts, badger.ErrConflict); err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}
	if !errors.Is(err, badger.ErrConflict) {
		t.Errorf("update = %v, which no longer matches badger.ErrConflict for the retries inside storage", err)
	}
}
