package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// The delivery queue (keys.go): one q/ record per (endpoint, event), sorted
// by subject and then event within an endpoint; qh/ names the head of each
// (endpoint, subject) queue, the only delivery of that subject the endpoint
// may receive now; and xq/ holds the due time of every head, nothing else.
// Every transaction that adds to a queue reads and writes its qh/ key, and
// every one that ends a head reads it, so two transactions that would both
// start the same queue, or one that queues behind a head that another
// finishes as the last, conflict (and retry) instead of making two heads or
// none.

// dropBatch bounds the deliveries one transaction drops (about five writes
// each), keeping it well within Badger's transaction size limit.
const dropBatch = 500

// queuedDelivery is the stored record of one delivery: onboarding.Delivery
// without the event and endpoint it is filled with when claimed.
type queuedDelivery struct {
	EventID    string
	EventType  onboarding.EventType
	EndpointID string
	Subject    string
	Attempts   int
	NextAt     time.Time
	Owner      string
	LeaseUntil time.Time
}

// due is when a queue head's xq/ entry is: at its lease's end while it is
// claimed, else at NextAt.
func (q *queuedDelivery) due() time.Time {
	if q.Owner != "" {
		return q.LeaseUntil
	}
	return q.NextAt
}

// isHead reports whether the delivery stored at key heads its queue.
func isHead(txn *badger.Txn, endpointID, subject string, key []byte) (bool, error) {
	item, err := txn.Get(queueHeadKey(endpointID, subject))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	head, err := item.ValueCopy(nil)
	if err != nil {
		return false, err
	}
	return string(head) == string(key[len(key)-len(ulid.ULID{}):]), nil
}

// enqueue queues e for ep, due at at. A delivery of e already queued for ep
// is left as it is, or, with restart, starts over: no attempts, no lease,
// due at at. A new delivery heads its queue when the queue was empty, and
// waits behind the head otherwise.
func enqueue(txn *badger.Txn, ep *onboarding.Endpoint, e *onboarding.Event, at time.Time, restart bool) error {
	seq, ok := onboarding.EventSeq(e.ID)
	if !ok {
		return fmt.Errorf("queue event: %q is not an event id", e.ID)
	}
	key := deliveryKey(ep.ID, e.Subject, seq)
	var q queuedDelivery
	switch err := getRecord(txn, key, &q); {
	case err == nil:
		if !restart {
			return nil
		}
		head, err := isHead(txn, ep.ID, e.Subject, key)
		if err != nil {
			return err
		}
		old := q.due()
		q.Attempts, q.NextAt, q.Owner, q.LeaseUntil = 0, at, "", time.Time{}
		if err := setRecord(txn, key, &q); err != nil {
			return err
		}
		if head {
			return moveDue(txn, key, old, at)
		}
		return nil
	case !errors.Is(err, onboarding.ErrNotFound):
		return err
	}
	q = queuedDelivery{EventID: e.ID, EventType: e.Type, EndpointID: ep.ID, Subject: e.Subject, NextAt: at}
	if err := setRecord(txn, key, &q); err != nil {
		return err
	}
	headKey := queueHeadKey(ep.ID, e.Subject)
	if item, err := txn.Get(headKey); err == nil {
		// It waits behind the head. Writing the head key again makes a
		// concurrent transaction that found the queue empty after its head
		// (promote) conflict, instead of leaving this one without a head.
		head, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		return txn.Set(headKey, head)
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return err
	}
	if err := txn.Set(headKey, seq[:]); err != nil {
		return err
	}
	return txn.Set(dueKey(at, key), nil)
}

// moveDue moves the xq/ entry of the head stored at key from one due time
// to another.
func moveDue(txn *badger.Txn, key []byte, from, to time.Time) error {
	if err := txn.Delete(dueKey(from, key)); err != nil {
		return err
	}
	return txn.Set(dueKey(to, key), nil)
}

// promote makes the first delivery still queued for (endpointID, subject)
// its head, due at the later of now and its NextAt, and returns the due
// entry it wrote; with none left it removes the queue's head key and
// writes none. The old head must already be deleted.
func promote(txn *badger.Txn, endpointID, subject string, now time.Time) (dueWrites, error) {
	// Reading the head key makes this transaction conflict with one that
	// queues behind the head meanwhile (enqueue), which the walk below
	// cannot see.
	if _, err := txn.Get(queueHeadKey(endpointID, subject)); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
		return dueWrites{}, err
	}
	prefix := subjectQueuePrefix(endpointID, subject)
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	opts.PrefetchSize = 1
	it := txn.NewIterator(opts)
	it.Seek(prefix)
	if !it.ValidForPrefix(prefix) {
		it.Close()
		return dueWrites{}, txn.Delete(queueHeadKey(endpointID, subject))
	}
	key := it.Item().KeyCopy(nil)
	var q queuedDelivery
	err := it.Item().Value(func(b []byte) error { return decode(b, &q) })
	it.Close()
	if err != nil {
		return dueWrites{}, err
	}
	if q.NextAt.Before(now) {
		q.NextAt = now
	}
	if err := setRecord(txn, key, &q); err != nil {
		return dueWrites{}, err
	}
	if err := txn.Set(queueHeadKey(endpointID, subject), key[len(prefix):]); err != nil {
		return dueWrites{}, err
	}
	return dueWrites{any: true, earliest: q.NextAt}, txn.Set(dueKey(q.NextAt, key), nil)
}

