package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// The delivery queue (keys.go): one q/ record per (endpoint, event), sorted
// by subject and then event within an endpoint; qh/ names the head of each
// (endpoint, subject) queue, the only delivery of that subject the endpoint
// may receive now; xq/ holds the due time of every unclaimed head and xu/
// the lease end of every claimed one, per endpoint, nothing else.
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

// due is when a queue head's index entry is: at its lease's end while it is
// claimed, else at NextAt.
func (q *queuedDelivery) due() time.Time {
	if q.Owner != "" {
		return q.LeaseUntil
	}
	return q.NextAt
}

// indexKey is the index entry of the head q stored at key: in xu/ while it
// is claimed, else in xq/.
func (q *queuedDelivery) indexKey(key []byte) []byte {
	if q.Owner != "" {
		return leaseKey(q.LeaseUntil, key)
	}
	return dueKey(q.NextAt, key)
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

// enqueue queues e (event seq) for ep, due at at: e is an event written in
// this transaction (writeEvent, which refuses an event id already stored),
// so no delivery of it can be queued yet, and none is looked for (a read
// that misses every level of the database, in the group commit's
// transaction). The delivery heads its queue when the queue was empty, and
// waits behind the head otherwise.
func enqueue(txn *badger.Txn, ep *onboarding.Endpoint, e *onboarding.Event, seq ulid.ULID, at time.Time) error {
	return queueNew(txn, ep, e, deliveryKey(ep.ID, e.Subject, seq), seq, at)
}

// requeue queues e, an event stored earlier, for ep, due at at: a delivery
// of e already queued for ep starts over (no attempts, no lease, due at
// at); otherwise a new one is queued, as enqueue queues it.
func requeue(txn *badger.Txn, ep *onboarding.Endpoint, e *onboarding.Event, at time.Time) error {
	seq, ok := onboarding.EventSeq(e.ID)
	if !ok {
		return fmt.Errorf("queue event: %q is not an event id", e.ID)
	}
	key := deliveryKey(ep.ID, e.Subject, seq)
	var q queuedDelivery
	switch err := getRecord(txn, key, &q); {
	case errors.Is(err, onboarding.ErrNotFound):
		return queueNew(txn, ep, e, key, seq, at)
	case err != nil:
		return err
	}
	head, err := isHead(txn, ep.ID, e.Subject, key)
	if err != nil {
		return err
	}
	old := q.indexKey(key)
	q.Attempts, q.NextAt, q.Owner, q.LeaseUntil = 0, at, "", time.Time{}
	if err := setRecord(txn, key, &q); err != nil {
		return err
	}
	if head {
		return moveIndex(txn, old, dueKey(at, key))
	}
	return nil
}

// queueNew writes a new delivery of e (event seq) for ep at key, due at
// at: it heads its queue when the queue was empty, and waits behind the
// head otherwise.
func queueNew(txn *badger.Txn, ep *onboarding.Endpoint, e *onboarding.Event, key []byte, seq ulid.ULID, at time.Time) error {
	q := queuedDelivery{EventID: e.ID, EventType: e.Type, EndpointID: ep.ID, Subject: e.Subject, NextAt: at}
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

// moveIndex moves a head's index entry from one key to another.
func moveIndex(txn *badger.Txn, from, to []byte) error {
	if err := txn.Delete(from); err != nil {
		return err
	}
	return txn.Set(to, nil)
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
	var key []byte
	var q queuedDelivery
	for item := range scanPrefix(txn, prefix, scanOpts{prefetch: 1}) {
		key = item.KeyCopy(nil)
		if err := item.Value(func(b []byte) error { return record.Decode(b, &q) }); err != nil {
			return dueWrites{}, err
		}
		break
	}
	if key == nil {
		return dueWrites{}, txn.Delete(queueHeadKey(endpointID, subject))
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
	var w dueWrites
	w.note(indexSpace(prefixDueIndex, endpointID), q.NextAt)
	return w, txn.Set(dueKey(q.NextAt, key), nil)
}

// finishHead deletes the head stored at key and its index entry, and promotes
// the next delivery of its subject (promote), returning the due entry
// written for it.
func finishHead(txn *badger.Txn, key []byte, q *queuedDelivery, now time.Time) (dueWrites, error) {
	if err := txn.Delete(key); err != nil {
		return dueWrites{}, err
	}
	if err := txn.Delete(q.indexKey(key)); err != nil {
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
// subject's), with their heads and index entries, whole subject queues at a
// time and about dropBatch deliveries at most; more reports that some are
// left. With logged, each gets a log line at at saying that ep was
// disabled.
func (s *Store) dropQueue(txn *badger.Txn, prefix []byte, ep *onboarding.Endpoint, logged bool, at time.Time) (more bool, err error) {
	type entry struct {
		key []byte
		q   queuedDelivery
	}
	var batch []entry
	for item := range scanPrefix(txn, prefix, scanOpts{}) {
		var q queuedDelivery
		if err := item.Value(func(b []byte) error { return record.Decode(b, &q) }); err != nil {
			return false, err
		}
		if len(batch) >= dropBatch && q.Subject != batch[len(batch)-1].q.Subject {
			more = true
			break
		}
		batch = append(batch, entry{item.KeyCopy(nil), q})
	}
	for i, d := range batch {
		head, err := isHead(txn, d.q.EndpointID, d.q.Subject, d.key)
		if err != nil {
			return false, err
		}
		if head {
			if err := txn.Delete(d.q.indexKey(d.key)); err != nil {
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

// FinishDeliveries records a batch of attempts in one transaction, in
// order, so that a busy delivery pool pays one synced commit for several
// attempts rather than one each. For each attempt it writes the log line
// and, when the delivery is still under the claim it was given (Owner and
// LeaseUntil), its result: a done delivery leaves the queue and the next of
// its subject becomes due (at the later of the attempt and its own
// NextAt); another is due again at RetryAt, unclaimed. Result.Endpoint
// changes the endpoint in the same transaction (written only when that
// changes it; the attempts of one endpoint in a batch see each other's
// changes), and when that disables it its queue is then dropped with log
// lines at the attempt's time, a batch per transaction
// (drainEndpointQueue), before FinishDeliveries returns (what a drop that
// fails leaves, claims drop). lost[i] reports that the claim of the i-th
// attempt no longer held (finished, lapsed and claimed again, by another
// owner or the same): only its log line was written. err is about the
// whole batch, which then recorded nothing.
func (s *Store) FinishDeliveries(ctx context.Context, batch []onboarding.FinishedDelivery) (lost []bool, err error) {
	keys := make([][]byte, len(batch))
	for i, f := range batch {
		seq, ok := onboarding.EventSeq(f.Delivery.EventID)
		if !ok {
			return nil, fmt.Errorf("finish delivery: %q is not an event id", f.Delivery.EventID)
		}
		keys[i] = deliveryKey(f.Delivery.EndpointID, f.Delivery.Subject, seq)
	}
	var disabled map[string]time.Time // endpoint id → the attempt that disabled it
	var dues dueWrites
	err = s.groupedTxn(ctx, func(txn *badger.Txn) error {
		lost, disabled, dues = make([]bool, len(batch)), map[string]time.Time{}, dueWrites{}
		for i, f := range batch {
			l, off, err := s.finishOne(txn, keys[i], f.Delivery, f.Result, &dues)
			if err != nil {
				return err
			}
			lost[i] = l
			if off {
				disabled[f.Delivery.EndpointID] = f.Result.Attempt.At
			}
		}
		return nil
	})
	s.due.lower(dues)
	if err != nil {
		return nil, err
	}
	for id, at := range disabled {
		// The results have committed: a drop that fails is logged, not
		// answered, and claims drop what it left (dropLeftovers).
		if err := s.drainEndpointQueue(ctx, id, at); err != nil {
			s.log.Error("webhooks: drop the queue of the endpoint an attempt disabled", "endpoint_id", id, "err", err)
		}
	}
	return lost, nil
}

// finishOne records one attempt of d, queued at key, with result r in txn
// (FinishDeliveries): lost when d's claim no longer holds, disabled when r
// disabled the endpoint.
func (s *Store) finishOne(txn *badger.Txn, key []byte, d *onboarding.Delivery, r onboarding.DeliveryResult, dues *dueWrites) (lost, disabled bool, err error) {
	if err := s.writeAttempt(txn, &r.Attempt); err != nil {
		return false, false, err
	}
	var q queuedDelivery
	switch err := getRecord(txn, key, &q); {
	case errors.Is(err, onboarding.ErrNotFound):
		return true, false, nil
	case err != nil:
		return false, false, err
	}
	if d.Owner == "" || q.Owner != d.Owner || !q.LeaseUntil.Equal(d.LeaseUntil) {
		return true, false, nil
	}
	if r.Done {
		promoted, err := finishHead(txn, key, &q, r.Attempt.At)
		if err != nil {
			return false, false, err
		}
		dues.add(promoted)
	} else {
		old := q.indexKey(key)
		q.Attempts++
		q.NextAt, q.Owner, q.LeaseUntil = r.RetryAt, "", time.Time{}
		if err := setRecord(txn, key, &q); err != nil {
			return false, false, err
		}
		if err := moveIndex(txn, old, dueKey(r.RetryAt, key)); err != nil {
			return false, false, err
		}
		dues.note(indexSpace(prefixDueIndex, d.EndpointID), r.RetryAt)
	}
	if r.Endpoint == nil {
		return false, false, nil
	}
	var ep onboarding.Endpoint
	switch err := getRecord(txn, endpointKey(d.EndpointID), &ep); {
	case errors.Is(err, onboarding.ErrNotFound):
		return false, false, nil
	case err != nil:
		return false, false, err
	}
	before, err := record.Encode(&ep)
	if err != nil {
		return false, false, err
	}
	wasEnabled, id, org := ep.Enabled, ep.ID, ep.OrgID
	r.Endpoint(&ep)
	if ep.ID != id || ep.OrgID != org {
		return false, false, fmt.Errorf("finish delivery: endpoint %s: id and organization are immutable", id)
	}
	after, err := record.Encode(&ep)
	if err != nil {
		return false, false, err
	}
	if bytes.Equal(before, after) {
		// Unchanged (a success with no failure counted): finishes of
		// one endpoint's deliveries do not conflict over its record.
		return false, false, nil
	}
	return false, wasEnabled && !ep.Enabled, txn.Set(endpointKey(id), after)
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
			eps, err := s.orgEndpoints(txn, e.OrgID)
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
			if err := requeue(txn, ep, &e, at); err != nil {
				return err
			}
			queued = append(queued, ep.ID)
			dues.note(indexSpace(prefixDueIndex, ep.ID), at)
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
		for range scanPrefix(txn, []byte(prefixDelivery), scanOpts{keysOnly: true}) {
			n++
		}
		return nil
	})
	return n, err
}

// dropOrphanQueues drops, without log lines, the queues of endpoints whose
// record is gone, as a crash (or a failed drain) after DeleteEndpoint's
// first transaction leaves them: claims only seek the queues of the
// endpoints there are.
func (s *Store) dropOrphanQueues(ctx context.Context) error {
	from := []byte(prefixDelivery)
	for {
		orphan := ""
		err := s.view(func(txn *badger.Txn) error {
			prefix := []byte(prefixDelivery)
			opts := badger.DefaultIteratorOptions
			opts.Prefix = prefix
			opts.PrefetchValues = false
			it := txn.NewIterator(opts)
			defer it.Close()
			for it.Seek(from); it.ValidForPrefix(prefix); it.Seek(from) {
				rest := it.Item().Key()[len(prefix):]
				i := bytes.IndexByte(rest, sep)
				if i < 0 {
					return fmt.Errorf("delivery key %x: malformed", it.Item().Key())
				}
				id := string(rest[:i])
				from = append([]byte(prefixDelivery+id), sep+1)
				switch _, err := txn.Get(endpointKey(id)); {
				case errors.Is(err, badger.ErrKeyNotFound):
					orphan = id
					return nil
				case err != nil:
					return err
				}
			}
			return nil
		})
		if err != nil || orphan == "" {
			return err
		}
		if err := s.drainEndpointQueue(ctx, orphan, s.now()); err != nil {
			return err
		}
	}
}
