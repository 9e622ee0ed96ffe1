package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var rfiCases = []suiteCase{
	{"RoundTrip", testRFIRoundTrip},
	{"UpdateRefusesImmutableChanges", testRFIUpdateRefusesImmutableChanges},
	{"List", testListRFIRequests},
	{"ChangesCommitWithTheirWrite", testRFIChangesCommitWithTheirWrite},
	{"ClaimExpiries", testClaimRFIExpiries},
	{"ConcurrentClaimsDoNotOverlap", testConcurrentRFIClaimsDoNotOverlap},
	{"ConcurrentClaimsTwoInstances", testConcurrentRFIClaimsTwoInstances},
	{"Restart", testRFIRestart},
	{"QueueIgnoresTheDeliveryQueue", testRFIQueueIgnoresTheDeliveryQueue},
}

func rfiIDs(rs []*onboarding.RFIRequest) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// sortedIDs is the ids of rs, sorted.
func sortedIDs(rs ...*onboarding.RFIRequest) []string {
	return sorted(rfiIDs(rs)...)
}

// rfiClaim claims expiries for owner at at with a one-minute lease.
func rfiClaim(t *testing.T, s onboarding.Store, owner string, at time.Time, limit int) ([]string, time.Time) {
	t.Helper()
	ids, next, err := s.ClaimRFIExpiries(context.Background(), onboarding.Claim{Owner: owner, Now: at, Lease: time.Minute, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	checkQueues(t, s)
	return sorted(ids...), next
}

// testRFIRoundTrip: a request reads back as stored by id and slug, an
// update changes it and its slug, a duplicate or malformed create is
// refused, and applications and requests never answer for each other.
func testRFIRoundTrip(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	log := []onboarding.Activity{{At: t0, Action: onboarding.ActionRFICreated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1", Name: "ci"}, Detail: "agent x"}}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	checkQueues(t, s)
	got, err := s.RFIRequest(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("RFIRequest() mismatch (-want +got):\n%s", diff)
	}
	got, err = s.RFIRequestBySlug(ctx, r.Participants[0].LinkSlug)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("RFIRequestBySlug() mismatch (-want +got):\n%s", diff)
	}

	done := t0.Add(time.Hour)
	want := *r
	want.Status, want.CompletedAt, want.UpdatedAt = onboarding.RFICompleted, &done, done
	want.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {FileID: "f1", FileName: "coi.pdf", FileType: "application/pdf",
		UploadedAt: done, Status: onboarding.DocumentAccepted, BlobID: "b1", Size: 42}}
	want.Participants = []onboarding.Participant{r.Participants[0]}
	newSlug := "rfi-new-" + uuid.NewString()
	want.Participants[0].LinkSlug, want.Participants[0].Verified = newSlug, true
	updated, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.CompletedAt, x.UpdatedAt, x.Documents = want.Status, want.CompletedAt, want.UpdatedAt, want.Documents
		x.Participants[0].LinkSlug, x.Participants[0].Verified = newSlug, true
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkQueues(t, s)
	if diff := cmp.Diff(&want, updated); diff != "" {
		t.Errorf("UpdateRFIRequest() result (-want +got):\n%s", diff)
	}
	for name, read := range map[string]func() (*onboarding.RFIRequest, error){
		"RFIRequest":       func() (*onboarding.RFIRequest, error) { return s.RFIRequest(ctx, r.ID) },
		"RFIRequestBySlug": func() (*onboarding.RFIRequest, error) { return s.RFIRequestBySlug(ctx, newSlug) },
	} {
		got, err := read()
		if err != nil {
			t.Fatalf("%s after update: %v", name, err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("%s after update (-want +got):\n%s", name, diff)
		}
	}
	// Completed, it left the expiry queue.
	if ids, next := rfiClaim(t, s, "w1", r.ExpiresAt.Add(time.Hour), 10); len(ids) != 0 || !next.IsZero() {
		t.Errorf("expiry claim after completion = %v, next %v; want none", ids, next)
	}
	wantActivity(t, s, r.ID, log)

	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{}); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateRFIRequest(duplicate) = %v, want an error", err)
	}
	if err := s.CreateRFIRequest(ctx, &onboarding.RFIRequest{ID: "nope"}, onboarding.Changes{}); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateRFIRequest(bad id) = %v, want an error", err)
	}
	// An application and an RFI request with the same slug are not each other's.
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	shared := "shared-" + uuid.NewString()
	app.Participants[0].LinkSlug = shared
	if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	other := fixture.RFI("acme", 2, onboarding.RFIActive)
	other.Participants[0].LinkSlug = shared
	fixture.CreateRFIs(t, s, other)
	if got, err := s.RFIRequestBySlug(ctx, shared); err != nil || got.ID != other.ID {
		t.Errorf("RFIRequestBySlug(shared) = %+v, %v; want %s", got, err, other.ID)
	}
	if got, err := s.ApplicationBySlug(ctx, shared); err != nil || got.ID != app.ID {
		t.Errorf("ApplicationBySlug(shared) = %+v, %v; want %s", got, err, app.ID)
	}
	notFound := []struct {
		name string
		call func() error
	}{
		{"RFIRequest(unknown)", func() error { _, err := s.RFIRequest(ctx, uuid.NewString()); return err }},
		{"RFIRequest(malformed)", func() error { _, err := s.RFIRequest(ctx, "not-a-uuid"); return err }},
		{"RFIRequest(an application's id)", func() error { _, err := s.RFIRequest(ctx, app.ID); return err }},
		{"RFIRequestBySlug(unknown)", func() error { _, err := s.RFIRequestBySlug(ctx, "nope"); return err }},
		{"RFIRequestBySlug(old slug)", func() error { _, err := s.RFIRequestBySlug(ctx, r.Participants[0].LinkSlug); return err }},
		{"RFIRequestBySlug(empty)", func() error { _, err := s.RFIRequestBySlug(ctx, ""); return err }},
		{"RFIRequestBySlug(not UTF-8)", func() error { _, err := s.RFIRequestBySlug(ctx, "\xfe"); return err }},
		{"Application(an RFI request's id)", func() error { _, err := s.Application(ctx, r.ID); return err }},
		{"UpdateRFIRequest(unknown)", func() error {
			_, err := s.UpdateRFIRequest(ctx, uuid.NewString(), func(*onboarding.RFIRequest) (onboarding.Changes, error) {
				t.Error("change called for an unknown request")
				return onboarding.Changes{}, nil
			})
			return err
		}},
		{"UpdateRFIRequest(malformed)", func() error {
			_, err := s.UpdateRFIRequest(ctx, "not-a-uuid", func(*onboarding.RFIRequest) (onboarding.Changes, error) { return onboarding.Changes{}, nil })
			return err
		}},
		{"UpdateApplication(an RFI request's id)", func() error {
			_, err := s.UpdateApplication(ctx, r.ID, func(*onboarding.Application) (onboarding.Changes, error) { return onboarding.Changes{}, nil })
			return err
		}},
	}
	for _, tt := range notFound {
		wantNotFound(t, tt.name, tt.call())
	}
}

