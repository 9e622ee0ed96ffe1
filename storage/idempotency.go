package storage

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// SavedResponse returns the record saved for an idempotency key of the API
// key clientID, as the JSON the server saved, or onboarding.ErrNotFound.
func (s *Store) SavedResponse(_ context.Context, clientID, key string) (json.RawMessage, error) {
	var r json.RawMessage
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, idempotencyKey(clientID, key), &r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// SaveResponse starts saving record (JSON) for an idempotency key of the
// API key clientID, which Badger drops after ttl, and returns without
// waiting for the commit: done gets its outcome, once the commit is synced
// or failed (at once when the record cannot be written at all). The write
// reads nothing, so it cannot conflict.
func (s *Store) SaveResponse(clientID, key string, record json.RawMessage, ttl time.Duration, done func(error)) {
	b, err := encode(record)
	if err != nil {
		done(err)
		return
	}
	txn := s.db.NewTransaction(true)
	if err := txn.SetEntry(badger.NewEntry(idempotencyKey(clientID, key), b).WithTTL(ttl)); err != nil {
		txn.Discard()
		done(err)
		return
	}
	txn.CommitWith(func(err error) { done(translateConflict(err)) })
}
