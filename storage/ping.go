package storage

import (
	"context"
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// errClosed is the answer of Ping and of updates once the Store is closed.
var errClosed = errors.New("the store is closed")

// CompactionDue reports whether a level of the database is due for
// compaction (Badger compacts one whose adjusted score is 1 or more).
// onboard bench waits until none is before it measures an operation, so
// that the operation is not measured against the compaction of what the
// one before it wrote.
func (s *Store) CompactionDue() bool {
	for _, l := range s.db.Levels() {
		if l.Adjusted >= 1 {
			return true
		}
	}
	return false
}

// Ping reports whether the Store is open and answers a read: the check of
// GET /readyz. It reads one small key, the schema version.
func (s *Store) Ping(ctx context.Context) error {
	if s.db.IsClosed() {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.view(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte(keySchema))
		return err
	})
	if errors.Is(err, badger.ErrDBClosed) {
		return errClosed
	}
	return err
}
