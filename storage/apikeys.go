package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/record"
)

// CreateAPIKey stores a new key and its organization index entry.
func (s *Store) CreateAPIKey(ctx context.Context, k *onboarding.APIKey) error {
	rec, err := record.Encode(k)
	if err != nil {
		return err
	}
	return s.update(ctx, func(txn *badger.Txn) error {
		key := apiKeyKey(k.ClientID)
		if _, err := txn.Get(key); err == nil {
			return fmt.Errorf("create api key %s: %w", k.ClientID, errDuplicate)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := txn.Set(key, rec); err != nil {
			return err
		}
		return txn.Set(orgKeyIndexKey(k.OrgID, k.ClientID), nil)
	})
}

// APIKey returns the key with clientID, or onboarding.ErrNotFound.
func (s *Store) APIKey(_ context.Context, clientID string) (*onboarding.APIKey, error) {
	var k onboarding.APIKey
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, apiKeyKey(clientID), &k) }); err != nil {
		return nil, err
	}
	return &k, nil
}

// APIKeys returns the keys of orgID (all keys when orgID is empty), oldest first.
func (s *Store) APIKeys(_ context.Context, orgID string) ([]*onboarding.APIKey, error) {
	var out []*onboarding.APIKey
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte(prefixKey)
		if orgID != "" {
			prefix = orgKeyIndexPrefix(orgID)
		}
		for item := range scanPrefix(txn, prefix, scanOpts{keysOnly: orgID != ""}) {
			var k onboarding.APIKey
			if orgID == "" {
				if err := item.Value(func(b []byte) error { return record.Decode(b, &k) }); err != nil {
					return err
				}
			} else {
				clientID := string(item.Key()[len(prefix):])
				if err := getRecord(txn, apiKeyKey(clientID), &k); err != nil {
					return fmt.Errorf("key index → %s: %w", clientID, err)
				}
			}
			out = append(out, &k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b *onboarding.APIKey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// UpdateAPIKey applies change to the stored key in one transaction.
func (s *Store) UpdateAPIKey(ctx context.Context, clientID string, change func(*onboarding.APIKey) error) (*onboarding.APIKey, error) {
	var result onboarding.APIKey
	err := s.update(ctx, func(txn *badger.Txn) error {
		var k onboarding.APIKey
		if err := getRecord(txn, apiKeyKey(clientID), &k); err != nil {
			return err
		}
		if err := change(&k); err != nil {
			return err
		}
		if k.ClientID != clientID {
			return fmt.Errorf("update api key %s: the client id is immutable", clientID)
		}
		result = k
		return setRecord(txn, apiKeyKey(clientID), &k)
	})
	if err != nil {
		return nil, err
	}
	return &result, nil
}