// testRFIUpdateRefusesImmutableChanges checks that a change of id,
// organization or sequence fails and writes nothing.
func testRFIUpdateRefusesImmutableChanges(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	for name, change := range map[string]func(*onboarding.RFIRequest){
		"id":           func(x *onboarding.RFIRequest) { x.ID = uuid.NewString() },
		"organization": func(x *onboarding.RFIRequest) { x.OrgID = "acme2" },
		"sequence":     func(x *onboarding.RFIRequest) { x.Seq = ulid.Make() },
	} {
		_, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
			change(x)
			x.Status = onboarding.RFIExpired
			return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionRFIExpired, t0)}}, nil
		})
		if err == nil {
			t.Errorf("changing the %s succeeded, want an error", name)
		}
	}
	if got, err := s.RFIRequest(ctx, r.ID); err != nil || !cmp.Equal(r, got) {
		t.Errorf("request after refused updates (-want +got):\n%s %v", cmp.Diff(r, got), err)
	}
	if rs, _, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme2", Limit: 10}); err != nil || len(rs) != 0 {
		t.Errorf("acme2's requests = %v, %v; want none", rfiIDs(rs), err)
	}
	wantActivity(t, s, r.ID, nil)
	if ids, _ := rfiClaim(t, s, "w1", r.ExpiresAt, 10); !cmp.Equal([]string{r.ID}, ids) {
		t.Errorf("expiry claim = %v, want the request still active", ids)
	}
}

