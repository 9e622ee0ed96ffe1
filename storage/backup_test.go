package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
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

// expiries returns the expiry (unix seconds; 0 for none) of every key.
func expiries(t *testing.T, s *Store) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	eachItem(t, s, badger.IteratorOptions{}, func(item *badger.Item) error {
		out[string(item.KeyCopy(nil))] = item.ExpiresAt()
		return nil
	})
	return out
}

// backupAndRestore backs s up and restores the records into a new
// directory, returning the snapshot and the restored store (closed at the
// end of the test).
func backupAndRestore(t *testing.T, s *Store) (Snapshot, *Store) {
	t.Helper()
	var buf bytes.Buffer
	snap, err := s.Backup(context.Background(), &buf)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "badger")
	n, err := Restore(dir, &buf)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if n != snap.Keys {
		t.Errorf("Restore loaded %d keys, the snapshot has %d", n, snap.Keys)
	}
	restored := openTestStore(t, dir)
	t.Cleanup(func() { restored.Close() })
	return snap, restored
}

// TestBackupRestoreRoundTrip backs up a store holding every kind of record
// (applications with documents and registry documents, an RFI request with
// a document, a key, an idempotent response and an event, both expiring,
// and an index entry deleted by an update) and restores it: the restored
// database has exactly the same keys, values and expiries, and the snapshot
// names each blob the records refer to once.
func TestBackupRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()

	a1 := fixture.App("acme", 1, onboarding.StatusInProgress)
	a1.Data.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {FileID: "f1", BlobID: "blob-c"}}
	a1.Data.People = []onboarding.Person{{ID: "p1", Documents: map[string]onboarding.Document{
		"person_id_document": {FileID: "f2", BlobID: "blob-a"},
		"skipped":            {FileID: "f3", Status: onboarding.DocumentSkipped},
	}}}
	a1.RegistryDocuments = []onboarding.RegistryDocument{{ID: "r1", BlobID: "blob-b"}}
	a2 := fixture.App("acme", 2, onboarding.StatusSent)
	a2.Data.Entities = []onboarding.Entity{{ID: "e1", Documents: map[string]onboarding.Document{"entity_doc": {FileID: "f4", BlobID: "blob-a"}}}}
	for _, a := range []*onboarding.Application{a1, a2} {
		if err := s.CreateApplication(ctx, a, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}
	// The status change deletes a2's xs/ entry of status sent.
	if _, err := s.UpdateApplication(ctx, a2.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusInProgress
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := fixture.RFI("acme", 3, onboarding.RFIActive)
	r.Documents = map[string]onboarding.Document{"bank_statement": {FileID: "f5", BlobID: "blob-d"}}
	fixture.CreateRFIs(t, s, r)
	if err := s.CreateAPIKey(ctx, &onboarding.APIKey{ClientID: "c1", OrgID: "acme", Name: "k", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	s.SaveResponse("c1", "idem-1", json.RawMessage(`{"status":201}`), time.Hour, func(err error) { saved <- err })
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	event := &onboarding.Event{ID: "evt_" + ulid.Make().String(), Type: onboarding.EventApplicationCreated,
		OrgID: "acme", Subject: a1.ID, At: time.Now().UTC(), Body: json.RawMessage(`{}`)}
	if err := s.AddEvent(ctx, event); err != nil {
		t.Fatal(err)
	}

	snap, restored := backupAndRestore(t, s)
	want := allKeys(t, s)
	if snap.Keys != len(want) {
		t.Errorf("snapshot keys = %d, want %d", snap.Keys, len(want))
	}
	if diff := cmp.Diff(want, allKeys(t, restored)); diff != "" {
		t.Errorf("restored records (-original +restored):\n%s", diff)
	}
	if diff := cmp.Diff(expiries(t, s), expiries(t, restored)); diff != "" {
		t.Errorf("restored expiries (-original +restored):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"blob-a", "blob-b", "blob-c", "blob-d"}, snap.BlobIDs); diff != "" {
		t.Errorf("snapshot blobs (-want +got):\n%s", diff)
	}
	got, err := restored.Application(ctx, a1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a1, got); diff != "" {
		t.Errorf("restored application (-original +restored):\n%s", diff)
	}
}

// TestBackupIsOneSnapshot backs up while a writer keeps changing two keys
// at the two ends of the keyspace in one transaction each, with enough keys
// between them that Badger splits the stream into several ranges: the
// backup holds both keys from the same transaction.
func TestBackupIsOneSnapshot(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	wb := s.db.NewWriteBatch()
	for i := range 30000 {
		if err := wb.Set(fmt.Appendf(nil, "f/%06d", i), []byte{record.CodecJSON, '0'}); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
	first, last := []byte("0/pair"), []byte("~/pair")
	setPair := func(n int) error {
		return s.db.Update(func(txn *badger.Txn) error {
			v := strconv.AppendInt(nil, int64(n), 10)
			if err := txn.Set(first, v); err != nil {
				return err
			}
			return txn.Set(last, v)
		})
	}
	if err := setPair(0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	writes := 0
	wg.Go(func() {
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := setPair(n); err != nil {
				t.Error(err)
				return
			}
			writes = n
		}
	})
	var buf bytes.Buffer
	_, err := s.Backup(context.Background(), &buf)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "badger")
	if _, err := Restore(dir, &buf); err != nil {
		t.Fatal(err)
	}
	restored := openTestStore(t, dir)
	defer restored.Close()
	got := keysWithPrefix(t, restored, "0/")[string(first)]
	if other := keysWithPrefix(t, restored, "~/")[string(last)]; got != other {
		t.Errorf("the pair differs in the backup: %q and %q (writer made %d writes)", got, other, writes)
	}
	if n := len(keysWithPrefix(t, restored, "f/")); n != 30000 {
		t.Errorf("restored %d filler keys, want 30000", n)
	}
}

// TestBackupFailsOnUnreadableRecord checks that a record the backup cannot
// decode fails it, naming the key, instead of being left out (Badger's
// Stream would only log it).
func TestBackupFailsOnUnreadableRecord(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.App("acme", 1, onboarding.StatusSent)
	if err := s.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	key := appKey(uuid.MustParse(app.ID))
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, []byte{9, '{', '}'}) }); err != nil {
		t.Fatal(err)
	}
	_, err := s.Backup(context.Background(), &bytes.Buffer{})
	want := fmt.Sprintf("back up records: key %q: decode record: unknown codec version 9", key)
	if err == nil || err.Error() != want {
		t.Errorf("Backup: %v, want %s", err, want)
	}
}

// TestBackupStopsWhenCancelled checks that a cancelled backup fails with
// the context's error.
func TestBackupStopsWhenCancelled(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Backup(ctx, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Backup: %v, want context.Canceled", err)
	}
}

// TestRestoreRefusals checks what Restore refuses: records that are not
// onboard's (no schema version), records of a newer schema, and a target
// that exists.
func TestRestoreRefusals(t *testing.T) {
	backupOf := func(t *testing.T, schema string) *bytes.Buffer {
		s := openTestStore(t, t.TempDir())
		defer s.Close()
		if err := s.db.Update(func(txn *badger.Txn) error {
			if schema == "" {
				return txn.Delete([]byte(keySchema))
			}
			return txn.Set([]byte(keySchema), []byte(schema))
		}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := s.Backup(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		return &buf
	}
	existing := t.TempDir()
	tests := []struct {
		name    string
		records func(t *testing.T) *bytes.Buffer
		dir     string
		want    string
	}{
		{"no schema", func(t *testing.T) *bytes.Buffer { return backupOf(t, "") }, "",
			"restore records: they hold no schema version, so they are not onboard's"},
		{"newer schema", func(t *testing.T) *bytes.Buffer { return backupOf(t, "99") }, "",
			`data directory has schema version "99"; this onboard reads version ` + schemaVersion},
		{"existing directory", func(t *testing.T) *bytes.Buffer { return backupOf(t, schemaVersion) }, existing,
			"restore records: mkdir " + existing + ": file exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = filepath.Join(t.TempDir(), "badger")
			}
			_, err := Restore(dir, tt.records(t))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Restore: %v, want %s", err, tt.want)
			}
		})
	}
}

