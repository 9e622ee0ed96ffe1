package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// API keys (0002_records.sql: api_keys).

// CreateAPIKey stores a new key; a client id already stored is
// errDuplicate.
func (s *Store) CreateAPIKey(ctx context.Context, k *onboarding.APIKey) error {
	rec, err := record.Encode(k)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO api_keys (client_id, org_id, record) VALUES ($1, $2, $3)`, k.ClientID, k.OrgID, rec)
	return duplicate("create api key "+k.ClientID, err)
}

// APIKey returns the key with clientID, or onboarding.ErrNotFound.
func (s *Store) APIKey(ctx context.Context, clientID string) (*onboarding.APIKey, error) {
	if !textKey(clientID) {
		return nil, onboarding.ErrNotFound
	}
	return queryRecord[onboarding.APIKey](ctx, s.pool, `SELECT record FROM api_keys WHERE client_id = $1`, clientID)
}

// APIKeys returns the keys of orgID (all keys when orgID is empty), oldest
// first, keys created at the same time in client id order.
func (s *Store) APIKeys(ctx context.Context, orgID string) ([]*onboarding.APIKey, error) {
	sql, args := `SELECT record FROM api_keys ORDER BY client_id`, []any(nil)
	if orgID != "" {
		sql, args = `SELECT record FROM api_keys WHERE org_id = $1 ORDER BY org_id, client_id`, []any{orgID}
	}
	keys, _, err := queryRecords[onboarding.APIKey](ctx, s.pool, -1, sql, args...)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(keys, func(a, b *onboarding.APIKey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	if len(keys) == 0 {
		return nil, nil
	}
	return keys, nil
}

// UpdateAPIKey applies change to the stored key in one transaction, which
// locks the key's row first.
func (s *Store) UpdateAPIKey(ctx context.Context, clientID string, change func(*onboarding.APIKey) error) (*onboarding.APIKey, error) {
	if !textKey(clientID) {
		return nil, onboarding.ErrNotFound
	}
	var rec []byte
	var result *onboarding.APIKey
	err := s.inBatchTx(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT record FROM api_keys WHERE client_id = $1 FOR UPDATE`, clientID).QueryRow(func(row pgx.Row) error {
			return notFound(row.Scan(&rec))
		})
	}, func(tx pgx.Tx) error {
		var k onboarding.APIKey
		if err := record.Decode(rec, &k); err != nil {
			return err
		}
		if err := change(&k); err != nil {
			return err
		}
		if k.ClientID != clientID {
			return fmt.Errorf("update api key %s: the client id is immutable", clientID)
		}
		b, err := record.Encode(&k)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET record = $2 WHERE client_id = $1`, clientID, b); err != nil {
			return err
		}
		result = &k
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}
