package storage

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// rfiEntry is a request's place in the expiry queue.
type rfiEntry struct {
	At    time.Time
	Owner string // empty while unclaimed
}

// rfiQueue returns the expiry queue by request id, after checking its
// invariants against the records: every active request has exactly one
// entry, named by its xrq/ key; an unclaimed entry is at its ExpiresAt; a
// request that is not active has none; nothing else is queued.
func rfiQueue(t *testing.T, s *Store) map[string]rfiEntry {
	t.Helper()
	out := map[string]rfiEntry{}
	records := map[string]onboarding.RFIRequest{}
	queued := map[string][]byte{} // request id → its xrq/ value
	for k, v := range keysWithPrefix(t, s, prefixRFI) {
		var r onboarding.RFIRequest
		if err := record.Decode([]byte(v), &r); err != nil {
			t.Fatal(err)
		}
		if id := uuid.UUID([]byte(k[len(prefixRFI):])); id.String() != r.ID {
			t.Errorf("record %s stored at %x", r.ID, k)
		}
		records[r.ID] = r
	}
	for k, v := range keysWithPrefix(t, s, prefixRFIQueued) {
		queued[uuid.UUID([]byte(k[len(prefixRFIQueued):])).String()] = []byte(v)
	}
	for k, v := range keysWithPrefix(t, s, prefixRFIExpiry) {
		at, id, err := parseRFIExpiryKey([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := out[id.String()]; dup {
			t.Errorf("two expiry entries for %s", id)
		}
		out[id.String()] = rfiEntry{At: at, Owner: v}
		if !bytes.Equal(queued[id.String()], []byte(k)) {
			t.Errorf("expiry entry %x of %s: its xrq/ names %x", k, id, queued[id.String()])
		}
	}
	for id, r := range records {
		e, ok := out[id]
		switch {
		case r.Status == onboarding.RFIActive && !ok:
			t.Errorf("active request %s is not in the expiry queue", r.CompanyName)
		case r.Status != onboarding.RFIActive && ok:
			t.Errorf("%s request %s is in the expiry queue", r.Status, r.CompanyName)
		case ok && e.Owner == "" && !e.At.Equal(r.ExpiresAt):
			t.Errorf("unclaimed request %s is queued at %v, expires at %v", r.CompanyName, e.At, r.ExpiresAt)
		}
	}
	for id := range out {
		if _, ok := records[id]; !ok {
			t.Errorf("expiry entry of %s names no request", id)
		}
	}
	if len(queued) != len(out) {
		t.Errorf("%d xrq/ keys for %d expiry entries", len(queued), len(out))
	}
	return out
}

// rfiIndexSnapshot returns the store's listing and slug index keys of RFI
// requests.
func rfiIndexSnapshot(t *testing.T, s *Store) []string {
	t.Helper()
	var keys []string
	for _, family := range []string{prefixRFIOrgIndex, prefixRFIStatusIndex, prefixRFISlugIndex} {
		for k := range keysWithPrefix(t, s, family) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func wantRFIIndexes(rs ...*onboarding.RFIRequest) []string {
	var keys []string
	for _, r := range rs {
		for k := range rfiIndexes(r, uuid.MustParse(r.ID)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func TestRFIKeys(t *testing.T) {
	seq := ulid.ULID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}
	id := uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
	tests := []struct {
		name      string
		got, want []byte
	}{
		{"record", rfiKey(id), append([]byte("r/"), id[:]...)},
		{"org index", rfiOrgIndexKey("acme", seq), append([]byte("xro/acme\x00"), seq[:]...)},
		{"status index", rfiStatusIndexKey("acme", onboarding.RFICompleted, seq), append([]byte("xrs/acme\x00completed\x00"), seq[:]...)},
		{"list all", rfiListPrefix("acme", ""), []byte("xro/acme\x00")},
		{"list status", rfiListPrefix("acme", onboarding.RFIActive), []byte("xrs/acme\x00active\x00")},
		{"slug", rfiSlugIndexKey("abc_-"), []byte("xrl/abc_-")},
		{"expiry", rfiExpiryKey(time.Unix(0, 0x0102), id), append([]byte("xrx/\x00\x00\x00\x00\x00\x00\x01\x02"), id[:]...)},
		{"expiry before 1970", rfiExpiryKey(time.Unix(-5, 0), id), append([]byte("xrx/\x00\x00\x00\x00\x00\x00\x00\x00"), id[:]...)},
		{"queued", rfiQueuedKey(id), append([]byte("xrq/"), id[:]...)},
	}
	for _, tt := range tests {
		if !bytes.Equal(tt.got, tt.want) {
			t.Errorf("%s key = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	at, got, err := parseRFIExpiryKey(rfiExpiryKey(t0, id))
	if err != nil || !at.Equal(t0) || got != id {
		t.Errorf("parseRFIExpiryKey = %v, %v, %v; want %v, %v", at, got, err, t0, id)
	}
	for _, bad := range [][]byte{[]byte("xrx/short"), append([]byte("xrq/\x00\x00\x00\x00\x00\x00\x01\x02"), id[:]...)} {
		if _, _, err := parseRFIExpiryKey(bad); err == nil {
			t.Errorf("parseRFIExpiryKey(%q) = nil error", bad)
		}
	}
	if bytes.HasPrefix(rfiOrgIndexKey("acme2", seq), rfiListPrefix("acme", "")) {
		t.Errorf("rfi org index of acme2 falls under the prefix of acme")
	}
	// No family's prefix starts another's, the applications' and the
	// others' included.
	rfi := []string{prefixRFI, prefixRFIOrgIndex, prefixRFIStatusIndex, prefixRFISlugIndex, prefixRFIExpiry, prefixRFIQueued}
	others := []string{prefixApp, prefixOrgIndex, prefixStatusIndex, prefixSlugIndex, prefixPendingDocs, prefixActivity, prefixKey,
		prefixOrgKeyIndex, prefixIdempotency, "m/", prefixRetiredPreAuthIndex, prefixEvent, prefixOrgEventIndex, prefixTypeEventIndex,
		prefixEndpoint, prefixOrgEndpointIndex, prefixDelivery, prefixQueueHead, prefixDueIndex, prefixLeaseIndex, prefixAttempt,
		prefixEndpointAttempts, prefixEventAttempts}
	all := append(slices.Clone(rfi), others...)
	for _, a := range rfi {
		for _, b := range all {
			if a != b && (strings.HasPrefix(b, a) || strings.HasPrefix(a, b)) {
				t.Errorf("families %q and %q overlap", a, b)
			}
		}
	}
}

func TestRFIRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	act := []onboarding.Activity{{At: t0, Action: onboarding.ActionRFICreated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1", Name: "ci"}, Detail: "agent x"}}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: act}); err != nil {
		t.Fatal(err)
	}
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
		t.Errorf("UpdateRFIRequest() result (-want +got):\n%s", diff)
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
	if diff := cmp.Diff(wantRFIIndexes(&want), rfiIndexSnapshot(t, s)); diff != "" {
		t.Errorf("indexes after update (-want +got):\n%s", diff)
	}
	if q := rfiQueue(t, s); len(q) != 0 {
		t.Errorf("expiry queue after completion = %v, want empty", q)
	}
	logged, err := s.Activity(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(act, logged); diff != "" {
		t.Errorf("Activity() mismatch (-want +got):\n%s", diff)
	}

	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{}); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateRFIRequest(duplicate) = %v, want errDuplicate", err)
	}
	if err := s.CreateRFIRequest(ctx, &onboarding.RFIRequest{ID: "nope"}, onboarding.Changes{}); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateRFIRequest(bad id) = %v, want an error", err)
	}
	// An application and an RFI request with the same slug are not each other's.
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	app.Participants[0].LinkSlug = "shared-slug"
	if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	other := fixture.RFI("acme", 2, onboarding.RFIActive)
	other.Participants[0].LinkSlug = "shared-slug"
	fixture.CreateRFIs(t, s, other)
	if got, err := s.RFIRequestBySlug(ctx, "shared-slug"); err != nil || got.ID != other.ID {
		t.Errorf("RFIRequestBySlug(shared) = %+v, %v; want %s", got, err, other.ID)
	}
	if got, err := s.ApplicationBySlug(ctx, "shared-slug"); err != nil || got.ID != app.ID {
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
	}
	for _, tt := range notFound {
		if err := tt.call(); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("%s = %v, want ErrNotFound", tt.name, err)
		}
	}
}

// TestRFIUpdateRefusesImmutableChanges checks that a change of id,
// organization or sequence fails and writes nothing.
func TestRFIUpdateRefusesImmutableChanges(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	before := allKeys(t, s)
	for name, change := range map[string]func(*onboarding.RFIRequest){
		"id":           func(x *onboarding.RFIRequest) { x.ID = uuid.NewString() },
		"organization": func(x *onboarding.RFIRequest) { x.OrgID = "acme2" },
		"sequence":     func(x *onboarding.RFIRequest) { x.Seq = ulid.Make() },
	} {
		_, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
			change(x)
			x.Status = onboarding.RFIExpired
			return onboarding.Changes{}, nil
		})
		if err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("changing the %s: %v, want the immutable error", name, err)
		}
	}
	if diff := cmp.Diff(before, allKeys(t, s)); diff != "" {
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

// TestRFIChangesCommitWithTheirWrite checks that a create or an update
// writes its activity entries and events (queued for the endpoint that
// wants them) in its transaction, and that a create or a change that fails
// writes nothing at all.
func TestRFIChangesCommitWithTheirWrite(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	ep := h.endpoint("acme", onboarding.EventRFIRequestCreated, onboarding.EventRFIRequestCompleted)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	created := h.event(onboarding.EventRFIRequestCreated, "acme", r.ID, h.now)
	log := []onboarding.Activity{{At: h.now, Action: onboarding.ActionRFICreated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1"}}}
	if err := h.s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log, Events: []*onboarding.Event{created}}); err != nil {
		t.Fatal(err)
	}
	queued := []string{pair(ep.ID, created.ID)}
	checkWritten := func(stage string, events ...*onboarding.Event) {
		t.Helper()
		logged, err := h.s.Activity(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(log, logged); diff != "" {
			t.Errorf("%s: activity (-want +got):\n%s", stage, diff)
		}
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
		if diff := cmp.Diff(slices.Sorted(slices.Values(queued)), h.queuedPairs()); diff != "" {
			t.Errorf("%s: delivery queue (-want +got):\n%s", stage, diff)
		}
		listed, _, err := h.s.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != len(events) {
			t.Errorf("%s: %d events listed, want %d", stage, len(listed), len(events))
		}
	}
	checkWritten("create", created)

	boom := errors.New("boom")
	before := allKeys(t, h.s)
	opened := h.event(onboarding.EventRFIRequestOpened, "acme", r.ID, h.at(time.Second))
	_, err := h.s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.Contact.Name = onboarding.RFIExpired, "changed"
		return onboarding.Changes{Log: []onboarding.Activity{{At: h.now, Action: onboarding.ActionRFIExpired}}, Events: []*onboarding.Event{opened}}, boom
	})
	if err != boom {
		t.Errorf("UpdateRFIRequest(failing change) = %v, want the change's error unchanged", err)
	}
	if diff := cmp.Diff(before, allKeys(t, h.s)); diff != "" {
		t.Errorf("a failing change wrote (-before +after):\n%s", diff)
	}
	dup := h.event(onboarding.EventRFIRequestCreated, "acme", r.ID, h.at(2*time.Second))
	if err := h.s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log, Events: []*onboarding.Event{dup}}); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateRFIRequest(duplicate) = %v, want errDuplicate", err)
	}
	if diff := cmp.Diff(before, allKeys(t, h.s)); diff != "" {
		t.Errorf("a failing create wrote (-before +after):\n%s", diff)
	}
	checkWritten("failures", created)

	done := h.at(3 * time.Second)
	completed := h.event(onboarding.EventRFIRequestCompleted, "acme", r.ID, done)
	entry := onboarding.Activity{At: done, Action: onboarding.ActionRFICompleted, Actor: onboarding.Actor{Type: onboarding.ActorParticipant, ID: r.Participants[0].ID}}
	if _, err := h.s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status, x.CompletedAt = onboarding.RFICompleted, &done
		return onboarding.Changes{Log: []onboarding.Activity{entry}, Events: []*onboarding.Event{completed}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	log = append(log, entry)
	queued = append(queued, pair(ep.ID, completed.ID))
	checkWritten("update", created, completed)
	if _, err := h.s.Event(ctx, opened.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("event of the failed change: %v, want ErrNotFound", err)
	}
	if _, err := h.s.Event(ctx, dup.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("event of the failed create: %v, want ErrNotFound", err)
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

// sortedIDs is ids of rs, sorted.
func sortedIDs(rs ...*onboarding.RFIRequest) []string {
	return slices.Sorted(slices.Values(rfiIDs(rs)))
}

// TestRFIClaimIsOneTransaction checks that a claim and an update of the
// same request that run at once do not both win: whichever commits second
// retries, so that an expired request never keeps a lease entry.
func TestRFIClaimIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	claimed := make(chan []string, 1)
	// The change runs (at least) once before the claim and once after it:
	// its first attempt must then fail with a conflict and be retried.
	attempts := 0
	_, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		attempts++
		if attempts == 1 {
			ids, _, err := s.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: "w1", Now: r.ExpiresAt, Lease: time.Minute, Limit: 10})
			if err != nil {
				return onboarding.Changes{}, err
			}
			claimed <- ids
		}
		x.Status = onboarding.RFIExpired
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{r.ID}, <-claimed); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if attempts != 2 {
		t.Errorf("the update ran %d times, want 2 (its first attempt conflicts with the claim)", attempts)
	}
	if q := rfiQueue(t, s); len(q) != 0 {
		t.Errorf("queue = %v, want empty", q)
	}
}