// finishHead deletes the head stored at key and its xq/ entry, and promotes
// the next delivery of its subject (promote), returning the due entry
// written for it.
func finishHead(txn *badger.Txn, key []byte, q *queuedDelivery, now time.Time) (dueWrites, error) {
	if err := txn.Delete(key); err != nil {
		return dueWrites{}, err
	}
	if err := txn.Delete(dueKey(q.due(), key)); err != nil {
		return dueWrites{}, err
	}
	return promote(txn, q.EndpointID, q.Subject, now)
}

// disabledError is the log line's error for a delivery dropped because its
// endpoint was disabled.
func disabledError(reason string) string {
	if reason == "" {
		return "not delivered: the endpoint was disabled"
	}
	return "not delivered: the endpoint was disabled (" + reason + ")"
}

// dropQueue deletes the deliveries under prefix (an endpoint's queue, or one
// subject's), with their heads and xq/ entries, whole subject queues at a
// time and about dropBatch deliveries at most; more reports that some are
// left. With logged, each gets a log line at at saying that ep was
// disabled.
func (s *Store) dropQueue(txn *badger.Txn, prefix []byte, ep *onboarding.Endpoint, logged bool, at time.Time) (more bool, err error) {
	type entry struct {
		key []byte
		q   queuedDelivery
	}
	var batch []entry
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	it := txn.NewIterator(opts)
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		var q queuedDelivery
		if err := it.Item().Value(func(b []byte) error { return decode(b, &q) }); err != nil {
			it.Close()
			return false, err
		}
		if len(batch) >= dropBatch && q.Subject != batch[len(batch)-1].q.Subject {
			more = true
			break
		}
		batch = append(batch, entry{it.Item().KeyCopy(nil), q})
	}
	it.Close()
	for i, d := range batch {
		head, err := isHead(txn, d.q.EndpointID, d.q.Subject, d.key)
		if err != nil {
			return false, err
		}
		if head {
			if err := txn.Delete(dueKey(d.q.due(), d.key)); err != nil {
				return false, err
			}
		}
		if i == len(batch)-1 || batch[i+1].q.Subject != d.q.Subject {
			if err := txn.Delete(queueHeadKey(d.q.EndpointID, d.q.Subject)); err != nil {
				return false, err
			}
		}
		if err := txn.Delete(d.key); err != nil {
			return false, err
		}
		if logged {
			if err := s.writeAttempt(txn, &onboarding.DeliveryAttempt{
				EventID: d.q.EventID, EventType: d.q.EventType, EndpointID: d.q.EndpointID, OrgID: ep.OrgID,
				Attempt: d.q.Attempts, At: at, Error: disabledError(ep.DisabledReason),
			}); err != nil {
				return false, err
			}
		}
	}
	return more, nil
}

// dropEndpointQueue drops (dropQueue) the deliveries queued for ep.
func (s *Store) dropEndpointQueue(txn *badger.Txn, ep *onboarding.Endpoint, logged bool, at time.Time) (more bool, err error) {
	return s.dropQueue(txn, endpointQueuePrefix(ep.ID), ep, logged, at)
}

