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

// SaveResponse saves record (JSON) for an idempotency key of the API key
// clientID; Badger drops it after ttl.
func (s *Store) SaveResponse(ctx context.Context, clientID, key string, record json.RawMessage, ttl time.Duration) error {
	b, err := encode(record)
	if err != nil {
		return err
	}
	return s.update(ctx, func(txn *badger.Txn) error {
		return txn.SetEntry(badger.NewEntry(idempotencyKey(clientID, key), b).WithTTL(ttl))
	})
}