// testListRFIRequests lists an organization's requests newest first, by
// status, in pages, next to another organization's and to applications,
// and after status moves.
func testListRFIRequests(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	var acme []*onboarding.RFIRequest // newest first
	for i := 0; i < 7; i++ {
		status := onboarding.RFIActive
		if i%3 == 0 {
			status = onboarding.RFICompleted
		}
		r := fixture.RFI("acme", i, status)
		acme = append([]*onboarding.RFIRequest{r}, acme...)
		// Another organization's requests (whose id starts with acme's)
		// and applications interleave in time.
		fixture.CreateRFIs(t, s, r, fixture.RFI("acme2", i, status))
		fixture.StoredApp(t, s, "acme", i, onboarding.StatusSent)
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
	// walk lists the pages of limit, checking each page's size and has_more.
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
	if rs, more, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Limit: 7}); err != nil || len(rs) != 7 || more {
		t.Errorf("limit equal to count: %d requests, more=%v, %v; want 7, false", len(rs), more, err)
	}
	// Status moves carry requests between the status lists.
	for _, mv := range []struct {
		i  int
		to onboarding.RFIStatus
	}{{1, onboarding.RFIExpired}, {3, onboarding.RFIActive}, {6, onboarding.RFIExpired}, {0, onboarding.RFICompleted}} {
		acme[mv.i] = fixture.UpdateRFI(t, s, acme[mv.i].ID, func(r *onboarding.RFIRequest) { r.Status = mv.to })
	}
	checkQueues(t, s)
	check("after status moves")
	// A page from a cursor starts strictly after it.
	rs, more, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Before: acme[2].Seq, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rfiIDs(acme[3:5]), rfiIDs(rs)); diff != "" || !more {
		t.Errorf("page before the third (-want +got):\n%s more=%v", diff, more)
	}
	if rs, more, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "nobody", Limit: 10}); err != nil || len(rs) != 0 || more {
		t.Errorf("unknown organization: %d, %v, %v", len(rs), more, err)
	}
}

// testRFIChangesCommitWithTheirWrite checks that a create or an update
// writes its activity entries and events (queued for the endpoint that
// wants them) in its transaction, and that a create or a change that fails
// writes nothing at all.
func testRFIChangesCommitWithTheirWrite(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.endpoint("acme", onboarding.EventRFIRequestCreated, onboarding.EventRFIRequestCompleted)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	created := h.event(onboarding.EventRFIRequestCreated, "acme", r.ID, h.now)
	log := []onboarding.Activity{{At: h.now, Action: onboarding.ActionRFICreated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1"}}}
	if err := h.s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log, Events: []*onboarding.Event{created}}); err != nil {
		t.Fatal(err)
	}
	stored := r
	checkWritten := func(stage string, events ...*onboarding.Event) {
		t.Helper()
		checkQueues(t, h.s)
		wantActivity(t, h.s, r.ID, log)
		for _, e := range events {
			got, err := h.s.Event(ctx, e.ID)
			if err != nil {
				t.Errorf("%s: Event(%s) = %v", stage, e.Type, err)
				continue
			}
			if diff := cmp.Diff(e, got); diff != "" {
				t.Errorf("%s: stored event (-want +got):\n%s", stage, diff)
			}
		}
		if n := h.queued(); n != len(events) {
			t.Errorf("%s: QueuedDeliveries = %d, want %d", stage, n, len(events))
		}
		listed, _, err := h.s.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != len(events) {
			t.Errorf("%s: %d events listed, want %d", stage, len(listed), len(events))
		}
		if got, err := h.s.RFIRequest(ctx, r.ID); err != nil || !cmp.Equal(stored, got) {
			t.Errorf("%s: request (-want +got):\n%s %v", stage, cmp.Diff(stored, got), err)
		}
	}
	checkWritten("create", created)

	opened := h.event(onboarding.EventRFIRequestOpened, "acme", r.ID, h.at(time.Second))
	_, err := h.s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.Contact.Name = onboarding.RFIExpired, "changed"
		return onboarding.Changes{Log: []onboarding.Activity{{At: h.now, Action: onboarding.ActionRFIExpired}}, Events: []*onboarding.Event{opened}}, errBoom
	})
	if err != errBoom {
		t.Errorf("UpdateRFIRequest(failing change) = %v, want the change's error unchanged", err)
	}
	dup := h.event(onboarding.EventRFIRequestCreated, "acme", r.ID, h.at(2*time.Second))
	if err := h.s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log, Events: []*onboarding.Event{dup}}); err == nil {
		t.Errorf("CreateRFIRequest(duplicate) succeeded")
	}
	checkWritten("failures", created)
	if ids, _ := rfiClaim(t, h.s, "w1", r.ExpiresAt, 10); !cmp.Equal([]string{r.ID}, ids) {
		t.Errorf("expiry claim after the failures = %v, want the request still active", ids)
	}

	done := h.at(3 * time.Second)
	completed := h.event(onboarding.EventRFIRequestCompleted, "acme", r.ID, done)
	entry := onboarding.Activity{At: done, Action: onboarding.ActionRFICompleted, Actor: onboarding.Actor{Type: onboarding.ActorParticipant, ID: r.Participants[0].ID}}
	stored, err = h.s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.CompletedAt = onboarding.RFICompleted, &done
		return onboarding.Changes{Log: []onboarding.Activity{entry}, Events: []*onboarding.Event{completed}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, entry)
	checkWritten("update", created, completed)
	_, err = h.s.Event(ctx, opened.ID)
	wantNotFound(t, "Event(of the failed change)", err)
	_, err = h.s.Event(ctx, dup.ID)
	wantNotFound(t, "Event(of the failed create)", err)
	for _, e := range []*onboarding.Event{created, completed} {
		claimed, _ := h.claim("w1", h.at(time.Hour), 10)
		if diff := cmp.Diff([]string{pair(ep.ID, e.ID)}, pairs(claimed)); diff != "" {
			t.Errorf("deliveries (-want +got):\n%s", diff)
		}
		h.finishAll(claimed, h.at(time.Hour))
	}
}