// ClaimDeliveries walks the due index from the Store's due floor
// (duefloor.go) to c.Now in one transaction and leases up to c.Limit heads
// to c.Owner, moving each one's due entry to its lease's end. On the way it
// drops the queues of endpoints that are gone (silently) or disabled
// (logged), and deliveries whose event expired (logged); it passes over
// heads of endpoints at c.MaxInFlight and heads leased to another owner
// until their lease lapses. next is the earliest due time left in the
// index after the claim: of a delivery passed over or not reached, or of a
// lease it took (zero when nothing is queued); after 4*c.Limit entries
// passed over or dropped the walk stops and next is c.Now, so that the
// caller comes back.
func (s *Store) ClaimDeliveries(ctx context.Context, c onboarding.Claim) ([]*onboarding.Delivery, time.Time, error) {
	var claimed []*onboarding.Delivery
	var next time.Time
	// The floor is read before the transaction takes its snapshot; met is
	// the key of the first entry the walk meets, and own the earliest due
	// entry the claim writes (duefloor.go).
	floor, others := s.due.beginClaim()
	var met []byte
	var own dueWrites
	err := s.update(ctx, func(txn *badger.Txn) error {
		claimed, next, met, own = nil, time.Time{}, dueFloorKey(dueNanos(c.Now)), dueWrites{}
		first := true
		// next is the earliest due entry left in the index: those passed
		// over, the first not reached, heads promoted on the way (which the
		// walk may not see) and the leases taken.
		unclaimed := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		mine := map[string]int{}
		endpoints := map[string]*onboarding.Endpoint{} // nil: not found
		skipped, maxSkipped := 0, 4*max(c.Limit, 1)
		prefix := []byte(prefixDueIndex)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(floor); it.ValidForPrefix(prefix); it.Next() {
			dk := it.Item().KeyCopy(nil)
			due, key, err := parseDueKey(dk)
			if err != nil {
				return err
			}
			if first {
				met, first = dk, false
			}
			if due.After(c.Now) || len(claimed) >= c.Limit {
				unclaimed(due)
				break
			}
			if skipped >= maxSkipped {
				unclaimed(c.Now)
				break
			}
			var q queuedDelivery
			if err := getRecord(txn, key, &q); errors.Is(err, onboarding.ErrNotFound) {
				skipped++
				if err := txn.Delete(dk); err != nil {
					return err
				}
				continue
			} else if err != nil {
				return err
			}
			ep, loaded := endpoints[q.EndpointID]
			if !loaded {
				var stored onboarding.Endpoint
				switch err := getRecord(txn, endpointKey(q.EndpointID), &stored); {
				case err == nil:
					ep = &stored
				case !errors.Is(err, onboarding.ErrNotFound):
					return err
				}
				endpoints[q.EndpointID] = ep
			}
			if ep == nil || !ep.Enabled {
				skipped++
				gone := ep == nil
				if gone {
					ep = &onboarding.Endpoint{ID: q.EndpointID}
				}
				if _, err := s.dropQueue(txn, subjectQueuePrefix(q.EndpointID, q.Subject), ep, !gone, c.Now); err != nil {
					return err
				}
				continue
			}
			if q.Owner != "" && q.Owner != c.Owner && q.LeaseUntil.After(c.Now) ||
				c.MaxInFlight != nil && c.InFlight[ep.ID]+mine[ep.ID] >= c.MaxInFlight(ep.ID) {
				skipped++
				unclaimed(due)
				continue
			}
			var e onboarding.Event
			if err := getRecord(txn, eventKey(ulid.ULID(key[len(key)-len(ulid.ULID{}):])), &e); errors.Is(err, onboarding.ErrNotFound) {
				skipped++
				if err := s.writeAttempt(txn, &onboarding.DeliveryAttempt{
					EventID: q.EventID, EventType: q.EventType, EndpointID: q.EndpointID, OrgID: ep.OrgID,
					Attempt: q.Attempts, At: c.Now, Error: "not delivered: the event expired",
				}); err != nil {
					return err
				}
				promoted, err := finishHead(txn, key, &q, c.Now)
				if err != nil {
					return err
				}
				if promoted.any {
					unclaimed(promoted.earliest)
					own.add(promoted)
				}
				continue
			} else if err != nil {
				return err
			}
			q.Owner, q.LeaseUntil = c.Owner, c.Now.Add(c.Lease)
			if err := setRecord(txn, key, &q); err != nil {
				return err
			}
			if err := txn.Delete(dk); err != nil {
				return err
			}
			if err := txn.Set(dueKey(q.LeaseUntil, key), nil); err != nil {
				return err
			}
			own.note(q.LeaseUntil)
			unclaimed(q.LeaseUntil)
			mine[ep.ID]++
			epCopy := *ep
			claimed = append(claimed, &onboarding.Delivery{
				EventID: q.EventID, EndpointID: q.EndpointID, Subject: q.Subject, Attempts: q.Attempts, NextAt: q.NextAt,
				Owner: q.Owner, LeaseUntil: q.LeaseUntil, Event: &e, Endpoint: &epCopy,
			})
		}
		return nil
	})
	s.due.endClaim(others, err == nil, met, own)
	if err != nil {
		return nil, time.Time{}, err
	}
	return claimed, next, nil
}

