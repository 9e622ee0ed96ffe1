package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// rfiEntry is a request's place in the expiry queue.
type rfiEntry struct {
	At    time.Time // when it is due
	Owner string    // empty while unclaimed
}

// rfiQueue returns the expiry queue by request id, after checking its
// invariants against the records: every active request has exactly one
// row; an unclaimed row is due at its request's ExpiresAt, a claimed one
// at its lease's end; a request that is not active has none; nothing
// else is queued. It reads both tables in one snapshot, so that writes
// beside it never show it a half-made change.
func rfiQueue(t *testing.T, s *Store) map[string]rfiEntry {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	records := map[string]onboarding.RFIRequest{}
	rs, err := tx.Query(ctx, `SELECT record FROM rfi_requests`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var r onboarding.RFIRequest
		if err := record.Decode(rs.RawValues()[0], &r); err != nil {
			t.Fatal(err)
		}
		records[r.ID] = r
	}
	rs.Close()
	out := map[string]rfiEntry{}
	rs, err = tx.Query(ctx, `SELECT rfi_id::text, expires_ns, coalesce(lease_owner, ''), lease_until_ns, due_ns FROM rfi_expiry_queue`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var id, owner string
		var expires, due int64
		var until *int64
		if err := rs.Scan(&id, &expires, &owner, &until, &due); err != nil {
			t.Fatal(err)
		}
		r, ok := records[id]
		switch {
		case !ok:
			t.Errorf("expiry row of %s names no request", id)
		case r.Status != onboarding.RFIActive:
			t.Errorf("%s request %s is in the expiry queue", r.Status, r.CompanyName)
		case expires != r.ExpiresAt.UnixNano():
			t.Errorf("request %s is queued expiring at %d, expires at %v", r.CompanyName, expires, r.ExpiresAt)
		case (owner == "") != (until == nil):
			t.Errorf("request %s: lease owner %q until %v", r.CompanyName, owner, until)
		case until == nil && due != expires, until != nil && due != *until:
			t.Errorf("request %s is due at %d, expires at %d, leased until %v", r.CompanyName, due, expires, until)
		}
		out[id] = rfiEntry{At: time.Unix(0, due).UTC(), Owner: owner}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	for id, r := range records {
		if _, ok := out[id]; r.Status == onboarding.RFIActive && !ok {
			t.Errorf("active request %s is not in the expiry queue", r.CompanyName)
		}
	}
	return out
}

// TestRFIRows: a request's rows follow its record (its status, blobs and
// slugs), and the creates the store refuses are errDuplicate and write
// nothing. (The reads and the refusals as seen through the Store are the
// suite's.)
func TestRFIRows(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionRFICreated, t0)}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	done := t0.Add(time.Hour)
	if _, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.CompletedAt, x.UpdatedAt = onboarding.RFICompleted, &done, done
		x.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {FileID: "f1", FileName: "coi.pdf", FileType: "application/pdf",
			UploadedAt: done, Status: onboarding.DocumentAccepted, BlobID: "b1", Size: 42}}
		x.Participants[0].LinkSlug, x.Participants[0].Verified = "rfi-new-slug", true
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	wantRows := []string{line(uuid.MustParse(r.ID).String(), "acme", "completed", "b1"), line("rfi-new-slug", uuid.MustParse(r.ID).String())}
	gotRows := append(rows(t, s, `SELECT id::text, org_id, status, array_to_string(blob_ids, ',') FROM rfi_requests`),
		rows(t, s, `SELECT slug, rfi_id::text FROM rfi_slugs`)...)
	if diff := cmp.Diff(wantRows, gotRows); diff != "" {
		t.Errorf("rows after update (-want +got):\n%s", diff)
	}
	if q := rfiQueue(t, s); len(q) != 0 {
		t.Errorf("expiry queue after completion = %v, want empty", q)
	}

	before := everything(t, s)
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateRFIRequest(duplicate) = %v, want errDuplicate", err)
	}
	taken := fixture.RFI("acme", 9, onboarding.RFIActive)
	taken.Participants[0].LinkSlug = "rfi-new-slug"
	if err := s.CreateRFIRequest(ctx, taken, onboarding.Changes{Log: log}); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateRFIRequest(a slug taken) = %v, want errDuplicate", err)
	}
	if err := s.CreateRFIRequest(ctx, &onboarding.RFIRequest{ID: "nope"}, onboarding.Changes{}); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateRFIRequest(bad id) = %v, want an error", err)
	}
	if diff := cmp.Diff(before, everything(t, s)); diff != "" {
		t.Errorf("refused creates wrote (-before +after):\n%s", diff)
	}
}

// TestRFIUpdateRefusesImmutableChanges: a change of id, organization or
// sequence, or a failing change, fails and writes nothing.
func TestRFIUpdateRefusesImmutableChanges(t *testing.T) {
	s, _ := openTest(t, Options{})
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	before := everything(t, s)
	for _, u := range fixture.RefusedRFIUpdates() {
		err := fixture.UpdateRFIWith(s, r.ID, u, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionRFIExpired, t0)}})
		if u.Err == nil && !fixture.IsImmutable(err) || u.Err != nil && err != u.Err {
			t.Errorf("%s: %v", u.Name, err)
		}
	}
	if diff := cmp.Diff(before, everything(t, s)); diff != "" {
		t.Errorf("refused updates wrote (-before +after):\n%s", diff)
	}
}

// TestRFIClaimDuringAnUpdate: a claim that runs while an update of the
// same request is in flight (between its read and its commit) and the
// update do not both win: the request the update expires leaves the
// queue, whatever the claim did.
func TestRFIClaimDuringAnUpdate(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t, Options{})
	other := openOn(t, url, Options{})
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	attempts := 0
	var claimed []string
	if _, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		attempts++
		if attempts == 1 {
			var err error
			if claimed, _, err = other.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: "w1", Now: r.ExpiresAt, Lease: time.Minute, Limit: 10}); err != nil {
				return onboarding.Changes{}, err
			}
		}
		x.Status = onboarding.RFIExpired
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal([]string{r.ID}, claimed) {
		t.Errorf("claimed %v, want the request (the update had not yet written its row)", claimed)
	}
	if q := rfiQueue(t, s); len(q) != 0 {
		t.Errorf("queue = %v, want empty", q)
	}
	// An update whose queue write is in flight hides the request from
	// claims until it commits.
	r2 := fixture.RFI("acme", 2, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r2)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE rfi_expiry_queue SET expires_ns = expires_ns WHERE rfi_id = $1`, r2.ID); err != nil {
		t.Fatal(err)
	}
	if ids, next := fixture.ClaimRFIs(t, other, "w2", r2.ExpiresAt, 10); len(ids) != 0 || !next.Equal(r2.ExpiresAt) {
		t.Errorf("claim while the row is locked = %v, next %v; want none, its due time", ids, next)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, _ := fixture.ClaimRFIs(t, other, "w2", r2.ExpiresAt, 10); !cmp.Equal([]string{r2.ID}, ids) {
		t.Errorf("claim after the commit = %v, want the request", ids)
	}
}