// testClaimRFIExpiries walks the expiry queue through claims, leases,
// updates that keep or move ExpiresAt, and status changes.
func testClaimRFIExpiries(t *testing.T, open Opener) {
	s := fresh(t, open)
	// a, b and c expire an hour apart; d is completed, e expired.
	a, b, c := fixture.RFI("acme", 1, onboarding.RFIActive), fixture.RFI("acme", 2, onboarding.RFIActive), fixture.RFI("acme2", 3, onboarding.RFIActive)
	d, e := fixture.RFI("acme", 4, onboarding.RFICompleted), fixture.RFI("acme", 5, onboarding.RFIExpired)
	// d and e would be the first due, were they queued.
	d.ExpiresAt, e.ExpiresAt = t0, t0
	// Nanoseconds: the queue orders and answers exact times.
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = t0.Add(time.Hour+1), t0.Add(2*time.Hour+2), t0.Add(3*time.Hour+3)
	fixture.CreateRFIs(t, s, a, b, c, d, e)
	checkQueues(t, s)
	steps := []struct {
		name     string
		owner    string
		at       time.Time
		limit    int
		want     []string // sorted
		wantNext time.Time
	}{
		{"nothing due", "w1", t0, 10, nil, a.ExpiresAt},
		{"a nanosecond early", "w1", a.ExpiresAt.Add(-1), 10, nil, a.ExpiresAt},
		{"a limit of none", "w1", b.ExpiresAt, 0, nil, a.ExpiresAt},
		{"due at or before now, earliest first, up to the limit", "w1", b.ExpiresAt, 1, []string{a.ID}, b.ExpiresAt},
		{"the rest due", "w1", b.ExpiresAt, 10, []string{b.ID}, b.ExpiresAt.Add(time.Minute)},
		{"leases hide their requests", "w2", b.ExpiresAt.Add(time.Minute - 1), 10, nil, b.ExpiresAt.Add(time.Minute)},
		{"a lapsed lease is due again", "w2", b.ExpiresAt.Add(time.Minute), 10, sortedIDs(a, b), c.ExpiresAt},
	}
	for _, st := range steps {
		got, next := rfiClaim(t, s, st.owner, st.at, st.limit)
		if diff := cmp.Diff(sorted(st.want...), got); diff != "" {
			t.Errorf("%s: claimed (-want +got):\n%s", st.name, diff)
		}
		if !next.Equal(st.wantNext) {
			t.Errorf("%s: next = %v, want %v", st.name, next, st.wantNext)
		}
	}
	// a and b are leased to w2 until lease; c waits at its ExpiresAt.
	lease := b.ExpiresAt.Add(2 * time.Minute)

	// An update that leaves ExpiresAt alone keeps a running lease, and an
	// unclaimed request at its ExpiresAt.
	fixture.UpdateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.CompanyName = "renamed" })
	fixture.UpdateRFI(t, s, c.ID, func(r *onboarding.RFIRequest) { r.CompanyName = "renamed" })
	if got, next := rfiClaim(t, s, "w3", lease.Add(-1), 10); len(got) != 0 || !next.Equal(lease) {
		t.Errorf("after unrelated updates: claimed %v, next %v; want none, the leases' end %v", got, next, lease)
	}
	// One that moves ExpiresAt moves the request there, lease or none.
	later := c.ExpiresAt.Add(time.Hour)
	fixture.UpdateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.ExpiresAt = later })
	fixture.UpdateRFI(t, s, c.ID, func(r *onboarding.RFIRequest) { r.ExpiresAt = later.Add(time.Hour) })
	if got, next := rfiClaim(t, s, "w3", lease, 10); !cmp.Equal([]string{b.ID}, got) || !next.Equal(later) {
		t.Errorf("after moving ExpiresAt: claimed %v, next %v; want b, %v", got, next, later)
	}
	// A request that leaves active leaves the queue, leased or not.
	fixture.UpdateRFI(t, s, b.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFIExpired })
	fixture.UpdateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFICompleted })
	if got, next := rfiClaim(t, s, "w3", later.Add(30*time.Minute), 10); len(got) != 0 || !next.Equal(later.Add(time.Hour)) {
		t.Errorf("claim after they left = %v, next %v; want none, %v", got, next, later.Add(time.Hour))
	}
	// A request back to active is queued again.
	fixture.UpdateRFI(t, s, d.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFIActive })
	if got, next := rfiClaim(t, s, "w3", later.Add(time.Hour), 10); !cmp.Equal(sortedIDs(c, d), got) || !next.IsZero() {
		t.Errorf("last claim = %v, next %v; want c and d, zero", got, next)
	}
	if got, next := rfiClaim(t, s, "w3", later.Add(time.Hour+time.Second), 10); len(got) != 0 || !next.Equal(later.Add(time.Hour+time.Minute)) {
		t.Errorf("claim while c and d are leased = %v, next %v; want none, the lease's end", got, next)
	}
}

