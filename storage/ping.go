package storage

import (
	"context"
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// errClosed is the answer of Ping and of updates once the Store is closed.
var errClosed = errors.New("the store is closed")

// Ping reports whether the Store is open and answers a read: the check of
// GET /readyz. It reads one small key, the schema version.
func (s *Store) Ping(ctx context.Context) error {
	if s.closing.Load() {
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
