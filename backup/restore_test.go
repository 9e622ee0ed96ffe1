package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/backup/backuptest"
	"onboard/onboarding"
	"onboard/storage"
	"onboard/storage/dump"
)

// fillStore stores, through the Store's own methods, a row of every kind
// a store keeps: an application referring to the blob blobID, with
// activity, an idempotent outcome and an event queued for an endpoint; an
// RFI request with activity; an API key; and the webhook traffic and
// leases of fillWebhooks. It returns the application's id.
func fillStore(t *testing.T, s onboarding.Store, blobID string) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	ep := &onboarding.Endpoint{ID: "we_" + ulid.Make().String(), OrgID: "default", URL: "https://hooks.example.com/x",
		Enabled: true, CreatedAt: now, Secrets: []onboarding.SigningSecret{{Key: []byte("k"), CreatedAt: now}}}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	app := backuptest.AppWithFile(blobID)
	app.Participants[0].LinkSlug = "app-" + strings.ReplaceAll(uuid.NewString(), "-", "")
	log := []onboarding.Activity{
		{At: now, Action: "application.created", Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "c1", Name: "ci"}},
		{At: now, Action: "invite.sent", Actor: onboarding.Actor{Type: onboarding.ActorSystem}},
	}
	evID := "evt_" + ulid.Make().String()
	if err := s.CreateApplication(ctx, app, onboarding.Changes{
		Log:        log,
		Idempotent: &onboarding.IdempotentOutcome{ClientID: "c1", Key: "k-1", CreatedAt: now, ID: app.ID},
		Events: []*onboarding.Event{{ID: evID, Type: onboarding.EventApplicationCreated, OrgID: "default", Subject: app.ID, At: now,
			Body: json.RawMessage(fmt.Sprintf(`{"id":%q,"type":"application.created","data":{}}`, evID))}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusSubmitted
		return onboarding.Changes{Log: []onboarding.Activity{{At: now, Action: "application.submitted", Actor: onboarding.Actor{Type: onboarding.ActorApplicant}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	rfi := &onboarding.RFIRequest{ID: uuid.NewString(), Seq: ulid.Make(), OrgID: "default", Status: onboarding.RFIActive,
		CompanyName: "Held", Country: "GB", Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: "rfi-slug", Role: onboarding.RolePrimary}},
		Documents: map[string]onboarding.Document{}, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(14 * 24 * time.Hour)}
	if err := s.CreateRFIRequest(ctx, rfi, onboarding.Changes{Log: log[:1]}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, &onboarding.APIKey{ClientID: "c1", OrgID: "default", Name: "ci", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	fillWebhooks(t, s, ep, app.ID, now)
	return app.ID
}

// fillWebhooks has the event queued for ep attempted once (a delivery log
// line, the delivery due again), then queues a second event of subject
// behind it and a third of another subject that a worker holds leased.
// It also leases the expiry of an RFI request already due, and saves an
// answer for an Idempotency-Key when s keeps those.
func fillWebhooks(t *testing.T, s onboarding.Store, ep *onboarding.Endpoint, subject string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	claimed, _, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w1", Now: now.Add(time.Second), Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDeliveries: %d, %v; want the one delivery", len(claimed), err)
	}
	d := claimed[0]
	if lost, err := s.FinishDeliveries(ctx, []onboarding.FinishedDelivery{{Delivery: d, Result: onboarding.DeliveryResult{
		RetryAt: now.Add(time.Hour), Attempt: onboarding.DeliveryAttempt{
			EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: d.Event.OrgID, Attempt: 1,
			At: now.Add(time.Second), StatusCode: 503, Error: "HTTP 503", Response: "busy",
		}}}}); err != nil || lost[0] {
		t.Fatalf("FinishDeliveries: lost %v, %v", lost, err)
	}
	for _, subj := range []string{subject, uuid.NewString()} {
		id := "evt_" + ulid.Make().String()
		if err := s.AddEvent(ctx, &onboarding.Event{ID: id, Type: onboarding.EventApplicationSubmitted, OrgID: "default", Subject: subj,
			At: now.Add(2 * time.Second), Body: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))}); err != nil {
			t.Fatal(err)
		}
	}
	if leased, _, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w2", Now: now.Add(3 * time.Second), Lease: time.Minute, Limit: 10}); err != nil || len(leased) != 1 {
		t.Fatalf("ClaimDeliveries: %d, %v; want the head of the new subject", len(leased), err)
	}
	due := &onboarding.RFIRequest{ID: uuid.NewString(), Seq: ulid.Make(), OrgID: "default", Status: onboarding.RFIActive,
		CompanyName: "Due", Country: "GB", Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: "rfi-due", Role: onboarding.RolePrimary}},
		Documents: map[string]onboarding.Document{}, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(-time.Hour)}
	if err := s.CreateRFIRequest(ctx, due, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	if ids, _, err := s.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: "expirer", Now: now, Lease: time.Minute, Limit: 10}); err != nil || len(ids) != 1 {
		t.Fatalf("ClaimRFIExpiries: %v, %v; want the request due", ids, err)
	}
	if rs, ok := s.(interface {
		SaveResponse(clientID, key string, response json.RawMessage, ttl time.Duration, done func(error))
	}); ok {
		saved := make(chan error, 1)
		rs.SaveResponse("c1", "k-2", json.RawMessage(`{"status":201,"body":{}}`), time.Hour, func(err error) { saved <- err })
		if err := <-saved; err != nil {
			t.Fatal(err)
		}
	}
}

