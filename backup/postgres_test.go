package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/blobs"
	"onboard/blobs/bucket"
	"onboard/blobs/bucket/buckettest"
	"onboard/onboarding"
	"onboard/storage/dump"
	"onboard/storage/postgres"
	"onboard/storage/postgres/pgtest"
)

// apiView is what the API and the CLI read of a store's records, through
// every index: the applications and RFI requests listed and found by
// slug, their activity, the keys, saved answers, endpoints, events and
// the delivery log. Two stores that answer alike have equal views.
type apiView struct {
	Applications []*onboarding.Application
	BySlug       map[string]string
	RFIRequests  []*onboarding.RFIRequest
	Activity     map[string][]onboarding.LoggedActivity
	Pending      []string
	Keys         []*onboarding.APIKey
	Saved        map[string]string
	Endpoints    []*onboarding.Endpoint
	Events       []*onboarding.Event
	Attempts     []onboarding.DeliveryAttempt
	Queued       int
}

// viewStore is a store whose apiView viewOf reads: either backend.
type viewStore interface {
	onboarding.Store
	SavedResponse(ctx context.Context, clientID, key string) (json.RawMessage, error)
}

// viewOf reads s's apiView.
func viewOf(t *testing.T, s viewStore) apiView {
	t.Helper()
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var v apiView
	var err error
	v.Applications, _, err = s.ListApplications(ctx, onboarding.ListQuery{OrgID: "default", Limit: 100})
	check(err)
	v.RFIRequests, _, err = s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "default", Limit: 100})
	check(err)
	v.BySlug, v.Activity, v.Saved = map[string]string{}, map[string][]onboarding.LoggedActivity{}, map[string]string{}
	for _, a := range v.Applications {
		for _, p := range a.Participants {
			got, err := s.ApplicationBySlug(ctx, p.LinkSlug)
			check(err)
			v.BySlug[p.LinkSlug] = got.ID
		}
		v.Activity[a.ID], _, err = s.ActivityAfter(ctx, a.ID, ulid.ULID{}, 100)
		check(err)
	}
	for _, r := range v.RFIRequests {
		for _, p := range r.Participants {
			got, err := s.RFIRequestBySlug(ctx, p.LinkSlug)
			check(err)
			v.BySlug[p.LinkSlug] = got.ID
		}
		v.Activity[r.ID], _, err = s.ActivityAfter(ctx, r.ID, ulid.ULID{}, 100)
		check(err)
	}
	v.Pending, err = s.PendingRegistryDocuments(ctx)
	check(err)
	v.Keys, err = s.APIKeys(ctx, "")
	check(err)
	for _, k := range []string{"k-1", "k-2"} {
		b, err := s.SavedResponse(ctx, "c1", k)
		check(err)
		v.Saved[k] = string(b)
	}
	v.Endpoints, err = s.Endpoints(ctx, "")
	check(err)
	v.Events, _, err = s.Events(ctx, onboarding.EventQuery{OrgID: "default", Limit: 100})
	check(err)
	v.Attempts, err = s.DeliveryAttempts(ctx, onboarding.AttemptQuery{})
	check(err)
	v.Queued, err = s.QueuedDeliveries(ctx)
	check(err)
	return v
}

// comparable is lines as another backend keeps them: times to the
// microsecond (PostgreSQL's), and a delivery log line's Seq, which only
// orders the log, left out (PostgreSQL orders by time and its own id).
func comparable(lines []*dump.Line) []dump.Line {
	out := make([]dump.Line, len(lines))
	for i, l := range lines {
		c := *l
		c.NextAt, c.LeaseUntil = c.NextAt.Truncate(time.Microsecond), c.LeaseUntil.Truncate(time.Microsecond)
		if c.Kind == dump.DeliveryAttempt {
			c.Seq = ulid.ULID{}
		}
		out[i] = c
	}
	return out
}

// sharedFiles is a blob store of the shared backend for the tests: a
// local directory, or a prefix of its own in the test bucket.
type sharedFiles interface {
	blobs.Guarded
	BlobWriter
}

// TestMoveToPostgresAndBack backs up an embedded data directory holding a
// row of every kind, restores the archive into PostgreSQL (records and
// secrets in the database, files in a local blob store or in S3), backs
// that up, and restores the second archive into a new data directory:
// PostgreSQL and the final directory hold the original's records byte for
// byte, answer every read as it does, their activity logs chain, and the
// file and the secret come back.
func TestMoveToPostgresAndBack(t *testing.T) {
	for _, files := range []string{"local", "s3"} {
		t.Run(files, func(t *testing.T) {
			var shared sharedFiles
			if files == "s3" {
				s, err := bucket.New(buckettest.Options(t))
				if err != nil {
					t.Fatal(err)
				}
				shared = s
			} else {
				dir := filepath.Join(t.TempDir(), "blobs")
				s, err := blobs.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				shared = localShared{s, LocalFiles(dir)}
			}
			moveToPostgresAndBack(t, shared)
		})
	}
}