// FinishDelivery writes the attempt's log line and, when d is still claimed
// by d.Owner, its result, in one transaction: a done delivery leaves the
// queue and the next of its subject becomes due (at the later of the
// attempt and its own NextAt); another is due again at r.RetryAt, unclaimed.
// r.Endpoint changes the endpoint in the same transaction, and when that
// disables it its queue is dropped with log lines (beyond dropBatch, in the
// transactions that follow). When d is no longer claimed by d.Owner only
// the log line is written, and the answer is onboarding.ErrLeaseLost.
func (s *Store) FinishDelivery(ctx context.Context, d *onboarding.Delivery, r onboarding.DeliveryResult) error {
	seq, ok := onboarding.EventSeq(d.EventID)
	if !ok {
		return fmt.Errorf("finish delivery: %q is not an event id", d.EventID)
	}
	key := deliveryKey(d.EndpointID, d.Subject, seq)
	lost, more := false, false
	var dues dueWrites
	err := s.update(ctx, func(txn *badger.Txn) error {
		lost, more, dues = false, false, dueWrites{}
		if err := s.writeAttempt(txn, &r.Attempt); err != nil {
			return err
		}
		var q queuedDelivery
		switch err := getRecord(txn, key, &q); {
		case errors.Is(err, onboarding.ErrNotFound):
			lost = true
			return nil
		case err != nil:
			return err
		}
		if d.Owner == "" || q.Owner != d.Owner {
			lost = true
			return nil
		}
		if r.Done {
			promoted, err := finishHead(txn, key, &q, r.Attempt.At)
			if err != nil {
				return err
			}
			dues.add(promoted)
		} else {
			old := q.due()
			q.Attempts++
			q.NextAt, q.Owner, q.LeaseUntil = r.RetryAt, "", time.Time{}
			if err := setRecord(txn, key, &q); err != nil {
				return err
			}
			if err := moveDue(txn, key, old, r.RetryAt); err != nil {
				return err
			}
			dues.note(r.RetryAt)
		}
		if r.Endpoint == nil {
			return nil
		}
		var ep onboarding.Endpoint
		switch err := getRecord(txn, endpointKey(d.EndpointID), &ep); {
		case errors.Is(err, onboarding.ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		wasEnabled, id, org := ep.Enabled, ep.ID, ep.OrgID
		r.Endpoint(&ep)
		if ep.ID != id || ep.OrgID != org {
			return fmt.Errorf("finish delivery: endpoint %s: id and organization are immutable", id)
		}
		if err := setRecord(txn, endpointKey(id), &ep); err != nil {
			return err
		}
		if wasEnabled && !ep.Enabled {
			var err error
			more, err = s.dropEndpointQueue(txn, &ep, true, r.Attempt.At)
			return err
		}
		return nil
	})
	s.due.lower(dues)
	if err != nil {
		return err
	}
	if more {
		if err := s.drainEndpointQueue(ctx, d.EndpointID); err != nil {
			return err
		}
	}
	if lost {
		return onboarding.ErrLeaseLost
	}
	return nil
}

// Redeliver queues the event again, due at at, for endpointID, or (empty)
// for every endpoint of its organization that Wants it. A named endpoint
// gets it whatever its event filter, unless it is disabled (then the event
// is queued for no endpoint). A delivery of the event already queued for an
// endpoint starts over (no attempts, no lease, due at at) instead of being
// queued twice. It returns the ids of the endpoints queued for, and
// onboarding.ErrNotFound for an unknown or expired event, or an endpoint
// that does not exist or belongs to another organization.
func (s *Store) Redeliver(ctx context.Context, eventID, endpointID string, at time.Time) ([]string, error) {
	seq, ok := onboarding.EventSeq(eventID)
	if !ok {
		return nil, onboarding.ErrNotFound
	}
	var queued []string
	var dues dueWrites
	err := s.update(ctx, func(txn *badger.Txn) error {
		queued, dues = nil, dueWrites{}
		var e onboarding.Event
		if err := getRecord(txn, eventKey(seq), &e); err != nil {
			return err
		}
		var targets []*onboarding.Endpoint
		if endpointID != "" {
			var ep onboarding.Endpoint
			if err := getRecord(txn, endpointKey(endpointID), &ep); err != nil {
				return err
			}
			if ep.OrgID != e.OrgID {
				return onboarding.ErrNotFound
			}
			if ep.Enabled {
				targets = append(targets, &ep)
			}
		} else {
			eps, err := orgEndpoints(txn, e.OrgID)
			if err != nil {
				return err
			}
			for _, ep := range eps {
				if ep.Wants(&e) {
					targets = append(targets, ep)
				}
			}
		}
		for _, ep := range targets {
			if err := enqueue(txn, ep, &e, at, true); err != nil {
				return err
			}
			queued = append(queued, ep.ID)
			dues.note(at)
		}
		return nil
	})
	s.due.lower(dues)
	if err != nil {
		return nil, err
	}
	return queued, nil
}

// QueuedDeliveries counts the deliveries queued and not yet done, by
// walking the keys of the queue.
func (s *Store) QueuedDeliveries(_ context.Context) (int, error) {
	n := 0
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte(prefixDelivery)
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			n++
		}
		return nil
	})
	return n, err
}
