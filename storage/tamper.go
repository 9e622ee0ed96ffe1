package storage

import (
	"context"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// TamperWithActivity rewrites the subject's stored activity log behind the
// hash chain's back, as someone with write access to the data directory
// could: edit gets the log's head (nil when it has none) and its entries,
// oldest first, and returns what to store instead. Entries are stored
// exactly as returned, under their Seq, with their Prev and Hash (nothing
// is recomputed), and the head as returned (nil: none). It exists for the
// tests of `onboard apps verify-log`, which must detect every such change;
// onboard itself never calls it. It holds the subject's application lock
// and drops the subject from the cache of applications, whose entries
// know their log's head (logHead), so that the next update chains after
// the head stored here.
func (s *Store) TamperWithActivity(ctx context.Context, subjectID string,
	edit func(head *onboarding.ActivityHead, log []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity)) error {
	u, err := parseAppID(subjectID)
	if err != nil {
		return err
	}
	lock := s.appLock(u)
	lock.Lock()
	defer lock.Unlock()
	defer s.apps.forget(u)
	return s.update(ctx, func(txn *badger.Txn) error {
		head, err := activityHead(txn, u)
		if err != nil {
			return err
		}
		var log []onboarding.LoggedActivity
		for item := range scanPrefix(txn, activityPrefix(u), scanOpts{}) {
			if err := item.Value(func(b []byte) error {
				e, err := loggedActivity(item.Key(), b)
				log = append(log, e)
				return err
			}); err != nil {
				return err
			}
		}
		for _, e := range log {
			if err := txn.Delete(activityKey(u, e.Seq)); err != nil {
				return err
			}
		}
		head, log = edit(head, log)
		for _, e := range log {
			if err := setRecord(txn, activityKey(u, e.Seq), &storedActivity{Activity: e.Activity, Prev: e.Prev, Hash: e.Hash}); err != nil {
				return err
			}
		}
		if head == nil {
			return txn.Delete(activityHeadKey(u))
		}
		h, err := encodeHead(*head)
		if err != nil {
			return err
		}
		return txn.Set(activityHeadKey(u), h)
	})
}