// concurrentRFIClaims runs claimers through stores against each other
// and against an updater completing requests: no request is claimed
// twice, every active one is claimed, and the completed ones leave the
// queue.
func concurrentRFIClaims(t *testing.T, stores ...onboarding.Store) {
	ctx := context.Background()
	s := stores[0]
	const n = 120
	var all []*onboarding.RFIRequest
	for i := 0; i < n; i++ {
		r := fixture.RFI("acme", i, onboarding.RFIActive)
		r.ExpiresAt = t0.Add(time.Duration(i%7) * time.Second)
		all = append(all, r)
	}
	fixture.CreateRFIs(t, s, all...)
	now := t0.Add(time.Hour)
	const workers = 4
	var mu sync.Mutex
	seen := map[string]string{} // request id → the claimer that got it
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			owner := fmt.Sprintf("w%d", w)
			for {
				ids, next, err := s.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: owner, Now: now, Lease: time.Hour, Limit: 5})
				if errors.Is(err, onboarding.ErrWriteConflict) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, id := range ids {
					if prev, dup := seen[id]; dup {
						t.Errorf("%s claimed by %s and %s", id, prev, owner)
					}
					seen[id] = owner
				}
				mu.Unlock()
				if len(ids) == 0 && next.After(now) || next.IsZero() {
					return
				}
				runtime.Gosched()
			}
		}()
	}
	// Meanwhile every third request is completed.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i += 3 {
			if _, err := stores[len(stores)-1].UpdateRFIRequest(ctx, all[i].ID, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
				r.Status = onboarding.RFICompleted
				return onboarding.Changes{}, nil
			}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkQueues(t, s)
	var active []*onboarding.RFIRequest
	for i, r := range all {
		if i%3 != 0 {
			active = append(active, r)
			if _, claimed := seen[r.ID]; !claimed {
				t.Errorf("active request %d was never claimed", i)
			}
		}
	}
	// Each active request is leased until now+1h; the completed ones are gone.
	if ids, next := rfiClaim(t, s, "w9", now.Add(time.Hour-1), 1000); len(ids) != 0 || !next.Equal(now.Add(time.Hour)) {
		t.Errorf("claim while the leases run = %d requests, next %v; want none, %v", len(ids), next, now.Add(time.Hour))
	}
	ids, next := rfiClaim(t, s, "w9", now.Add(time.Hour), 1000)
	if diff := cmp.Diff(sortedIDs(active...), ids); diff != "" || !next.IsZero() {
		t.Errorf("claim once the leases lapsed (-want +got):\n%s next=%v", diff, next)
	}
}

// testConcurrentRFIClaimsDoNotOverlap runs the claimers on one store.
func testConcurrentRFIClaimsDoNotOverlap(t *testing.T, open Opener) {
	concurrentRFIClaims(t, fresh(t, open))
}

