package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// hooks is a store for the event and webhook tests, with a clock that
// starts now (events expire relative to the real time) and makers of
// events and endpoints.
type hooks struct {
	t       *testing.T
	dir     string
	s       *Store
	now     time.Time
	entropy *ulid.MonotonicEntropy
	// gcEvery is the store's Options.GCInterval; zero: the default.
	gcEvery time.Duration
}

func newHooks(t *testing.T) *hooks {
	t.Helper()
	h := &hooks{t: t, dir: t.TempDir(), now: time.Now().UTC().Truncate(time.Millisecond), entropy: ulid.Monotonic(ulid.DefaultEntropy(), 0)}
	h.open()
	t.Cleanup(func() { h.s.Close() })
	return h
}

// open (re)opens the store of h.dir.
func (h *hooks) open() {
	h.t.Helper()
	s, err := Open(h.dir, Options{Now: func() time.Time { return h.now }, GCInterval: h.gcEvery})
	if err != nil {
		h.t.Fatal(err)
	}
	h.s = s
}

// at is h.now plus d.
func (h *hooks) at(d time.Duration) time.Time { return h.now.Add(d) }

// event builds (without storing) an event of org about subject at at.
func (h *hooks) event(typ onboarding.EventType, org, subject string, at time.Time) *onboarding.Event {
	id := "evt_" + ulid.MustNew(ulid.Timestamp(at), h.entropy).String()
	if subject == "" {
		subject = id
	}
	return &onboarding.Event{ID: id, Type: typ, OrgID: org, Subject: subject, At: at,
		Body: json.RawMessage(fmt.Sprintf(`{"id":%q,"type":%q,"data":{}}`, id, typ))}
}

// add stores events with AddEvent.
func (h *hooks) add(events ...*onboarding.Event) {
	h.t.Helper()
	for _, e := range events {
		if err := h.s.AddEvent(context.Background(), e); err != nil {
			h.t.Fatalf("AddEvent(%s): %v", e.Type, err)
		}
	}
}

// endpoint creates an enabled endpoint of org receiving types (none: all).
func (h *hooks) endpoint(org string, types ...onboarding.EventType) *onboarding.Endpoint {
	h.t.Helper()
	ep := &onboarding.Endpoint{ID: "we_" + ulid.MustNew(ulid.Timestamp(h.now), h.entropy).String(), OrgID: org,
		URL: "https://hooks.example.com/" + org, Events: types, Enabled: true, CreatedAt: h.now,
		Secrets: []onboarding.SigningSecret{{Key: []byte("k"), CreatedAt: h.now}}}
	if err := h.s.CreateEndpoint(context.Background(), ep); err != nil {
		h.t.Fatal(err)
	}
	return ep
}

// claim claims up to limit deliveries for owner at at, with a one-minute lease.
func (h *hooks) claim(owner string, at time.Time, limit int) ([]*onboarding.Delivery, time.Time) {
	h.t.Helper()
	got, next, err := h.s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: owner, Now: at, Lease: time.Minute, Limit: limit})
	if err != nil {
		h.t.Fatal(err)
	}
	return got, next
}

// finish finishes d with a log line at at.
func (h *hooks) finish(d *onboarding.Delivery, at time.Time, r onboarding.DeliveryResult) error {
	r.Attempt = onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: d.Event.OrgID,
		Attempt: d.Attempts + 1, At: at, StatusCode: 200, Success: r.Done}
	return h.s.FinishDelivery(context.Background(), d, r)
}

// pair names a delivery by endpoint and event.
func pair(endpointID, eventID string) string { return endpointID + " " + eventID }

// pairs names deliveries, sorted.
func pairs(ds []*onboarding.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, pair(d.EndpointID, d.EventID))
	}
	sort.Strings(out)
	return out
}

// queued returns every queued delivery, by key, after checking the queue's
// invariants: every queue has exactly one head, its first delivery or one
// that was redelivered behind it; every head has exactly one due entry, at
// its due time; nothing else is in the due index.
func (h *hooks) queued() map[string]queuedDelivery {
	h.t.Helper()
	out := map[string]queuedDelivery{}
	heads := map[string]string{}    // q/ key of each head → its qh/ key
	dues := map[string]time.Time{}  // q/ key → due entry
	families := map[string]string{} // q/ key → family of its entry
	err := h.s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixDelivery)})
		for it.Rewind(); it.Valid(); it.Next() {
			var q queuedDelivery
			if err := it.Item().Value(func(b []byte) error { return record.Decode(b, &q) }); err != nil {
				return err
			}
			out[string(it.Item().KeyCopy(nil))] = q
		}
		it.Close()
		it = txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixQueueHead)})
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			v, _ := it.Item().ValueCopy(nil)
			parts := bytes.SplitN(k[len(prefixQueueHead):], []byte{sep}, 2)
			heads[string(append(subjectQueuePrefix(string(parts[0]), string(parts[1])), v...))] = string(k)
		}
		it.Close()
		for _, family := range []string{prefixDueIndex, prefixLeaseIndex} {
			it = txn.NewIterator(badger.IteratorOptions{Prefix: []byte(family)})
			for it.Rewind(); it.Valid(); it.Next() {
				k := it.Item().KeyCopy(nil)
				space := k[:len(family)+bytes.IndexByte(k[len(family):], sep)+1]
				due, key, err := parseTimedKey(space, k)
				if err != nil {
					it.Close()
					return err
				}
				if _, dup := dues[string(key)]; dup {
					h.t.Errorf("two index entries for %q", key)
				}
				dues[string(key)] = due
				families[string(key)] = family
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	subjects := map[string]bool{}
	for k, q := range out {
		subjects[q.EndpointID+"\x00"+q.Subject] = true
		_, head := heads[k]
		due, hasDue := dues[k]
		switch {
		case head && !hasDue:
			h.t.Errorf("head %s → %s has no due entry", q.EndpointID, q.EventID)
		case !head && hasDue:
			h.t.Errorf("waiting delivery %s → %s has a due entry", q.EndpointID, q.EventID)
		case head && !due.Equal(q.due()):
			h.t.Errorf("head %s → %s is due at %v in the index, %v in its record", q.EndpointID, q.EventID, due, q.due())
		case head && (families[k] == prefixLeaseIndex) != (q.Owner != ""):
			h.t.Errorf("head %s → %s (owner %q) is in %s", q.EndpointID, q.EventID, q.Owner, families[k])
		}
	}
	for k := range heads {
		if _, ok := out[k]; !ok {
			h.t.Errorf("queue head %q names no delivery", k)
		}
	}
	for k := range dues {
		if _, ok := out[k]; !ok {
			h.t.Errorf("due entry %q names no delivery", k)
		}
	}
	if len(heads) != len(subjects) {
		h.t.Errorf("%d queue heads for %d queues", len(heads), len(subjects))
	}
	return out
}

// queuedPairs names the queued deliveries, sorted.
func (h *hooks) queuedPairs() []string {
	h.t.Helper()
	out := []string{}
	for _, q := range h.queued() {
		out = append(out, pair(q.EndpointID, q.EventID))
	}
	sort.Strings(out)
	return out
}

// CheckQueues checks the invariants of the delivery and RFI expiry
// queues: the Store suite (storetest) calls it after every operation
// that changes them.
func (s *Store) CheckQueues(t *testing.T) {
	t.Helper()
	h := &hooks{t: t, s: s}
	h.queued()
	rfiQueue(t, s)
}