// keyVersions returns how many versions of key the database still holds.
func keyVersions(t *testing.T, s *Store, key []byte) int {
	t.Helper()
	n := 0
	eachItem(t, s, badger.IteratorOptions{AllVersions: true, Prefix: key}, func(*badger.Item) error { n++; return nil })
	return n
}

// TestBackupKeepsLatestVersionOnly checks that a record updated many times
// is backed up once, at its latest version, however many older versions
// the database has not compacted away yet.
func TestBackupKeepsLatestVersionOnly(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.StoredApp(t, s, "acme", 1, onboarding.StatusInProgress)
	for i := range 20 {
		if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Data.Fields["company_name"] = json.RawMessage(fmt.Sprintf(`"NAME %d"`, i))
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	key := appKey(uuid.MustParse(app.ID))
	if n := keyVersions(t, s, key); n < 2 {
		t.Fatalf("the original holds %d versions of the record; the test needs older ones", n)
	}
	_, restored := backupAndRestore(t, s)
	if n := keyVersions(t, restored, key); n != 1 {
		t.Errorf("the restored database holds %d versions of the record, want 1", n)
	}
	got, err := restored.Application(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if name := got.CompanyName(); name != "NAME 19" {
		t.Errorf("restored company name %q, want the latest, NAME 19", name)
	}
}
