package storage

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// endpointIndex holds the ids of each organization's webhook endpoints in
// memory, mirroring the organization endpoint index in the database.
//
// Every event a write stores is queued, in the same transaction, for the
// endpoints of its organization that want it. Finding them through the
// index keys took an iterator, and an iterator in a write transaction
// sorts every write the transaction holds so far: in a group commit that
// was 18 µs of each decision's share of the group's serial work, growing
// with the group.
//
// It holds a superset of the committed endpoints: an id is added before
// the transaction that creates the endpoint commits (and stays if that
// transaction fails) and removed only after the one that deletes it has
// committed. Readers read each endpoint's record in their own transaction
// and skip an id whose record their snapshot lacks, so they see what the
// index keys would show them; reading the record also puts its key in the
// transaction's reads, so a transaction that raced with the endpoint's
// creation or deletion conflicts and runs again (an iterator's reads
// never covered the keys it did not find).
type endpointIndex struct {
	mu sync.RWMutex
	// byOrg holds each organization's ids in id order (creation order).
	// A slice is never changed once stored: add and remove store new
	// ones, so a reader may range over what ids returned without the lock.
	byOrg map[string][]string
}

// loadEndpointIndex reads the organization endpoint index of the database.
func loadEndpointIndex(db *badger.DB) (*endpointIndex, error) {
	x := &endpointIndex{byOrg: map[string][]string{}}
	err := db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixOrgEndpointIndex)
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = prefix, false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			rest := it.Item().Key()[len(prefix):]
			i := slices.Index(rest, sep)
			if i < 0 {
				return fmt.Errorf("organization endpoint index: malformed key %q", it.Item().Key())
			}
			org, id := string(rest[:i]), string(rest[i+1:])
			x.byOrg[org] = append(x.byOrg[org], id) // keys come in order
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load the endpoint index: %w", err)
	}
	return x, nil
}

// ids returns org's endpoint ids in id order; the caller must not change
// the slice.
func (x *endpointIndex) ids(org string) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.byOrg[org]
}

// add records endpoint id of org, if it is not recorded already.
func (x *endpointIndex) add(org, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.byOrg[org]
	i, found := slices.BinarySearch(old, id)
	if !found {
		x.byOrg[org] = slices.Insert(slices.Clone(old), i, id)
	}
}

// remove forgets endpoint id of org.
func (x *endpointIndex) remove(org, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.byOrg[org]
	i, found := slices.BinarySearch(old, id)
	switch {
	case !found:
	case len(old) == 1:
		delete(x.byOrg, org)
	default:
		x.byOrg[org] = slices.Delete(slices.Clone(old), i, i+1)
	}
}

// orgEndpoints reads org's endpoints in txn, in id order: the record of
// each id of the endpoint index that txn sees. With none it reads
// nothing.
func (s *Store) orgEndpoints(txn *badger.Txn, org string) ([]*onboarding.Endpoint, error) {
	var out []*onboarding.Endpoint
	for _, id := range s.endpoints.ids(org) {
		var ep onboarding.Endpoint
		switch err := getRecord(txn, endpointKey(id), &ep); {
		case errors.Is(err, onboarding.ErrNotFound):
			// Created by a transaction not committed (or failed), or
			// deleted by one that has: not an endpoint of txn's.
		case err != nil:
			return nil, fmt.Errorf("endpoint %s: %w", id, err)
		default:
			out = append(out, &ep)
		}
	}
	return out, nil
}
