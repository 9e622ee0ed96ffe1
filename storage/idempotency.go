package storage

import (
	"context"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// IdempotentResponse returns the saved response for an idempotency key, or
// onboarding.ErrNotFound.
func (s *Store) IdempotentResponse(_ context.Context, clientID, key string) (*onboarding.IdempotentResponse, error) {
	var r onboarding.IdempotentResponse
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, idempotencyKey(clientID, key), &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}

// SaveIdempotentResponse saves r; Badger drops it after ttl.
func (s *Store) SaveIdempotentResponse(ctx context.Context, clientID, key string, r *onboarding.IdempotentResponse, ttl time.Duration) error {
	b, err := encode(r)
	if err != nil {
		return err
	}
	return s.update(ctx, func(txn *badger.Txn) error {
		return txn.SetEntry(badger.NewEntry(idempotencyKey(clientID, key), b).WithTTL(ttl))
	})
}
