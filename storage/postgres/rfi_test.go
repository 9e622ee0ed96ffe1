package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
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

func TestRFIRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	r := newRFI(t, "acme", 1, onboarding.RFIActive)
	log := []onboarding.Activity{{At: t0, Action: onboarding.ActionRFICreated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1", Name: "ci"}, Detail: "agent x"}}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() (*onboarding.RFIRequest, error){
		"RFIRequest":       func() (*onboarding.RFIRequest, error) { return s.RFIRequest(ctx, r.ID) },
		"RFIRequestBySlug": func() (*onboarding.RFIRequest, error) { return s.RFIRequestBySlug(ctx, r.Participants[0].LinkSlug) },
	} {
		got, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
		}
	}

	done := t0.Add(time.Hour)
	want := *r
	want.Status, want.CompletedAt, want.UpdatedAt = onboarding.RFICompleted, &done, done
	want.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {FileID: "f1", FileName: "coi.pdf", FileType: "application/pdf",
		UploadedAt: done, Status: onboarding.DocumentAccepted, BlobID: "b1", Size: 42}}
	want.Participants = []onboarding.Participant{r.Participants[0]}
	want.Participants[0].LinkSlug, want.Participants[0].Verified = "rfi-new-slug", true
	updated, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.CompletedAt, x.UpdatedAt, x.Documents = want.Status, want.CompletedAt, want.UpdatedAt, want.Documents
		x.Participants[0].LinkSlug, x.Participants[0].Verified = "rfi-new-slug", true
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, updated); diff != "" {
		t.Errorf("UpdateRFIRequest result (-want +got):\n%s", diff)
	}
	for name, read := range map[string]func() (*onboarding.RFIRequest, error){
		"RFIRequest":       func() (*onboarding.RFIRequest, error) { return s.RFIRequest(ctx, r.ID) },
		"RFIRequestBySlug": func() (*onboarding.RFIRequest, error) { return s.RFIRequestBySlug(ctx, "rfi-new-slug") },
	} {
		got, err := read()
		if err != nil {
			t.Fatalf("%s after update: %v", name, err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("%s after update (-want +got):\n%s", name, diff)
		}
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
	if logged, err := s.Activity(ctx, r.ID); err != nil || !cmp.Equal(log, logged) {
		t.Errorf("Activity = %v, %v; want %v", logged, err, log)
	}

	before := everything(t, s)
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateRFIRequest(duplicate) = %v, want errDuplicate", err)
	}
	taken := newRFI(t, "acme", 9, onboarding.RFIActive)
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

	// An application and an RFI request with the same slug are not each other's.
	app := newApp(t, "acme", 1, onboarding.StatusCreated)
	app.Participants[0].LinkSlug = "shared-slug"
	if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	other := newRFI(t, "acme", 2, onboarding.RFIActive)
	other.Participants[0].LinkSlug = "shared-slug"
	createRFIs(t, s, other)
	if got, err := s.RFIRequestBySlug(ctx, "shared-slug"); err != nil || got.ID != other.ID {
		t.Errorf("RFIRequestBySlug(shared) = %+v, %v; want %s", got, err, other.ID)
	}
	if got, err := s.ApplicationBySlug(ctx, "shared-slug"); err != nil || got.ID != app.ID {
		t.Errorf("ApplicationBySlug(shared) = %+v, %v; want %s", got, err, app.ID)
	}

	for name, call := range map[string]func() error{
		"RFIRequest(unknown)":              func() error { _, err := s.RFIRequest(ctx, uuid.NewString()); return err },
		"RFIRequest(malformed)":            func() error { _, err := s.RFIRequest(ctx, "not-a-uuid"); return err },
		"RFIRequest(an application's id)":  func() error { _, err := s.RFIRequest(ctx, app.ID); return err },
		"RFIRequestBySlug(unknown)":        func() error { _, err := s.RFIRequestBySlug(ctx, "nope"); return err },
		"RFIRequestBySlug(old slug)":       func() error { _, err := s.RFIRequestBySlug(ctx, r.Participants[0].LinkSlug); return err },
		"RFIRequestBySlug(empty)":          func() error { _, err := s.RFIRequestBySlug(ctx, ""); return err },
		"RFIRequestBySlug(not UTF-8)":      func() error { _, err := s.RFIRequestBySlug(ctx, "\xfe"); return err },
		"Application(an RFI request's id)": func() error { _, err := s.Application(ctx, r.ID); return err },
		"UpdateRFIRequest(unknown)": func() error {
			_, err := s.UpdateRFIRequest(ctx, uuid.NewString(), func(*onboarding.RFIRequest) (onboarding.Changes, error) {
				t.Error("change called for an unknown request")
				return onboarding.Changes{}, nil
			})
			return err
		},
		"UpdateRFIRequest(malformed)": func() error {
			_, err := s.UpdateRFIRequest(ctx, "not-a-uuid", nil)
			return err
		},
	} {
		if err := call(); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("%s = %v, want ErrNotFound", name, err)
		}
	}
}