// dumpOf returns the lines r dumps.
func dumpOf(t *testing.T, r Records) []*dump.Line {
	t.Helper()
	var lines []*dump.Line
	if err := r.Dump(context.Background(), func(l *dump.Line) error {
		lines = append(lines, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return lines
}

// wantChained checks that the activity log of id chains from its start to
// its head.
func wantChained(t *testing.T, s onboarding.ActivityStore, id string) {
	t.Helper()
	err := s.ActivityLog(context.Background(), id, func(head *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
		prev, n := onboarding.ActivityChainStart(id), 0
		var last ulid.ULID
		for e, err := range entries {
			if err != nil {
				return err
			}
			if e.Prev != prev || onboarding.ActivityHash(prev, e) != e.Hash {
				return fmt.Errorf("entry %s does not chain", e.Seq)
			}
			prev, last = e.Hash, e.Seq
			n++
		}
		if n == 0 || head == nil || head.Seq != last || head.Hash != prev {
			return fmt.Errorf("%d entries, head %+v: the head is not the last entry", n, head)
		}
		return nil
	})
	if err != nil {
		t.Errorf("activity log of %s: %v", id, err)
	}
}

// restoreInto restores archive into a new data directory, returning it
// and the store opened on it (closed at the end of the test).
func restoreInto(t *testing.T, archive []byte) (string, *storage.Store, *Manifest, int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "restored")
	m, n, err := Restore(bytes.NewReader(archive), dir)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	s, err := storage.Open(filepath.Join(dir, "badger"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return dir, s, m, n
}

// TestBackupRestoreRoundTrip backs up a data directory holding records of
// most kinds, a file and a secret, and restores the archive into a new
// directory: it dumps the same records, its activity logs chain, and its
// file and secret are the original's.
func TestBackupRestoreRoundTrip(t *testing.T) {
	a, data := openTestApp(t)
	blobID, _, err := a.files.Put(context.Background(), strings.NewReader("%PDF-1.4 held\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	appID := fillStore(t, a.store, blobID)
	writeSecret(t, data, "session.key", "c2Vzc2lvbg==\n")
	var buf bytes.Buffer
	if err := a.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	want := dumpOf(t, a.store)

	dir, restored, m, n := restoreInto(t, buf.Bytes())
	if m.FormatVersion != 2 || n != len(want) || m.Counts.Records != len(want) || m.Counts.Kinds[dump.Activity] != 4 || m.Counts.Kinds[dump.Delivery] != 3 {
		t.Errorf("format version %d, %d records restored, manifest counts %+v; want version 2 and %d records, 4 of activity, 3 deliveries",
			m.FormatVersion, n, m.Counts, len(want))
	}
	if diff := cmp.Diff(want, dumpOf(t, restored)); diff != "" {
		t.Errorf("restored records (-original +restored):\n%s", diff)
	}
	wantChained(t, restored, appID)
	for _, p := range []string{blobPath(blobID), "secrets/session.key"} {
		orig, err := os.ReadFile(filepath.Join(data, p))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || !bytes.Equal(orig, got) {
			t.Errorf("restored %s: %q, %v; want %q", p, got, err, orig)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, recordsName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left in the restored directory: %v", recordsName, err)
	}
}

// writeSecret writes a generated secret's file into the data directory.
func writeSecret(t *testing.T, data, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(data, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "secrets", name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// versionOneArchive is the archive onboard wrote before format version 2
// of a's data directory, made as it made them: the store's Badger-stream
// snapshot as records.badger, then the secret and the blob.
func versionOneArchive(t *testing.T, a testBackup, secret, blobID string) []byte {
	t.Helper()
	var records bytes.Buffer
	snap, err := a.store.Backup(context.Background(), &records)
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.files.Open(blobID)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{
		Format: archiveFormat, FormatVersion: 1, OnboardVersion: "v1.0.0", CreatedAt: time.Now().UTC(),
		Counts: Counts{Keys: snap.Keys, RecordBytes: int64(records.Len()), Blobs: 1, BlobBytes: int64(len(blob)), Secrets: 1},
		Files: []File{sumOf(badgerRecordsName, records.String()), sumOf("secrets/session.key", secret),
			sumOf(blobPath(blobID), string(blob))},
		MissingBlobs: []string{},
	}
	return backuptest.TarGz(t, manifestEntry(t, m), backuptest.Entry{Name: badgerRecordsName, Content: records.String()},
		backuptest.Entry{Name: "secrets/session.key", Content: secret}, backuptest.Entry{Name: blobPath(blobID), Content: string(blob)})
}

// TestRestoreVersionOne restores an archive of format version 1 (the
// Badger stream) into a new data directory: the records, the file and
// the secret are the original's.
func TestRestoreVersionOne(t *testing.T) {
	a, _ := openTestApp(t)
	blobID, _, err := a.files.Put(context.Background(), strings.NewReader("%PDF-1.4 old\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	appID := fillStore(t, a.store, blobID)
	archive := versionOneArchive(t, a, "c2Vzc2lvbg==\n", blobID)
	want := dumpOf(t, a.store)

	dir, restored, m, n := restoreInto(t, archive)
	if m.FormatVersion != 1 || n != m.Counts.Keys {
		t.Errorf("format version %d, %d keys restored; want version 1 and the manifest's %d", m.FormatVersion, n, m.Counts.Keys)
	}
	if diff := cmp.Diff(want, dumpOf(t, restored)); diff != "" {
		t.Errorf("restored records (-original +restored):\n%s", diff)
	}
	wantChained(t, restored, appID)
	if got, err := os.ReadFile(filepath.Join(dir, blobPath(blobID))); err != nil || string(got) != "%PDF-1.4 old\n" {
		t.Errorf("restored blob: %q, %v", got, err)
	}
}

// recordsArchive is a version 2 archive whose records are lines, then the
// extra entries, with a manifest that matches the records (as a forger
// would make it) except where change alters it.
func recordsArchive(t *testing.T, lines string, change func(*Manifest), extra ...backuptest.Entry) []byte {
	t.Helper()
	m := &Manifest{
		Format: archiveFormat, FormatVersion: archiveVersion, OnboardVersion: "(devel)", CreatedAt: time.Now().UTC(),
		Counts:       Counts{Kinds: map[string]int{}, RecordBytes: int64(len(lines))},
		Files:        []File{sumOf(recordsName, lines)},
		MissingBlobs: []string{},
	}
	for _, l := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
		var line dump.Line
		if json.Unmarshal([]byte(l), &line) == nil && dump.Known(line.Kind) {
			m.Counts.Kinds[line.Kind]++
			m.Counts.Records++
		}
	}
	if change != nil {
		change(m)
	}
	return backuptest.TarGz(t, append([]backuptest.Entry{manifestEntry(t, m), {Name: recordsName, Content: lines}}, extra...)...)
}

// TestRestoreRefusesBadRecords restores archives whose records.ndjson
// matches its checksum but holds what no store dumps: each is refused
// with its own message, and nothing is restored.
func TestRestoreRefusesBadRecords(t *testing.T) {
	a, _ := openTestApp(t)
	blobID := uuid.NewString()
	fillStore(t, a.store, blobID)
	var buf bytes.Buffer
	rw := newRecordsWriter(&buf)
	for _, l := range dumpOf(t, a.store) {
		if err := rw.write(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.flush(); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	firstLine := good[:strings.IndexByte(good, '\n')+1]
	sum := sha256.Sum256([]byte("x"))
	tests := []struct {
		name    string
		archive []byte
		want    string
	}{
		{"unknown kind", recordsArchive(t, firstLine+`{"kind":"invoice","record":"AQ=="}`+"\n", nil),
			`not an onboard backup (its records' line 2: unknown kind "invoice")`},
		{"not JSON", recordsArchive(t, "hello\n", nil),
			"not an onboard backup (its records' line 1: not a JSON object: invalid character 'h' looking for beginning of value)"},
		{"member missing", recordsArchive(t, `{"kind":"activity","record":"AQ==","subject":"x"}`+"\n", nil),
			"not an onboard backup (its records' line 1: activity without seq)"},
		{"record undecodable", recordsArchive(t, `{"kind":"api_key","record":"AXs="}`+"\n", nil),
			"not an onboard backup (its records' line 1: decode record: unexpected end of JSON input)"},
		{"row repeated", recordsArchive(t, firstLine+firstLine, nil),
			"not an onboard backup (its records' line 2: create application "},
		{"fewer lines than counted", recordsArchive(t, firstLine, func(m *Manifest) {
			m.Counts.Kinds[dump.Application], m.Counts.Kinds[dump.Activity] = 0, 1
		}), "damaged: its records hold 1 lines of kind application; its manifest says 0"},
		{"records replaced", recordsArchive(t, good, func(m *Manifest) { m.Files[0].SHA256 = hex.EncodeToString(sum[:]) }),
			"damaged: records.ndjson does not match its SHA-256 checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			_, _, err := Restore(bytes.NewReader(tt.archive), filepath.Join(parent, "restored"))
			var ae ArchiveError
			if !errors.As(err, &ae) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Restore: %v, want the ArchiveError %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left beside the target: %v", entries)
			}
		})
	}
	if _, _, err := Restore(bytes.NewReader(recordsArchive(t, good, nil)), filepath.Join(t.TempDir(), "restored")); err != nil {
		t.Errorf("the records the cases start from: %v", err)
	}
}