// localShared is a local blob store written by LocalFiles.
type localShared struct {
	*blobs.Store
	LocalFiles
}

func moveToPostgresAndBack(t *testing.T, shared sharedFiles) {
	ctx := context.Background()
	a, data := openTestApp(t)
	blobID, _, err := a.files.Put(ctx, strings.NewReader("%PDF-1.4 moving\n"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	appID := fillStore(t, a.store, blobID)
	writeSecret(t, data, "session.key", "c2Vzc2lvbg==\n")
	var first bytes.Buffer
	if err := a.Backup(ctx, &first); err != nil {
		t.Fatal(err)
	}
	want := dumpOf(t, a.store)

	pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, n, err := RestoreTo(ctx, &first, t.TempDir(), Target{Records: pg, Files: shared, Secrets: pg}); err != nil || n != len(want) {
		t.Fatalf("RestoreTo PostgreSQL: %d records, %v; want %d", n, err, len(want))
	}
	if diff := cmp.Diff(comparable(want), comparable(dumpOf(t, pg))); diff != "" {
		t.Errorf("PostgreSQL's records (-original +PostgreSQL):\n%s", diff)
	}
	if diff := cmp.Diff(viewOf(t, a.store), viewOf(t, pg)); diff != "" {
		t.Errorf("PostgreSQL's answers (-original +PostgreSQL):\n%s", diff)
	}
	wantChained(t, pg, appID)

	var second bytes.Buffer
	if err := NewShared(pg, blobs.NewGuard(shared), pg, "(devel)", slog.New(slog.DiscardHandler)).Backup(ctx, &second); err != nil {
		t.Fatalf("backup of PostgreSQL: %v", err)
	}
	dir, back, m, n := restoreInto(t, second.Bytes())
	if n != len(want) || m.Counts.Secrets != 1 || m.Counts.Blobs != 1 {
		t.Errorf("restored %d records, counts %+v; want %d records, 1 secret, 1 file", n, m.Counts, len(want))
	}
	if diff := cmp.Diff(comparable(want), comparable(dumpOf(t, back))); diff != "" {
		t.Errorf("records back on Badger (-original +restored):\n%s", diff)
	}
	if diff := cmp.Diff(viewOf(t, a.store), viewOf(t, back)); diff != "" {
		t.Errorf("answers back on Badger (-original +restored):\n%s", diff)
	}
	wantChained(t, back, appID)
	for _, p := range []string{blobPath(blobID), "secrets/session.key"} {
		orig, err := os.ReadFile(filepath.Join(data, p))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || !bytes.Equal(orig, got) {
			t.Errorf("restored %s: %q, %v; want %q", p, got, err, orig)
		}
	}
}

// TestRestoreToPostgresRefusals restores into PostgreSQL what it must
// refuse: records a line of which the database cannot take (a row twice,
// a log head of no subject), which leave it empty, then anything into a
// database that holds records.
func TestRestoreToPostgresRefusals(t *testing.T) {
	ctx := context.Background()
	a, _ := openTestApp(t)
	fillStore(t, a.store, "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90")
	var buf bytes.Buffer
	if err := a.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	lines := dumpOf(t, a.store)
	encode := func(ls ...*dump.Line) string {
		var b bytes.Buffer
		rw := newRecordsWriter(&b)
		for _, l := range ls {
			if err := rw.write(l); err != nil {
				t.Fatal(err)
			}
		}
		if err := rw.flush(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	app := lines[0]
	orphanHead := &dump.Line{Kind: dump.ActivityHead, Subject: "6f1c2a9e-8d4b-4c53-9a57-0c1d2e3f4a5b", Seq: ulid.Make(), Hash: strings.Repeat("ab", 32)}

	pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	target := Target{Records: pg, Files: LocalFiles(filepath.Join(t.TempDir(), "blobs")), Secrets: pg}
	tests := []struct {
		name    string
		archive []byte
		want    string
	}{
		{"row twice", recordsArchive(t, encode(app, app), nil),
			`not an onboard backup (its records' line 2: duplicate key value violates unique constraint "applications_pkey"`},
		{"head of no subject", recordsArchive(t, encode(app, orphanHead), nil),
			"not an onboard backup (its records' line 2: the head of the log of 6f1c2a9e-8d4b-4c53-9a57-0c1d2e3f4a5b, which is no application or RFI request before it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := RestoreTo(ctx, bytes.NewReader(tt.archive), t.TempDir(), target)
			var ae ArchiveError
			if !errors.As(err, &ae) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("RestoreTo: %v, want the ArchiveError %q", err, tt.want)
			}
			if empty, err := pg.Empty(ctx); err != nil || !empty {
				t.Errorf("after the refusal the database is empty: %v, %v; want true", empty, err)
			}
		})
	}
	if _, _, err := RestoreTo(ctx, bytes.NewReader(good), t.TempDir(), target); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RestoreTo(ctx, bytes.NewReader(good), t.TempDir(), target); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("RestoreTo a database with records: %v, want %v", err, ErrNotEmpty)
	}
}
