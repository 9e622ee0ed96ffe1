package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// CreateEndpoint stores a new endpoint and its organization index entry.
func (s *Store) CreateEndpoint(ctx context.Context, ep *onboarding.Endpoint) error {
	rec, err := encode(ep)
	if err != nil {
		return err
	}
	return s.update(ctx, func(txn *badger.Txn) error {
		key := endpointKey(ep.ID)
		if _, err := txn.Get(key); err == nil {
			return fmt.Errorf("create endpoint %s: %w", ep.ID, errDuplicate)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := txn.Set(key, rec); err != nil {
			return err
		}
		return txn.Set(orgEndpointKey(ep.OrgID, ep.ID), nil)
	})
}

// Endpoint returns the endpoint with id, or onboarding.ErrNotFound.
func (s *Store) Endpoint(_ context.Context, id string) (*onboarding.Endpoint, error) {
	var ep onboarding.Endpoint
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, endpointKey(id), &ep) }); err != nil {
		return nil, err
	}
	return &ep, nil
}

// Endpoints returns orgID's endpoints (every endpoint when orgID is empty),
// oldest first: in id order, which is creation order for ULID-based ids.
func (s *Store) Endpoints(_ context.Context, orgID string) ([]*onboarding.Endpoint, error) {
	var out []*onboarding.Endpoint
	err := s.view(func(txn *badger.Txn) error {
		var err error
		if orgID != "" {
			out, err = orgEndpoints(txn, orgID)
			return err
		}
		prefix := []byte(prefixEndpoint)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			var ep onboarding.Endpoint
			if err := it.Item().Value(func(b []byte) error { return decode(b, &ep) }); err != nil {
				return err
			}
			out = append(out, &ep)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// orgEndpoints reads org's endpoints through its index, in id order. With
// none it costs one seek.
func orgEndpoints(txn *badger.Txn, org string) ([]*onboarding.Endpoint, error) {
	prefix := orgEndpointPrefix(org)
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	opts.PrefetchValues = false
	it := txn.NewIterator(opts)
	defer it.Close()
	var out []*onboarding.Endpoint
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		id := string(it.Item().Key()[len(prefix):])
		var ep onboarding.Endpoint
		if err := getRecord(txn, endpointKey(id), &ep); err != nil {
			return nil, fmt.Errorf("endpoint index → %s: %w", id, err)
		}
		out = append(out, &ep)
	}
	return out, nil
}

// UpdateEndpoint applies change to the stored endpoint in one transaction.
// When the change disables an enabled endpoint, its queued deliveries are
// dropped, each with a log line saying why: in the same transaction, or,
// beyond dropBatch of them, in the transactions that follow it before
// UpdateEndpoint returns.
func (s *Store) UpdateEndpoint(ctx context.Context, id string, change func(*onboarding.Endpoint) error) (*onboarding.Endpoint, error) {
	var result onboarding.Endpoint
	more := false
	err := s.update(ctx, func(txn *badger.Txn) error {
		var ep onboarding.Endpoint
		if err := getRecord(txn, endpointKey(id), &ep); err != nil {
			return err
		}
		wasEnabled, org := ep.Enabled, ep.OrgID
		if err := change(&ep); err != nil {
			return err
		}
		if ep.ID != id || ep.OrgID != org {
			return fmt.Errorf("update endpoint %s: id and organization are immutable", id)
		}
		if err := setRecord(txn, endpointKey(id), &ep); err != nil {
			return err
		}
		result, more = ep, false
		if wasEnabled && !ep.Enabled {
			var err error
			more, err = s.dropEndpointQueue(txn, &ep, true, s.now())
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if more {
		if err := s.drainEndpointQueue(ctx, id); err != nil {
			return nil, err
		}
	}
	return &result, nil
}

// DeleteEndpoint removes the endpoint, its index entry and its queued
// deliveries (beyond dropBatch of them, in the transactions that follow
// before it returns). Its delivery log lines stay until they expire.
func (s *Store) DeleteEndpoint(ctx context.Context, id string) error {
	more := false
	err := s.update(ctx, func(txn *badger.Txn) error {
		var ep onboarding.Endpoint
		if err := getRecord(txn, endpointKey(id), &ep); err != nil {
			return err
		}
		if err := txn.Delete(endpointKey(id)); err != nil {
			return err
		}
		if err := txn.Delete(orgEndpointKey(ep.OrgID, id)); err != nil {
			return err
		}
		var err error
		more, err = s.dropEndpointQueue(txn, &ep, false, s.now())
		return err
	})
	if err != nil || !more {
		return err
	}
	return s.drainEndpointQueue(ctx, id)
}

// drainEndpointQueue drops the rest of the queue of an endpoint that was
// disabled (with log lines) or deleted (without), a batch per transaction,
// until it is empty or the endpoint is enabled again.
func (s *Store) drainEndpointQueue(ctx context.Context, id string) error {
	for more := true; more; {
		err := s.update(ctx, func(txn *badger.Txn) error {
			var ep onboarding.Endpoint
			err := getRecord(txn, endpointKey(id), &ep)
			switch {
			case errors.Is(err, onboarding.ErrNotFound):
				ep.ID = id
				more, err = s.dropEndpointQueue(txn, &ep, false, s.now())
				return err
			case err != nil:
				return err
			case ep.Enabled:
				more = false
				return nil
			}
			more, err = s.dropEndpointQueue(txn, &ep, true, s.now())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