// TestRFIUpdateRefusesImmutableChanges: a change of id, organization or
// sequence, or a failing change, fails and writes nothing.
func TestRFIUpdateRefusesImmutableChanges(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	r := newRFI(t, "acme", 1, onboarding.RFIActive)
	createRFIs(t, s, r)
	before := everything(t, s)
	boom := errors.New("boom")
	for name, change := range map[string]func(*onboarding.RFIRequest) error{
		"id":           func(x *onboarding.RFIRequest) error { x.ID = uuid.NewString(); return nil },
		"organization": func(x *onboarding.RFIRequest) error { x.OrgID = "acme2"; return nil },
		"sequence":     func(x *onboarding.RFIRequest) error { x.Seq = ulid.Make(); return nil },
		"failing":      func(x *onboarding.RFIRequest) error { return boom },
	} {
		_, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
			x.Status = onboarding.RFIExpired
			err := change(x)
			return onboarding.Changes{Log: []onboarding.Activity{act(onboarding.ActionRFIExpired, t0)}}, err
		})
		if name == "failing" && err != boom || name != "failing" && !immutable(err) {
			t.Errorf("changing the %s: %v", name, err)
		}
	}
	if diff := cmp.Diff(before, everything(t, s)); diff != "" {
		t.Errorf("refused updates wrote (-before +after):\n%s", diff)
	}
}

func rfiIDs(rs []*onboarding.RFIRequest) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestListRFIRequests(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	var acme []*onboarding.RFIRequest // newest first
	for i := 0; i < 7; i++ {
		status := onboarding.RFIActive
		if i%3 == 0 {
			status = onboarding.RFICompleted
		}
		r := newRFI(t, "acme", i, status)
		acme = append([]*onboarding.RFIRequest{r}, acme...)
		createRFIs(t, s, r, newRFI(t, "acme2", i, status))
		storedApp(t, s, "acme", i, onboarding.StatusSent)
	}
	of := func(status onboarding.RFIStatus) []string {
		var out []string
		for _, r := range acme {
			if status == "" || r.Status == status {
				out = append(out, r.ID)
			}
		}
		return out
	}
	walk := func(status onboarding.RFIStatus, limit int) []string {
		t.Helper()
		var walked []string
		var before ulid.ULID
		for n := 0; ; n++ {
			rs, more, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Status: status, Before: before, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			if more && len(rs) != limit || len(rs) > limit {
				t.Errorf("page %d of %q: %d requests, more=%v, limit %d", n, status, len(rs), more, limit)
			}
			walked = append(walked, rfiIDs(rs)...)
			if !more {
				return walked
			}
			before = rs[len(rs)-1].Seq
			if n > 10 {
				t.Fatal("pagination does not end")
			}
		}
	}
	check := func(stage string) {
		t.Helper()
		for _, tt := range []struct {
			status onboarding.RFIStatus
			limit  int
		}{
			{"", 100}, {"", 3}, {"", 7}, {"", 1},
			{onboarding.RFIActive, 100}, {onboarding.RFIActive, 2},
			{onboarding.RFICompleted, 100}, {onboarding.RFICompleted, 1},
			{onboarding.RFIExpired, 100}, {onboarding.RFIExpired, 1},
		} {
			if diff := cmp.Diff(of(tt.status), walk(tt.status, tt.limit)); diff != "" {
				t.Errorf("%s: status %q, pages of %d (-want +got):\n%s", stage, tt.status, tt.limit, diff)
			}
		}
	}
	check("created")
	for _, mv := range []struct {
		i  int
		to onboarding.RFIStatus
	}{{1, onboarding.RFIExpired}, {3, onboarding.RFIActive}, {6, onboarding.RFIExpired}, {0, onboarding.RFICompleted}} {
		acme[mv.i] = updateRFI(t, s, acme[mv.i].ID, func(r *onboarding.RFIRequest) { r.Status = mv.to })
	}
	check("after status moves")
	rfiQueue(t, s)
	rs, more, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Before: acme[2].Seq, Limit: 2})
	if err != nil || !more || !cmp.Equal(rfiIDs(acme[3:5]), rfiIDs(rs)) {
		t.Errorf("page before the third = %v, more=%v, %v", rfiIDs(rs), more, err)
	}
	if rs, more, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "nobody", Limit: 10}); err != nil || len(rs) != 0 || more {
		t.Errorf("unknown organization: %d, %v, %v", len(rs), more, err)
	}
}

