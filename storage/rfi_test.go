package storage

import (
	"bytes"
	"context"
	"errors"
	"slices"
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
// requests, sorted.
func rfiIndexSnapshot(t *testing.T, s *Store) []string {
	t.Helper()
	return sortedKeys(t, s, prefixRFIOrgIndex, prefixRFIStatusIndex, prefixRFISlugIndex)
}

// wantRFIIndexes returns the listing and slug index keys of rs, sorted.
func wantRFIIndexes(rs ...*onboarding.RFIRequest) []string {
	return wantKeys(func(r *onboarding.RFIRequest) map[string][]byte { return rfiIndexes(r, uuid.MustParse(r.ID)) }, rs...)
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

// TestRFIIndexesFollowTheRecord: an update that changes a request's
// status and slug moves its listing and slug index entries with it, and
// takes it out of the expiry queue once it is no longer active; a second
// create of it is errDuplicate. (What the store answers is the Store
// suite's.)
func TestRFIIndexesFollowTheRecord(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, s, r)
	if diff := cmp.Diff(wantRFIIndexes(r), rfiIndexSnapshot(t, s)); diff != "" {
		t.Errorf("indexes after create (-want +got):\n%s", diff)
	}
	updated := fixture.UpdateRFI(t, s, r.ID, func(x *onboarding.RFIRequest) {
		x.Status, x.Participants[0].LinkSlug = onboarding.RFICompleted, "rfi-new-slug"
	})
	if diff := cmp.Diff(wantRFIIndexes(updated), rfiIndexSnapshot(t, s)); diff != "" {
		t.Errorf("indexes after update (-want +got):\n%s", diff)
	}
	if q := rfiQueue(t, s); len(q) != 0 {
		t.Errorf("expiry queue after completion = %v, want empty", q)
	}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{}); !errors.Is(err, errDuplicate) {
		t.Errorf("CreateRFIRequest(duplicate) = %v, want errDuplicate", err)
	}
}

// TestRFIRefusedWritesWriteNothing: a create or an update of a request
// that fails, with the activity and events it carried, leaves every key as
// it was; a duplicate create is errDuplicate, a change of what is
// immutable says so.
func TestRFIRefusedWritesWriteNothing(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	h.Endpoint("acme")
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	fixture.CreateRFIs(t, h.S, r)
	changes := func() onboarding.Changes {
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionRFIExpired, h.Now)},
			Events: []*onboarding.Event{h.Event(onboarding.EventRFIRequestExpired, "acme", r.ID, h.Now)}}
	}
	check := func(name string, write func() error, want func(error) bool) {
		t.Helper()
		before := allKeys(t, h.S)
		if err := write(); !want(err) {
			t.Errorf("%s: %v", name, err)
		}
		if diff := cmp.Diff(before, allKeys(t, h.S)); diff != "" {
			t.Errorf("%s wrote (-before +after):\n%s", name, diff)
		}
	}
	check("a duplicate create", func() error { return h.S.CreateRFIRequest(ctx, r, changes()) },
		func(err error) bool { return errors.Is(err, errDuplicate) })
	for _, u := range fixture.RefusedRFIUpdates() {
		check(u.Name, func() error { return fixture.UpdateRFIWith(h.S, r.ID, u, changes()) },
			func(err error) bool { return u.Err == nil && fixture.IsImmutable(err) || u.Err != nil && err == u.Err })
	}
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

// TestRFIReopen closes and reopens the store: opening changes none of
// the RFI keys, and the expiry queue with its leases is as it was. (What
// the store answers after a restart is the Store suite's.)
func TestRFIReopen(t *testing.T) {
	h := newHooks(t)
	a, b, c := fixture.RFI("acme", 1, onboarding.RFIActive), fixture.RFI("acme", 2, onboarding.RFIActive), fixture.RFI("acme", 3, onboarding.RFIActive)
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = h.At(time.Hour), h.At(2*time.Hour), h.At(3*time.Hour)
	fixture.CreateRFIs(t, h.S, a, b, c)
	fixture.UpdateRFI(t, h.S, b.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFICompleted })
	if ids, _ := fixture.ClaimRFIs(t, h.S, "w1", h.At(time.Hour), 10); !cmp.Equal([]string{a.ID}, ids) {
		t.Fatalf("claimed %v, want a", ids)
	}
	keys, queue := allKeys(t, h.S), rfiQueue(t, h.S)
	if err := h.S.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if diff := cmp.Diff(keys, allKeys(t, h.S)); diff != "" {
		t.Errorf("keys after reopen (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(queue, rfiQueue(t, h.S)); diff != "" {
		t.Errorf("queue after reopen (-before +after):\n%s", diff)
	}
}
