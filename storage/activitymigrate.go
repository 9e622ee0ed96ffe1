package storage

import (
	"bytes"
	"context"
	"errors"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// migrationBytes bounds the values one transaction of chainActivityLogs
// rewrites, beside migrationBatch, so that a batch of long entries stays
// within Badger's transaction size limit too.
const migrationBytes = 1 << 20

// chainState is where chainActivityLogs is in the v/ family: the last key
// it read, and the chain of the log it is in.
type chainState struct {
	after   []byte    // the last key read; nil before the first
	subject uuid.UUID // the log being chained; valid when inLog
	inLog   bool
	prev    string    // the hash of the log's last entry read (its start before any)
	last    ulid.ULID // the log's last entry read
}

// chainActivityLogs gives every stored activity entry its link in its
// log's hash chain and every log its head (schema 4 → 5). It walks v/ in
// key order, at most migrationBatch entries (and migrationBytes of them)
// per transaction, carrying the chain from one transaction to the next.
// An entry whose stored link is already right is not rewritten, nor a
// head that is, so running it again after a crash redoes reads only.
func (s *Store) chainActivityLogs(ctx context.Context) error {
	var st chainState
	for {
		var next chainState
		done := false
		err := s.update(ctx, func(txn *badger.Txn) error {
			next = st
			var err error
			done, err = chainBatch(txn, &next)
			return err
		})
		if err != nil {
			return err
		}
		st = next
		if done {
			return nil
		}
	}
}

// chainBatch chains the next batch of entries after st.after in txn,
// advancing st; done reports that the family is finished.
func chainBatch(txn *badger.Txn, st *chainState) (done bool, err error) {
	type entry struct{ key, value []byte }
	prefix := []byte(prefixActivity)
	var batch []entry
	size := 0
	done = true
	for item := range scanPrefix(txn, prefix, scanOpts{after: st.after}) {
		if len(batch) >= migrationBatch || size >= migrationBytes {
			done = false
			break
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return false, err
		}
		batch = append(batch, entry{item.KeyCopy(nil), v})
		size += len(v)
	}
	for _, b := range batch {
		e, err := loggedActivity(b.key, b.value)
		if err != nil {
			return false, err
		}
		subject := uuid.UUID(b.key[len(prefix) : len(prefix)+16])
		if !st.inLog || subject != st.subject {
			if err := st.finishLog(txn); err != nil {
				return false, err
			}
			st.subject, st.inLog = subject, true
			st.prev, st.last = onboarding.ActivityChainStart(subject.String()), ulid.ULID{}
		}
		hash := onboarding.ActivityHash(st.prev, &e)
		if e.Prev != st.prev || e.Hash != hash {
			if err := setRecord(txn, b.key, &storedActivity{Activity: e.Activity, Prev: st.prev, Hash: hash}); err != nil {
				return false, err
			}
		}
		st.prev, st.last, st.after = hash, e.Seq, b.key
	}
	if done {
		return true, st.finishLog(txn)
	}
	return false, nil
}

// finishLog writes the head of the log st has chained, unless it is there
// already; nothing when st is in no log.
func (st *chainState) finishLog(txn *badger.Txn) error {
	if !st.inLog {
		return nil
	}
	want, err := encodeHead(onboarding.ActivityHead{Seq: st.last, Hash: st.prev})
	if err != nil {
		return err
	}
	key := activityHeadKey(st.subject)
	item, err := txn.Get(key)
	switch {
	case err == nil:
		if have, err := item.ValueCopy(nil); err != nil || bytes.Equal(have, want) {
			return err
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		return err
	}
	return txn.Set(key, want)
}