// rfiClaim claims expiries for owner at at with a one-minute lease.
func rfiClaim(t *testing.T, s *Store, owner string, at time.Time, limit int) ([]string, time.Time) {
	t.Helper()
	ids, next, err := s.ClaimRFIExpiries(context.Background(), onboarding.Claim{Owner: owner, Now: at, Lease: time.Minute, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return ids, next
}

func sortedIDs(rs ...*onboarding.RFIRequest) []string {
	return slices.Sorted(slices.Values(rfiIDs(rs)))
}

func TestClaimRFIExpiries(t *testing.T) {
	s, _ := openTest(t, Options{})
	a, b, c := newRFI(t, "acme", 1, onboarding.RFIActive), newRFI(t, "acme", 2, onboarding.RFIActive), newRFI(t, "acme2", 3, onboarding.RFIActive)
	d, e := newRFI(t, "acme", 4, onboarding.RFICompleted), newRFI(t, "acme", 5, onboarding.RFIExpired)
	d.ExpiresAt, e.ExpiresAt = t0, t0 // the first due, were they queued
	// Nanoseconds: the queue orders and answers exact times.
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = t0.Add(time.Hour+1), t0.Add(2*time.Hour+2), t0.Add(3*time.Hour+3)
	createRFIs(t, s, a, b, c, d, e)
	want := map[string]rfiEntry{a.ID: {At: a.ExpiresAt}, b.ID: {At: b.ExpiresAt}, c.ID: {At: c.ExpiresAt}}
	if diff := cmp.Diff(want, rfiQueue(t, s)); diff != "" {
		t.Fatalf("queue after create (-want +got):\n%s", diff)
	}
	steps := []struct {
		name     string
		owner    string
		at       time.Time
		limit    int
		want     []string // in due order
		wantNext time.Time
		queue    map[string]rfiEntry // nil: unchanged
	}{
		{"nothing due", "w1", t0, 10, nil, a.ExpiresAt, nil},
		{"a nanosecond early", "w1", a.ExpiresAt.Add(-1), 10, nil, a.ExpiresAt, nil},
		{"a limit of none", "w1", b.ExpiresAt, 0, nil, a.ExpiresAt, nil},
		{"due at or before now, earliest first, up to the limit", "w1", b.ExpiresAt, 1, []string{a.ID}, b.ExpiresAt,
			map[string]rfiEntry{a.ID: {b.ExpiresAt.Add(time.Minute), "w1"}, b.ID: {At: b.ExpiresAt}, c.ID: {At: c.ExpiresAt}}},
		{"the rest due", "w1", b.ExpiresAt, 10, []string{b.ID}, b.ExpiresAt.Add(time.Minute),
			map[string]rfiEntry{a.ID: {b.ExpiresAt.Add(time.Minute), "w1"}, b.ID: {b.ExpiresAt.Add(time.Minute), "w1"}, c.ID: {At: c.ExpiresAt}}},
		{"leases hide their requests", "w2", b.ExpiresAt.Add(time.Minute - 1), 10, nil, b.ExpiresAt.Add(time.Minute), nil},
		{"a lapsed lease is due again", "w2", c.ExpiresAt.Add(-1), 10, []string{a.ID, b.ID}, c.ExpiresAt,
			map[string]rfiEntry{a.ID: {c.ExpiresAt.Add(time.Minute - 1), "w2"}, b.ID: {c.ExpiresAt.Add(time.Minute - 1), "w2"}, c.ID: {At: c.ExpiresAt}}},
	}
	for _, st := range steps {
		got, next := rfiClaim(t, s, st.owner, st.at, st.limit)
		if st.name == "a lapsed lease is due again" {
			slices.Sort(got) // due at the same time
			slices.Sort(st.want)
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s: claimed (-want +got):\n%s", st.name, diff)
		}
		if !next.Equal(st.wantNext) {
			t.Errorf("%s: next = %v, want %v", st.name, next, st.wantNext)
		}
		if st.queue != nil {
			want = st.queue
		}
		if diff := cmp.Diff(want, rfiQueue(t, s)); diff != "" {
			t.Errorf("%s: queue (-want +got):\n%s", st.name, diff)
		}
	}

	// An update that leaves ExpiresAt alone keeps a running lease, and an
	// unclaimed request at its ExpiresAt.
	updateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.CompanyName = "renamed" })
	updateRFI(t, s, c.ID, func(r *onboarding.RFIRequest) { r.CompanyName = "renamed" })
	if diff := cmp.Diff(want, rfiQueue(t, s)); diff != "" {
		t.Errorf("after unrelated updates (-want +got):\n%s", diff)
	}
	// One that moves ExpiresAt moves the row there, lease or none.
	later := c.ExpiresAt.Add(time.Hour)
	updateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.ExpiresAt = later })
	updateRFI(t, s, c.ID, func(r *onboarding.RFIRequest) { r.ExpiresAt = later.Add(time.Hour) })
	want = map[string]rfiEntry{a.ID: {At: later}, b.ID: want[b.ID], c.ID: {At: later.Add(time.Hour)}}
	if diff := cmp.Diff(want, rfiQueue(t, s)); diff != "" {
		t.Errorf("after moving ExpiresAt (-want +got):\n%s", diff)
	}
	// A request that leaves active leaves the queue, leased or not.
	updateRFI(t, s, b.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFIExpired })
	updateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFICompleted })
	want = map[string]rfiEntry{c.ID: {At: later.Add(time.Hour)}}
	if diff := cmp.Diff(want, rfiQueue(t, s)); diff != "" {
		t.Errorf("after b expired and a completed (-want +got):\n%s", diff)
	}
	if got, next := rfiClaim(t, s, "w3", later.Add(30*time.Minute), 10); len(got) != 0 || !next.Equal(later.Add(time.Hour)) {
		t.Errorf("claim after they left = %v, next %v; want none, %v", got, next, later.Add(time.Hour))
	}
	// A request back to active is queued again.
	updateRFI(t, s, d.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFIActive })
	want[d.ID] = rfiEntry{At: d.ExpiresAt}
	if diff := cmp.Diff(want, rfiQueue(t, s)); diff != "" {
		t.Errorf("after d went back to active (-want +got):\n%s", diff)
	}
	if got, next := rfiClaim(t, s, "w3", later.Add(time.Hour), 10); !cmp.Equal([]string{d.ID, c.ID}, got) || !next.IsZero() {
		t.Errorf("last claim = %v, next %v; want d then c, zero", got, next)
	}
	if got, next := rfiClaim(t, s, "w3", later.Add(time.Hour+time.Second), 10); len(got) != 0 || !next.Equal(later.Add(time.Hour+time.Minute)) {
		t.Errorf("claim while c and d are leased = %v, next %v; want none, the lease's end", got, next)
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
	r := newRFI(t, "acme", 1, onboarding.RFIActive)
	createRFIs(t, s, r)
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
	r2 := newRFI(t, "acme", 2, onboarding.RFIActive)
	createRFIs(t, s, r2)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE rfi_expiry_queue SET expires_ns = expires_ns WHERE rfi_id = $1`, r2.ID); err != nil {
		t.Fatal(err)
	}
	if ids, next := rfiClaim(t, other, "w2", r2.ExpiresAt, 10); len(ids) != 0 || !next.Equal(r2.ExpiresAt) {
		t.Errorf("claim while the row is locked = %v, next %v; want none, its due time", ids, next)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, _ := rfiClaim(t, other, "w2", r2.ExpiresAt, 10); !cmp.Equal([]string{r2.ID}, ids) {
		t.Errorf("claim after the commit = %v, want the request", ids)
	}
}

// TestConcurrentRFIClaimsDoNotOverlap runs claimers of two instances (two
// Stores on one database) against each other and against an updater
// completing requests: no request is claimed twice, every active one is
// claimed, and the queue is consistent after.
func TestConcurrentRFIClaimsDoNotOverlap(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t, Options{})
	instances := []*Store{s, openOn(t, url, Options{})}
	const n = 120
	var all []*onboarding.RFIRequest
	for i := 0; i < n; i++ {
		r := newRFI(t, "acme", i, onboarding.RFIActive)
		r.ExpiresAt = t0.Add(time.Duration(i%7) * time.Second)
		all = append(all, r)
	}
	createRFIs(t, s, all...)
	now := t0.Add(time.Hour)
	const workers = 4
	var mu sync.Mutex
	seen := map[string]string{} // request id → the claimer that got it
	var dups []string
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		store := instances[w%len(instances)]
		wg.Go(func() {
			owner := fmt.Sprintf("w%d", w)
			for {
				ids, next, err := store.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: owner, Now: now, Lease: time.Hour, Limit: 5})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					if prev, dup := seen[id]; dup {
						dups = append(dups, fmt.Sprintf("%s claimed by %s and %s", id, prev, owner))
					}
					seen[id] = owner
				}
				mu.Unlock()
				if len(ids) == 0 && next.After(now) || next.IsZero() {
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Go(func() {
		for i := 0; i < n; i += 3 {
			if _, err := instances[1].UpdateRFIRequest(ctx, all[i].ID, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
				r.Status = onboarding.RFICompleted
				return onboarding.Changes{}, nil
			}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	for _, d := range dups {
		t.Error(d)
	}
	queue := rfiQueue(t, s)
	for i, r := range all {
		_, claimed := seen[r.ID]
		e, queued := queue[r.ID]
		switch {
		case i%3 == 0 && queued:
			t.Errorf("completed request %d still queued: %+v", i, e)
		case i%3 != 0 && !claimed:
			t.Errorf("active request %d was never claimed", i)
		case i%3 != 0 && (!queued || e.Owner != seen[r.ID] || !e.At.Equal(now.Add(time.Hour))):
			t.Errorf("request %d claimed by %s is queued as %+v", i, seen[r.ID], e)
		}
	}
}

// TestRFILeaseOutlivesItsInstance: a lease taken by one instance, which
// then closes (dies), hides its requests from another until it lapses,
// and then they are the other's.
func TestRFILeaseOutlivesItsInstance(t *testing.T) {
	s, url := openTest(t, Options{})
	a, b := newRFI(t, "acme", 1, onboarding.RFIActive), newRFI(t, "acme", 2, onboarding.RFIActive)
	createRFIs(t, s, a, b)
	at := b.ExpiresAt
	if ids, _ := rfiClaim(t, s, "dead", at, 10); !cmp.Equal([]string{a.ID, b.ID}, ids) {
		t.Fatalf("claimed %v, want a and b", ids)
	}
	s.Close()
	other := openOn(t, url, Options{})
	if ids, next := rfiClaim(t, other, "alive", at.Add(time.Minute-1), 10); len(ids) != 0 || !next.Equal(at.Add(time.Minute)) {
		t.Errorf("claim while the lease runs = %v, next %v; want none, the lease's end", ids, next)
	}
	if ids, _ := rfiClaim(t, other, "alive", at.Add(time.Minute), 10); !cmp.Equal(sortedIDs(a, b), slices.Sorted(slices.Values(ids))) {
		t.Errorf("claim once the lease lapsed = %v, want a and b", ids)
	}
	want := map[string]rfiEntry{a.ID: {at.Add(2 * time.Minute), "alive"}, b.ID: {at.Add(2 * time.Minute), "alive"}}
	if diff := cmp.Diff(want, rfiQueue(t, other)); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
}