// TestRFIReopen closes and reopens the store: records, indexes, activity,
// events and the expiry queue with its leases are all there.
func TestRFIReopen(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
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
	keys, queue := allKeys(t, h.s), rfiQueue(t, h.s)
	if err := h.s.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if diff := cmp.Diff(keys, allKeys(t, h.s)); diff != "" {
		t.Errorf("keys after reopen (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(queue, rfiQueue(t, h.s)); diff != "" {
		t.Errorf("queue after reopen (-before +after):\n%s", diff)
	}
	for _, want := range []*onboarding.RFIRequest{a, b, c} {
		got, err := h.s.RFIRequest(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after reopen (-want +got):\n%s", want.CompanyName, diff)
		}
		if got, err := h.s.RFIRequestBySlug(ctx, want.Participants[0].LinkSlug); err != nil || got.ID != want.ID {
			t.Errorf("RFIRequestBySlug(%s) after reopen = %v, %v", want.CompanyName, got, err)
		}
	}
	listed, _, err := h.s.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Status: onboarding.RFIActive, Limit: 10})
	if err != nil || !cmp.Equal(rfiIDs([]*onboarding.RFIRequest{c, a}), rfiIDs(listed)) {
		t.Errorf("active list after reopen = %v, %v; want c, a", rfiIDs(listed), err)
	}
	if logged, err := h.s.Activity(ctx, a.ID); err != nil || !cmp.Equal(log, logged) {
		t.Errorf("activity after reopen = %v, %v", logged, err)
	}
	if got, err := h.s.Event(ctx, created.ID); err != nil || !cmp.Equal(created, got) {
		t.Errorf("event after reopen = %v, %v", got, err)
	}
	// The lease runs on: a is hidden until it lapses.
	if ids, next := rfiClaim(t, h.s, "w2", h.at(time.Hour+time.Second), 10); len(ids) != 0 || !next.Equal(h.at(time.Hour+time.Minute)) {
		t.Errorf("claim after reopen = %v, next %v; want none, the lease's end", ids, next)
	}
	if ids, _ := rfiClaim(t, h.s, "w2", h.at(3*time.Hour), 10); !cmp.Equal(sortedIDs(a, c), slices.Sorted(slices.Values(ids))) {
		t.Errorf("claim after the lease lapsed = %v, want a and c", ids)
	}
}