// testConcurrentRFIClaimsTwoInstances runs the claimers through two
// stores on the same data.
func testConcurrentRFIClaimsTwoInstances(t *testing.T, open Opener) {
	s := fresh(t, open)
	concurrentRFIClaims(t, s, beside(t, open, s))
}

// testRFIRestart restarts the store: records, slugs, lists, activity,
// events and the expiry queue with its leases are all there.
func testRFIRestart(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	a, b, c := fixture.RFI("acme", 1, onboarding.RFIActive), fixture.RFI("acme", 2, onboarding.RFIActive), fixture.RFI("acme", 3, onboarding.RFIActive)
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = h.at(time.Hour), h.at(2*time.Hour), h.at(3*time.Hour)
	created := h.event(onboarding.EventRFIRequestCreated, "acme", a.ID, h.now)
	log := []onboarding.Activity{{At: h.now, Action: onboarding.ActionRFICreated}}
	if err := h.s.CreateRFIRequest(ctx, a, onboarding.Changes{Log: log, Events: []*onboarding.Event{created}}); err != nil {
		t.Fatal(err)
	}
	fixture.CreateRFIs(t, h.s, b, c)
	b = fixture.UpdateRFI(t, h.s, b.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFICompleted })
	if ids, _ := rfiClaim(t, h.s, "w1", h.at(time.Hour), 10); !cmp.Equal([]string{a.ID}, ids) {
		t.Fatalf("claimed %v, want a", ids)
	}
	h.restart()
	checkQueues(t, h.s)
	for _, want := range []*onboarding.RFIRequest{a, b, c} {
		got, err := h.s.RFIRequest(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after the restart (-want +got):\n%s", want.CompanyName, diff)
		}
		if got, err := h.s.RFIRequestBySlug(ctx, want.Participants[0].LinkSlug); err != nil || got.ID != want.ID {
			t.Errorf("RFIRequestBySlug(%s) after the restart = %v, %v", want.CompanyName, got, err)
		}
	}
	listed, _, err := h.s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Status: onboarding.RFIActive, Limit: 10})
	if err != nil || !cmp.Equal([]string{c.ID, a.ID}, rfiIDs(listed)) {
		t.Errorf("active list after the restart = %v, %v; want c, a", rfiIDs(listed), err)
	}
	wantActivity(t, h.s, a.ID, log)
	if got, err := h.s.Event(ctx, created.ID); err != nil || !cmp.Equal(created, got) {
		t.Errorf("event after the restart = %v, %v", got, err)
	}
	// The lease runs on: a is hidden until it lapses.
	if ids, next := rfiClaim(t, h.s, "w2", h.at(time.Hour+time.Second), 10); len(ids) != 0 || !next.Equal(h.at(time.Hour+time.Minute)) {
		t.Errorf("claim after the restart = %v, next %v; want none, the lease's end", ids, next)
	}
	if ids, _ := rfiClaim(t, h.s, "w2", h.at(3*time.Hour), 10); !cmp.Equal(sortedIDs(a, c), ids) {
		t.Errorf("claim after the lease lapsed = %v, want a and c", ids)
	}
}

// testRFIQueueIgnoresTheDeliveryQueue checks that expiry claims and
// delivery claims never meet: a claim of either finds only its own.
func testRFIQueueIgnoresTheDeliveryQueue(t *testing.T, open Opener) {
	h := newHooks(t, open)
	h.endpoint("acme")
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	r.ExpiresAt = h.now
	fixture.CreateRFIs(t, h.s, r)
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e)
	if ds, _ := h.claim("w1", h.now, 10); len(ds) != 1 || ds[0].EventID != e.ID {
		t.Errorf("ClaimDeliveries = %v, want the event's delivery only", pairs(ds))
	}
	if ids, next := rfiClaim(t, h.s, "w1", h.now, 10); !cmp.Equal([]string{r.ID}, ids) || !next.IsZero() {
		t.Errorf("ClaimRFIExpiries = %v, next %v; want the request only", ids, next)
	}
	if ids, next := rfiClaim(t, h.s, "w2", h.now, 10); len(ids) != 0 || !next.Equal(h.at(time.Minute)) {
		t.Errorf("ClaimRFIExpiries during the lease = %v, next %v; want none, the lease's end", ids, next)
	}
	if n := h.queued(); n != 1 {
		t.Errorf("QueuedDeliveries = %d, want the one delivery", n)
	}
}
