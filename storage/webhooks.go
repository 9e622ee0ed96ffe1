package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/record"
)

// CreateEndpoint stores a new endpoint and its organization index entry,
// in the database and in memory (endpointIndex).
func (s *Store) CreateEndpoint(ctx context.Context, ep *onboarding.Endpoint) error {
	rec, err := record.Encode(ep)
	if err != nil {
		return err
	}
	// Known before the commit (endpointIndex says why).
	s.endpoints.add(ep.OrgID, ep.ID)
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
			out, err = s.orgEndpointsCopy(txn, orgID)
			return err
		}
		for item := range scanPrefix(txn, []byte(prefixEndpoint), scanOpts{}) {
			var ep onboarding.Endpoint
			if err := item.Value(func(b []byte) error { return record.Decode(b, &ep) }); err != nil {
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

// UpdateEndpoint applies change to the stored endpoint in a transaction
// that reads and writes the endpoint's record only, so that it does not
// conflict with the deliveries being queued, claimed and finished meanwhile
// (a transaction that queues an event reads the record, so none queues for
// the endpoint after a change that disables it commits). When the endpoint
// is disabled after the change, what is queued for it is then dropped, each
// delivery with a log line saying why, a batch per transaction
// (drainEndpointQueue), before UpdateEndpoint returns. A change that enables
// a disabled endpoint first drops what its disabling left queued, so that
// enabling never resumes a delivery that disabling dropped: it commits only
// once the queue is empty.
func (s *Store) UpdateEndpoint(ctx context.Context, id string, change func(*onboarding.Endpoint) error) (*onboarding.Endpoint, error) {
	return onboarding.ChangeEndpointThenDrop(maxAttempts,
		func() (*onboarding.Endpoint, error) { return s.changeEndpoint(ctx, id, change) },
		func() error { return s.drainEndpointQueue(ctx, id, s.now()) })
}

// changeEndpoint is UpdateEndpoint's transaction: it applies change to the
// endpoint's record, and answers onboarding.ErrQueueLeft, committing
// nothing, when the change would enable it with deliveries still queued.
func (s *Store) changeEndpoint(ctx context.Context, id string, change func(*onboarding.Endpoint) error) (*onboarding.Endpoint, error) {
	var result onboarding.Endpoint
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
		if !wasEnabled && ep.Enabled {
			// While the endpoint is disabled nothing joins its queue, so an
			// empty queue stays empty until this commits.
			if hasQueue(txn, id) {
				return onboarding.ErrQueueLeft
			}
		}
		result = ep
		return setRecord(txn, endpointKey(id), &ep)
	})
	if err != nil {
		return nil, err
	}
	return &result, nil
}

// hasQueue reports whether any delivery is queued for the endpoint.
func hasQueue(txn *badger.Txn, endpointID string) bool {
	for range scanPrefix(txn, endpointQueuePrefix(endpointID), scanOpts{keysOnly: true, prefetch: 1}) {
		return true
	}
	return false
}

// DeleteEndpoint removes the endpoint and its index entry in a transaction
// that reads the endpoint's record only (see UpdateEndpoint), then drops
// its queued deliveries without log lines, a batch per transaction, before
// it returns. Its delivery log lines stay until they expire.
func (s *Store) DeleteEndpoint(ctx context.Context, id string) error {
	var org string
	err := s.update(ctx, func(txn *badger.Txn) error {
		var ep onboarding.Endpoint
		if err := getRecord(txn, endpointKey(id), &ep); err != nil {
			return err
		}
		if err := txn.Delete(endpointKey(id)); err != nil {
			return err
		}
		org = ep.OrgID
		return txn.Delete(orgEndpointKey(ep.OrgID, id))
	})
	if err != nil {
		return err
	}
	s.endpoints.remove(org, id) // only once the delete has committed
	return s.drainEndpointQueue(ctx, id, s.now())
}
