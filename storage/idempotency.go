package storage

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/record"
)

// SavedResponse returns the record saved for an idempotency key of the API
// key clientID, as the JSON the server saved or, before it saved one, the
// onboarding.IdempotentOutcome a write committed (writeOutcome); or
// onboarding.ErrNotFound.
func (s *Store) SavedResponse(_ context.Context, clientID, key string) (json.RawMessage, error) {
	var r json.RawMessage
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, idempotencyKey(clientID, key), &r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// SaveResponse starts saving response (JSON) for an idempotency key of the
// API key clientID, which Badger drops after ttl, and returns without
// waiting for the commit: done gets its outcome, once the commit is synced
// or failed (at once when the record cannot be written at all). The write
// reads nothing, so it cannot conflict.
func (s *Store) SaveResponse(clientID, key string, response json.RawMessage, ttl time.Duration, done func(error)) {
	b, err := record.Encode(response)
	if err != nil {
		done(err)
		return
	}
	s.rlockDB()
	defer s.dbMu.RUnlock()
	txn := s.db.NewTransaction(true)
	if err := txn.SetEntry(badger.NewEntry(idempotencyKey(clientID, key), b).WithTTL(ttl)); err != nil {
		txn.Discard()
		done(err)
		return
	}
	txn.CommitWith(func(err error) { done(translateConflict(err)) })
}

// outcomeWrite is the outcome of a request with an Idempotency-Key,
// encoded beforehand, for writeOutcome.
type outcomeWrite struct {
	key, rec []byte
}

// encodeOutcome encodes o for writeOutcome; nil (nothing to write) for a
// nil o.
func encodeOutcome(o *onboarding.IdempotentOutcome) (*outcomeWrite, error) {
	if o == nil {
		return nil, nil
	}
	rec, err := record.Encode(o)
	if err != nil {
		return nil, err
	}
	return &outcomeWrite{key: idempotencyKey(o.ClientID, o.Key), rec: rec}, nil
}

// writeOutcome writes w, if any, in txn, the transaction that does the
// work: it replaces what was saved for its key and expires, as a saved
// response does, after onboarding.IdempotencyTTL. Like SaveResponse, it
// reads nothing and so adds no conflict.
func writeOutcome(txn *badger.Txn, w *outcomeWrite) error {
	if w == nil {
		return nil
	}
	return txn.SetEntry(badger.NewEntry(w.key, w.rec).WithTTL(onboarding.IdempotencyTTL))
}
