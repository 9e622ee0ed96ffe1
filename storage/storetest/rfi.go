package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	fixture.CheckQueues(t, s)
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
	fixture.CheckQueues(t, s)
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
	if ids, next := fixture.ClaimRFIs(t, s, "w1", r.ExpiresAt.Add(time.Hour), 10); len(ids) != 0 || !next.IsZero() {
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
// organization or sequence, or one that fails, fails and writes nothing.
func testRFIUpdateRefusesImmutableChanges(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	for _, u := range fixture.RefusedRFIUpdates() {
		err := fixture.UpdateRFIWith(s, r.ID, u, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionRFIExpired, t0)}})
		if err == nil || u.Err != nil && !errors.Is(err, u.Err) {
			t.Errorf("%s: %v, want an error (%v)", u.Name, err, u.Err)
		}
	}
	if got, err := s.RFIRequest(ctx, r.ID); err != nil || !cmp.Equal(r, got) {
		t.Errorf("request after refused updates (-want +got):\n%s %v", cmp.Diff(r, got), err)
	}
	if rs, _, err := s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme2", Limit: 10}); err != nil || len(rs) != 0 {
		t.Errorf("acme2's requests = %v, %v; want none", rfiIDs(rs), err)
	}
	wantActivity(t, s, r.ID, nil)
	if ids, _ := fixture.ClaimRFIs(t, s, "w1", r.ExpiresAt, 10); !cmp.Equal([]string{r.ID}, ids) {
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
	walk := func(status onboarding.RFIStatus, limit int) []string {
		t.Helper()
		return rfiIDs(walkPages(t, fmt.Sprintf("status %q", status), limit, func(r *onboarding.RFIRequest) ulid.ULID { return r.Seq },
			func(before ulid.ULID) ([]*onboarding.RFIRequest, bool, error) {
				return s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Status: status, Before: before, Limit: limit})
			}))
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
			if diff := cmp.Diff(of(tt.status), walk(tt.status, tt.limit), cmpopts.EquateEmpty()); diff != "" {
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
	fixture.CheckQueues(t, s)
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
	ep := h.Endpoint("acme", onboarding.EventRFIRequestCreated, onboarding.EventRFIRequestCompleted)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	created := h.Event(onboarding.EventRFIRequestCreated, "acme", r.ID, h.Now)
	log := []onboarding.Activity{{At: h.Now, Action: onboarding.ActionRFICreated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1"}}}
	if err := h.S.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log, Events: []*onboarding.Event{created}}); err != nil {
		t.Fatal(err)
	}
	stored := r
	checkWritten := func(stage string, events ...*onboarding.Event) {
		t.Helper()
		fixture.CheckQueues(t, h.S)
		wantActivity(t, h.S, r.ID, log)
		for _, e := range events {
			got, err := h.S.Event(ctx, e.ID)
			if err != nil {
				t.Errorf("%s: Event(%s) = %v", stage, e.Type, err)
				continue
			}
			if diff := cmp.Diff(e, got); diff != "" {
				t.Errorf("%s: stored event (-want +got):\n%s", stage, diff)
			}
		}
		if n := h.Queued(); n != len(events) {
			t.Errorf("%s: QueuedDeliveries = %d, want %d", stage, n, len(events))
		}
		listed, _, err := h.S.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != len(events) {
			t.Errorf("%s: %d events listed, want %d", stage, len(listed), len(events))
		}
		if got, err := h.S.RFIRequest(ctx, r.ID); err != nil || !cmp.Equal(stored, got) {
			t.Errorf("%s: request (-want +got):\n%s %v", stage, cmp.Diff(stored, got), err)
		}
	}
	checkWritten("create", created)

	opened := h.Event(onboarding.EventRFIRequestOpened, "acme", r.ID, h.At(time.Second))
	_, err := h.S.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.Contact.Name = onboarding.RFIExpired, "changed"
		return onboarding.Changes{Log: []onboarding.Activity{{At: h.Now, Action: onboarding.ActionRFIExpired}}, Events: []*onboarding.Event{opened}}, errBoom
	})
	if err != errBoom {
		t.Errorf("UpdateRFIRequest(failing change) = %v, want the change's error unchanged", err)
	}
	dup := h.Event(onboarding.EventRFIRequestCreated, "acme", r.ID, h.At(2*time.Second))
	if err := h.S.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log, Events: []*onboarding.Event{dup}}); err == nil {
		t.Errorf("CreateRFIRequest(duplicate) succeeded")
	}
	checkWritten("failures", created)
	if ids, _ := fixture.ClaimRFIs(t, h.S, "w1", r.ExpiresAt, 10); !cmp.Equal([]string{r.ID}, ids) {
		t.Errorf("expiry claim after the failures = %v, want the request still active", ids)
	}

	done := h.At(3 * time.Second)
	completed := h.Event(onboarding.EventRFIRequestCompleted, "acme", r.ID, done)
	entry := onboarding.Activity{At: done, Action: onboarding.ActionRFICompleted, Actor: onboarding.Actor{Type: onboarding.ActorParticipant, ID: r.Participants[0].ID}}
	stored, err = h.S.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.CompletedAt = onboarding.RFICompleted, &done
		return onboarding.Changes{Log: []onboarding.Activity{entry}, Events: []*onboarding.Event{completed}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, entry)
	checkWritten("update", created, completed)
	_, err = h.S.Event(ctx, opened.ID)
	wantNotFound(t, "Event(of the failed change)", err)
	_, err = h.S.Event(ctx, dup.ID)
	wantNotFound(t, "Event(of the failed create)", err)
	for _, e := range []*onboarding.Event{created, completed} {
		claimed, _ := h.Claim("w1", h.At(time.Hour), 10)
		if diff := cmp.Diff([]string{fixture.Pair(ep.ID, e.ID)}, fixture.Pairs(claimed)); diff != "" {
			t.Errorf("deliveries (-want +got):\n%s", diff)
		}
		h.FinishAll(claimed, h.At(time.Hour))
	}
}
