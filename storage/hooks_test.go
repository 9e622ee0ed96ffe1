package storage

import (
	"bytes"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// hooks is a Badger store for the event and webhook tests
// (fixture.Hooks) in a directory of its own, which a test can reopen.
type hooks struct {
	*fixture.Hooks[*Store]
	dir string
	// gcEvery is the store's Options.GCInterval; zero: the default.
	gcEvery time.Duration
}

func newHooks(t *testing.T) *hooks {
	t.Helper()
	h := &hooks{Hooks: fixture.NewHooks[*Store](t), dir: t.TempDir()}
	h.open()
	t.Cleanup(func() { h.S.Close() })
	return h
}

// open (re)opens the store of h.dir.
func (h *hooks) open() {
	h.T.Helper()
	s, err := Open(h.dir, Options{Now: h.Clock, GCInterval: h.gcEvery})
	if err != nil {
		h.T.Fatal(err)
	}
	h.S = s
}

// queued returns every queued delivery of h's store (deliveryQueue).
func (h *hooks) queued() map[string]queuedDelivery {
	h.T.Helper()
	return deliveryQueue(h.T, h.S)
}

// deliveryQueue returns every queued delivery of s, by key, after
// checking the queue's invariants: every queue has exactly one head, its
// first delivery or one that was redelivered behind it; every head has
// exactly one due entry, at its due time; nothing else is in the due
// index.
func deliveryQueue(t *testing.T, s *Store) map[string]queuedDelivery {
	t.Helper()
	out := map[string]queuedDelivery{}
	heads := map[string]string{}    // q/ key of each head → its qh/ key
	dues := map[string]time.Time{}  // q/ key → due entry
	families := map[string]string{} // q/ key → family of its entry
	err := s.db.View(func(txn *badger.Txn) error {
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
					t.Errorf("two index entries for %q", key)
				}
				dues[string(key)] = due
				families[string(key)] = family
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	subjects := map[string]bool{}
	for k, q := range out {
		subjects[q.EndpointID+"\x00"+q.Subject] = true
		_, head := heads[k]
		due, hasDue := dues[k]
		switch {
		case head && !hasDue:
			t.Errorf("head %s → %s has no due entry", q.EndpointID, q.EventID)
		case !head && hasDue:
			t.Errorf("waiting delivery %s → %s has a due entry", q.EndpointID, q.EventID)
		case head && !due.Equal(q.due()):
			t.Errorf("head %s → %s is due at %v in the index, %v in its record", q.EndpointID, q.EventID, due, q.due())
		case head && (families[k] == prefixLeaseIndex) != (q.Owner != ""):
			t.Errorf("head %s → %s (owner %q) is in %s", q.EndpointID, q.EventID, q.Owner, families[k])
		}
	}
	for k := range heads {
		if _, ok := out[k]; !ok {
			t.Errorf("queue head %q names no delivery", k)
		}
	}
	for k := range dues {
		if _, ok := out[k]; !ok {
			t.Errorf("due entry %q names no delivery", k)
		}
	}
	if len(heads) != len(subjects) {
		t.Errorf("%d queue heads for %d queues", len(heads), len(subjects))
	}
	return out
}

// CheckQueues checks the invariants of the delivery and RFI expiry
// queues: the Store suite (storetest) calls it after every operation
// that changes them.
func (s *Store) CheckQueues(t *testing.T) {
	t.Helper()
	deliveryQueue(t, s)
	rfiQueue(t, s)
}
