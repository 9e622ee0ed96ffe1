package storage

// Claiming deliveries: ClaimDeliveries and the walks of the per-endpoint
// due (xq/) and lease (xu/) spaces it is made of (the queue itself is in
// outbox.go, the floors in duefloor.go).

import (
	"context"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// ClaimDeliveries leases up to c.Limit queue heads to c.Owner in one
// transaction. It reads the endpoints (w/) and, for each enabled one with
// room under c.MaxInFlight, seeks its lapsed leases (xu/) and its due
// heads (xq/) up to c.Now from the Store's floors of those spaces
// (duefloor.go), up to its room and c.Limit; it then takes the candidates
// one per endpoint a round, earliest first within a round, until c.Limit,
// so that one endpoint's backlog never delays another's. A head taken
// moves to xu/ at its lease's end. The claim reads the record (w/) of each
// endpoint it leases from, so it never leases a delivery of an endpoint
// whose disabling or removal committed before it (queuedrop.go).
// Deliveries whose event expired are dropped with a log line, and what is
// left of a disabled endpoint's queue (a drain that failed or is still
// running) is dropped a batch at a time, logged, after the claim's
// transaction, in one of its own (dropLeftovers). next is the
// earliest entry left after the claim: a due head not taken, the end of a
// lease, or c.Now when the claim left work it could not see (zero when
// nothing is queued). Due entries an endpoint's cap held back are left out
// of it: the claimer learns when an attempt in flight to the endpoint ends,
// and claims again then.
func (s *Store) ClaimDeliveries(ctx context.Context, c onboarding.Claim) ([]*onboarding.Delivery, time.Time, error) {
	var claimed []*onboarding.Delivery
	var next time.Time
	// The floors are read before the transaction takes its snapshot; met
	// is the key of the first entry met in each space walked, and own the
	// earliest entries the claim writes (duefloor.go).
	floors, others := s.due.beginClaim()
	var met map[string][]byte
	var own dueWrites
	var disabled []*onboarding.Endpoint
	err := s.update(ctx, func(txn *badger.Txn) error {
		claimed, next, met, own = nil, time.Time{}, map[string][]byte{}, dueWrites{}
		unclaimed := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		// The indexes are read in a snapshot of their own, taken after
		// the floors were read, so that the leases and due entries a claim
		// looks at do not make it conflict with every finish; claimEntry
		// checks each candidate in the claim's own transaction.
		var queues [][]timedEntry
		err := s.view(func(vt *badger.Txn) error {
			queues, disabled = nil, nil
			eps, err := allEndpoints(vt)
			if err != nil {
				return err
			}
			for _, ep := range eps {
				leases, dues := indexSpace(prefixLeaseIndex, ep.ID), indexSpace(prefixDueIndex, ep.ID)
				if !ep.Enabled {
					l, lAfter, err := seekSpace(vt, floors, met, leases, c.Now, 0)
					if err != nil {
						return err
					}
					d, dAfter, err := seekSpace(vt, floors, met, dues, c.Now, 0)
					if err != nil {
						return err
					}
					if len(l)+len(d) > 0 || !lAfter.IsZero() || !dAfter.IsZero() {
						disabled = append(disabled, ep)
					}
					continue
				}
				room, capped := max(c.Limit, 0), false
				if c.MaxInFlight != nil {
					if r := c.MaxInFlight(ep.ID) - c.InFlight[ep.ID]; r < room {
						room, capped = max(r, 0), true
					}
				}
				// left notes the entry after a walk's last taken, unless it
				// is due and held back by the endpoint's cap.
				left := func(at time.Time) {
					if !at.IsZero() && (!capped || at.After(c.Now)) {
						unclaimed(at)
					}
				}
				lapsed, after, err := seekSpace(vt, floors, met, leases, c.Now, room)
				if err != nil {
					return err
				}
				left(after)
				due, after, err := seekSpace(vt, floors, met, dues, c.Now, room-len(lapsed))
				if err != nil {
					return err
				}
				left(after)
				q := append(lapsed, due...)
				sort.SliceStable(q, func(i, j int) bool { return q[i].at.Before(q[j].at) })
				for i := range q {
					q[i].ep = ep
				}
				if len(q) > 0 {
					queues = append(queues, q)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, q := range queues {
			// Reading the endpoint's record makes the claim conflict with a
			// change of the endpoint that commits meanwhile (disabling or
			// removing it above all), so that what it leases is leased
			// under the endpoint as the view read it.
			if _, err := txn.Get(endpointKey(q[0].ep.ID)); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
		}
		for round := 0; ; round++ {
			var batch []timedEntry
			for _, q := range queues {
				if round < len(q) {
					batch = append(batch, q[round])
				}
			}
			if len(batch) == 0 {
				break
			}
			sort.SliceStable(batch, func(i, j int) bool { return batch[i].at.Before(batch[j].at) })
			for _, te := range batch {
				if len(claimed) >= c.Limit {
					unclaimed(te.at)
					continue
				}
				d, err := s.claimEntry(txn, c, te, &own)
				if err != nil {
					return err
				}
				if d == nil {
					// Dropped, or the index was stale: what it hid from
					// this claim's look-ahead waits for the next.
					unclaimed(c.Now)
					continue
				}
				unclaimed(d.LeaseUntil)
				claimed = append(claimed, d)
			}
		}
		return nil
	})
	s.due.endClaim(others, err == nil, met, own)
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(disabled) > 0 && s.dropLeftovers(disabled, c.Now) && (next.IsZero() || c.Now.Before(next)) {
		next = c.Now
	}
	return claimed, next, nil
}

// timedEntry is an entry of xq/ or xu/ that a claim may take.
type timedEntry struct {
	entry, key []byte // the index entry and the q/ key it names
	at         time.Time
	ep         *onboarding.Endpoint
}

// seekSpace walks space (indexSpace) from its floor in floors, returning up
// to want entries at now or earlier and the time of the entry after them
// (zero: none). It notes in met the key of the first entry it met, or,
// meeting none, the space's end (duefloor.go).
func seekSpace(txn *badger.Txn, floors, met map[string][]byte, space []byte, now time.Time, want int) ([]timedEntry, time.Time, error) {
	from, ok := floors[string(space)]
	if !ok {
		from = space
	}
	met[string(space)] = floorKey(space, math.MaxUint64)
	var taken []timedEntry
	first := true
	for item := range scanPrefix(txn, space, scanOpts{from: from, keysOnly: true}) {
		k := item.KeyCopy(nil)
		at, key, err := parseTimedKey(space, k)
		if err != nil {
			return nil, time.Time{}, err
		}
		if first {
			met[string(space)], first = k, false
		}
		if len(taken) >= want || at.After(now) {
			return taken, at, nil
		}
		taken = append(taken, timedEntry{entry: k, key: key, at: at})
	}
	return taken, time.Time{}, nil
}

// claimEntry leases the head that te names to c.Owner, moving its entry to
// xu/, and returns it; nil when te is no longer in the index, when its
// event expired (the delivery is dropped with a log line and the next of
// its subject promoted) or when te names no delivery (te is deleted).
func (s *Store) claimEntry(txn *badger.Txn, c onboarding.Claim, te timedEntry, own *dueWrites) (*onboarding.Delivery, error) {
	if _, err := txn.Get(te.entry); errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil // taken or moved since the indexes' snapshot
	} else if err != nil {
		return nil, err
	}
	var q queuedDelivery
	if err := getRecord(txn, te.key, &q); errors.Is(err, onboarding.ErrNotFound) {
		return nil, txn.Delete(te.entry)
	} else if err != nil {
		return nil, err
	}
	var e onboarding.Event
	if err := getRecord(txn, eventKey(ulid.ULID(te.key[len(te.key)-len(ulid.ULID{}):])), &e); errors.Is(err, onboarding.ErrNotFound) {
		if err := s.writeAttempt(txn, &onboarding.DeliveryAttempt{
			EventID: q.EventID, EventType: q.EventType, EndpointID: q.EndpointID, OrgID: te.ep.OrgID,
			Attempt: q.Attempts, At: c.Now, Error: "not delivered: the event expired",
		}); err != nil {
			return nil, err
		}
		promoted, err := finishHead(txn, te.key, &q, c.Now)
		own.add(promoted)
		return nil, err
	} else if err != nil {
		return nil, err
	}
	q.Owner, q.LeaseUntil = c.Owner, c.Now.Add(c.Lease)
	if err := setRecord(txn, te.key, &q); err != nil {
		return nil, err
	}
	if err := moveIndex(txn, te.entry, leaseKey(q.LeaseUntil, te.key)); err != nil {
		return nil, err
	}
	own.note(indexSpace(prefixLeaseIndex, q.EndpointID), q.LeaseUntil)
	ep := *te.ep
	return &onboarding.Delivery{
		EventID: q.EventID, EndpointID: q.EndpointID, Subject: q.Subject, Attempts: q.Attempts, NextAt: q.NextAt,
		Owner: q.Owner, LeaseUntil: q.LeaseUntil, Event: &e, Endpoint: &ep,
	}, nil
}

// allEndpoints reads every endpoint record (w/).
func allEndpoints(txn *badger.Txn) ([]*onboarding.Endpoint, error) {
	var out []*onboarding.Endpoint
	for item := range scanPrefix(txn, []byte(prefixEndpoint), scanOpts{}) {
		var ep onboarding.Endpoint
		if err := item.Value(func(b []byte) error { return record.Decode(b, &ep) }); err != nil {
			return nil, err
		}
		out = append(out, &ep)
	}
	return out, nil
}
