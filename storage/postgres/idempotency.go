package postgres

import (
	"context"
	"encoding/json"
	"time"

	"onboard/onboarding"
	"onboard/storage/record"
)

// saveIdempotentSQL saves a record under an idempotency key ($1 client
// id, $2 key, $3 record, $4 expiry), replacing what was there.
const saveIdempotentSQL = `INSERT INTO idempotency (client_id, key, record, expires_at) VALUES ($1, $2, $3, $4)
	ON CONFLICT (client_id, key) DO UPDATE SET record = excluded.record, expires_at = excluded.expires_at`

// SavedResponse returns the record saved for an idempotency key of the API
// key clientID, as the JSON the server saved or, before it saved one, the
// onboarding.IdempotentOutcome a write committed (changeWrite.queue); or
// onboarding.ErrNotFound, also once the record has expired.
func (s *Store) SavedResponse(ctx context.Context, clientID, key string) (json.RawMessage, error) {
	if !textKey(clientID) || !textKey(key) {
		return nil, onboarding.ErrNotFound
	}
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM idempotency WHERE client_id = $1 AND key = $2 AND expires_at > $3`,
		clientID, key, s.now()).Scan(&b)
	if err != nil {
		return nil, notFound(err)
	}
	var r json.RawMessage
	if err := record.Decode(b, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// SaveResponse starts saving response (JSON) for an idempotency key of the
// API key clientID, to expire after ttl, and returns without waiting for
// the commit: done gets its outcome, from another goroutine, once the
// commit is durable or failed (at once when the record cannot be encoded
// or the Store is closed). Close waits for the saves under way.
func (s *Store) SaveResponse(clientID, key string, response json.RawMessage, ttl time.Duration, done func(error)) {
	b, err := record.Encode(response)
	if err != nil {
		done(err)
		return
	}
	expires := s.now().Add(ttl)
	s.closing.RLock()
	defer s.closing.RUnlock()
	if s.closed {
		done(errClosed)
		return
	}
	s.background.Go(func() {
		_, err := s.pool.Exec(context.Background(), saveIdempotentSQL, clientID, key, b, expires)
		done(err)
	})
}
