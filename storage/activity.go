package storage

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// Activity logs (keys.go: v/ and vh/). Every append computes the entries'
// hashes from the log's head and moves the head, in the transaction of the
// change the entries record (onboarding/activitychain.go has the chain).

var _ onboarding.ActivityStore = (*Store)(nil)

// storedActivity is an activity entry as v/ stores it (schema 5): the
// entry and its link in its log's hash chain. Entries of earlier schemas
// decode with both links empty; the schema 5 migration fills them in.
type storedActivity struct {
	onboarding.Activity
	Prev string // hex, onboarding.LoggedActivity.Prev
	Hash string // hex, onboarding.LoggedActivity.Hash
}

// headLen is the length of a vh/ value: the last entry's ULID, then its
// hash as 32 raw bytes.
const headLen = 16 + 32

func encodeHead(h onboarding.ActivityHead) ([]byte, error) {
	sum, err := hex.DecodeString(h.Hash)
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("activity head: bad hash %q", h.Hash)
	}
	return append(h.Seq[:], sum...), nil
}

func decodeHead(b []byte) (onboarding.ActivityHead, error) {
	if len(b) != headLen {
		return onboarding.ActivityHead{}, fmt.Errorf("activity head: %d bytes, want %d", len(b), headLen)
	}
	return onboarding.ActivityHead{Seq: ulid.ULID(b[:16]), Hash: hex.EncodeToString(b[16:])}, nil
}

// activityHead returns the head of subject's log in txn; nil when it has
// none. The read makes txn conflict with any other append to the log.
func activityHead(txn *badger.Txn, subject uuid.UUID) (*onboarding.ActivityHead, error) {
	item, err := txn.Get(activityHeadKey(subject))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var h onboarding.ActivityHead
	err = item.Value(func(b []byte) error {
		var err error
		h, err = decodeHead(b)
		return err
	})
	return &h, err
}

// appendActivity appends log to subject's activity log in txn: each entry
// gets a Seq above the log's last (from its At, or just above the last
// when the clock has not moved past it), is chained after the entry
// before it, and the head moves to the last one.
func (s *Store) appendActivity(txn *badger.Txn, subject uuid.UUID, log []onboarding.Activity) error {
	_, err := s.appendActivityAfter(txn, subject, logHead{}, log)
	return err
}

// logHead is the head of an application's activity log as of one version
// of its record, when known: a nil head is a log with no entries yet.
//
// Only CreateApplication and UpdateApplication write an application's
// head (vh/<appID>), each in the transaction that writes its record (a/),
// under the application's lock (the schema 5 migration writes heads at
// open, before anything reads them; TamperWithActivity, for tests, takes
// the lock and drops the application from the cache). So a transaction
// that finds the
// record at the version a head was known for finds that head: an update
// whose group checks the record's version needs no read of the head
// (UpdateApplication).
type logHead struct {
	head  *onboarding.ActivityHead // shared: never changed once made
	known bool
}

// appendActivityAfter is appendActivity from head, which is read in txn
// when not known; it answers the log's head after the append (head itself
// when log is empty).
func (s *Store) appendActivityAfter(txn *badger.Txn, subject uuid.UUID, head logHead, log []onboarding.Activity) (logHead, error) {
	if len(log) == 0 {
		return head, nil
	}
	if !head.known {
		h, err := activityHead(txn, subject)
		if err != nil {
			return logHead{}, err
		}
		head = logHead{head: h, known: true}
	}
	prev, last := onboarding.ActivityChainStart(subject.String()), ulid.ULID{}
	if head.head != nil {
		prev, last = head.head.Hash, head.head.Seq
	}
	for i := range log {
		e := onboarding.LoggedActivity{Seq: s.nextULID(log[i].At), Activity: log[i], Prev: prev}
		if e.Seq.Compare(last) <= 0 {
			e.Seq = successor(last)
		}
		e.Hash = onboarding.ActivityHash(prev, &e)
		if err := setRecord(txn, activityKey(subject, e.Seq), &storedActivity{Activity: e.Activity, Prev: e.Prev, Hash: e.Hash}); err != nil {
			return logHead{}, err
		}
		prev, last = e.Hash, e.Seq
	}
	next := &onboarding.ActivityHead{Seq: last, Hash: prev}
	h, err := encodeHead(*next)
	if err != nil {
		return logHead{}, err
	}
	return logHead{head: next, known: true}, txn.Set(activityHeadKey(subject), h)
}

// successor is the ULID just above u.
func successor(u ulid.ULID) ulid.ULID {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]++
		if u[i] != 0 {
			break
		}
	}
	return u
}

// loggedActivity decodes the v/ entry at key with value b.
func loggedActivity(key, b []byte) (onboarding.LoggedActivity, error) {
	var st storedActivity
	if len(key) != len(prefixActivity)+16+16 {
		return onboarding.LoggedActivity{}, fmt.Errorf("activity entry %x: malformed key", key)
	}
	if err := record.Decode(b, &st); err != nil {
		return onboarding.LoggedActivity{}, fmt.Errorf("activity entry %x: %w", key, err)
	}
	return onboarding.LoggedActivity{Seq: ulid.ULID(key[len(key)-16:]), Activity: st.Activity, Prev: st.Prev, Hash: st.Hash}, nil
}

// ActivityAfter returns up to limit entries of the subject's log after
// after (zero: from the first), oldest first; it reads limit+1 entries at
// most, so its cost does not grow with the log.
func (s *Store) ActivityAfter(_ context.Context, subjectID string, after ulid.ULID, limit int) ([]onboarding.LoggedActivity, bool, error) {
	u, err := parseAppID(subjectID)
	if err != nil {
		return nil, false, err
	}
	o := scanOpts{prefetch: min(max(limit+1, 1), 100)}
	if after != (ulid.ULID{}) {
		o.after = activityKey(u, after)
	}
	page := make([]onboarding.LoggedActivity, 0, max(limit, 0))
	more := false
	err = s.view(func(txn *badger.Txn) error {
		for item := range scanPrefix(txn, activityPrefix(u), o) {
			if len(page) == limit {
				more = true
				return nil
			}
			var e onboarding.LoggedActivity
			if err := item.Value(func(b []byte) error {
				var err error
				e, err = loggedActivity(item.Key(), b)
				return err
			}); err != nil {
				return err
			}
			page = append(page, e)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return page, more, nil
}

// ActivityLog reads the subject's head and entries from one read
// transaction (one snapshot) and hands them to walk; the entries are
// decoded one at a time as walk ranges over them.
func (s *Store) ActivityLog(_ context.Context, subjectID string, walk func(*onboarding.ActivityHead, iter.Seq2[*onboarding.LoggedActivity, error]) error) error {
	u, err := parseAppID(subjectID)
	if err != nil {
		return err
	}
	return s.view(func(txn *badger.Txn) error {
		head, err := activityHead(txn, u)
		if err != nil {
			return err
		}
		entries := func(yield func(*onboarding.LoggedActivity, error) bool) {
			for item := range scanPrefix(txn, activityPrefix(u), scanOpts{}) {
				var e onboarding.LoggedActivity
				err := item.Value(func(b []byte) error {
					var err error
					e, err = loggedActivity(item.Key(), b)
					return err
				})
				if !yield(&e, err) || err != nil {
					return
				}
			}
		}
		return walk(head, entries)
	})
}
