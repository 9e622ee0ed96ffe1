package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/record"
)

// endpointIndex holds the ids of each organization's webhook endpoints in
// memory, mirroring the organization endpoint index in the database.
//
// Every event a write stores is queued, in the same transaction, for the
// endpoints of its organization that want it. Finding them through the
// index keys would take an iterator, and an iterator in a write
// transaction sorts every write the transaction holds so far: in a group
// commit, serial work that grows with the group.
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
	// decoded holds the endpoint last decoded from each indexed id's
	// record (decode), for the events of the next write.
	decoded map[string]decodedEndpoint
}

// decodedEndpoint is an endpoint record and the endpoint decoded from it.
type decodedEndpoint struct {
	rec []byte
	ep  *onboarding.Endpoint
}

// loadEndpointIndex reads the organization endpoint index of the database.
func loadEndpointIndex(db *badger.DB) (*endpointIndex, error) {
	x := &endpointIndex{byOrg: map[string][]string{}, decoded: map[string]decodedEndpoint{}}
	err := db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixOrgEndpointIndex)
		for item := range scanPrefix(txn, prefix, scanOpts{keysOnly: true}) {
			rest := item.Key()[len(prefix):]
			i := slices.Index(rest, sep)
			if i < 0 {
				return fmt.Errorf("organization endpoint index: malformed key %q", item.Key())
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
	delete(x.decoded, id)
}

// decode returns the endpoint that rec, the record of endpoint id of org,
// holds: the one decoded from it last time when rec has not changed since,
// a new one otherwise (kept for next time while id is indexed). Comparing
// the bytes is all it takes to know a record unchanged, whichever
// transaction reads it, its own writes included.
//
// Every create and decision queues its events for its organization's
// endpoints inside the group commit's one goroutine, where decoding their
// records every time would be a large share of that serial work.
//
// The endpoint is shared with every other caller: none may change it.
func (x *endpointIndex) decode(org, id string, rec []byte) (*onboarding.Endpoint, error) {
	x.mu.RLock()
	d, ok := x.decoded[id]
	x.mu.RUnlock()
	if ok && bytes.Equal(d.rec, rec) {
		return d.ep, nil
	}
	ep := new(onboarding.Endpoint)
	if err := record.Decode(rec, ep); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, indexed := slices.BinarySearch(x.byOrg[org], id); indexed {
		x.decoded[id] = decodedEndpoint{rec: bytes.Clone(rec), ep: ep}
	}
	return ep, nil
}

// orgEndpoints reads org's endpoints in txn, in id order: the record of
// each id of the endpoint index that txn sees. With none it reads
// nothing. The endpoints are shared (decode): callers must not change
// them.
func (s *Store) orgEndpoints(txn *badger.Txn, org string) ([]*onboarding.Endpoint, error) {
	return s.readOrgEndpoints(txn, org, s.endpoints.decode)
}

// orgEndpointsCopy is orgEndpoints for a caller that may change what it
// gets: each endpoint is decoded anew.
func (s *Store) orgEndpointsCopy(txn *badger.Txn, org string) ([]*onboarding.Endpoint, error) {
	return s.readOrgEndpoints(txn, org, func(_, _ string, rec []byte) (*onboarding.Endpoint, error) {
		ep := new(onboarding.Endpoint)
		return ep, record.Decode(rec, ep)
	})
}

// readOrgEndpoints is orgEndpoints with the endpoints made from their
// records by decodeRecord.
func (s *Store) readOrgEndpoints(txn *badger.Txn, org string, decodeRecord func(org, id string, rec []byte) (*onboarding.Endpoint, error)) ([]*onboarding.Endpoint, error) {
	var out []*onboarding.Endpoint
	for _, id := range s.endpoints.ids(org) {
		item, err := txn.Get(endpointKey(id))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			// Created by a transaction not committed (or failed), or
			// deleted by one that has: not an endpoint of txn's.
			continue
		case err != nil:
			return nil, fmt.Errorf("endpoint %s: %w", id, err)
		}
		var ep *onboarding.Endpoint
		if err := item.Value(func(rec []byte) (err error) {
			ep, err = decodeRecord(org, id, rec)
			return err
		}); err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", id, err)
		}
		out = append(out, ep)
	}
	return out, nil
}
