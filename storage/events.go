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

// writeEvents stores events and their index entries, expiring after
// onboarding.EventRetention, and queues each for every endpoint of its
// organization that wants it: the transactional outbox. The organization's
// endpoints are read once per organization, by id from the endpoint index
// kept in memory (endpointindex.go); with none, nothing is read. Once the transaction is over, the caller lowers the due
// floor to eventDues(events).
func (s *Store) writeEvents(txn *badger.Txn, events []*onboarding.Event) error {
	recs, err := encodeEvents(events)
	if err != nil {
		return err
	}
	return s.writeEventRecords(txn, recs)
}

// eventRecords are events with their records already encoded: the writes
// that go through the group commit encode them on the caller's goroutine,
// so that the group's one goroutine only writes them (an event's body is
// a whole application, which takes a while to encode).
type eventRecords struct {
	events []*onboarding.Event
	recs   [][]byte // recs[i] is events[i] encoded
}

// encodeEvents encodes events for writeEventRecords.
func encodeEvents(events []*onboarding.Event) (eventRecords, error) {
	out := eventRecords{events: events, recs: make([][]byte, len(events))}
	for i, e := range events {
		rec, err := record.Encode(e)
		if err != nil {
			return eventRecords{}, err
		}
		out.recs[i] = rec
	}
	return out, nil
}

// writeEventRecords is writeEvents for events encoded beforehand.
func (s *Store) writeEventRecords(txn *badger.Txn, er eventRecords) error {
	endpoints := map[string][]*onboarding.Endpoint{}
	for i, e := range er.events {
		eps, read := endpoints[e.OrgID]
		if !read {
			var err error
			if eps, err = s.orgEndpoints(txn, e.OrgID); err != nil {
				return err
			}
			endpoints[e.OrgID] = eps
		}
		seq, err := writeEvent(txn, e, er.recs[i])
		if err != nil {
			return err
		}
		for _, ep := range eps {
			if ep.Wants(e) {
				if err := enqueue(txn, ep, e, seq, e.At); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeEvent stores one event record, rec (e encoded), and its two index
// entries, and returns the event's sequence.
func writeEvent(txn *badger.Txn, e *onboarding.Event, rec []byte) (ulid.ULID, error) {
	seq, ok := onboarding.EventSeq(e.ID)
	if !ok {
		return seq, fmt.Errorf("store event: %q is not an event id", e.ID)
	}
	key := eventKey(seq)
	if _, err := txn.Get(key); err == nil {
		return seq, fmt.Errorf("store event %s: %w", e.ID, errDuplicate)
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return seq, err
	}
	exp := expiresAt(e.At, onboarding.EventRetention)
	for _, ent := range []*badger.Entry{
		badger.NewEntry(key, rec),
		badger.NewEntry(append(orgEventPrefix(e.OrgID), seq[:]...), nil),
		badger.NewEntry(append(typeEventPrefix(e.OrgID, e.Type), seq[:]...), nil),
	} {
		ent.ExpiresAt = exp
		if err := txn.SetEntry(ent); err != nil {
			return seq, err
		}
	}
	return seq, nil
}

// expiresAt is Badger's expiry (unix seconds) of a record written for
// something that happened at and is kept for ret.
func expiresAt(at time.Time, ret time.Duration) uint64 {
	return uint64(max(at.Add(ret).Unix(), 1))
}

// AddEvent stores an event that no application change caused (webhook.test)
// and queues it for the endpoints that want it, in one transaction.
func (s *Store) AddEvent(ctx context.Context, e *onboarding.Event) error {
	events := []*onboarding.Event{e}
	defer s.due.lower(eventDues(events))
	return s.update(ctx, func(txn *badger.Txn) error {
		return s.writeEvents(txn, events)
	})
}

// Event returns the event with id, or onboarding.ErrNotFound when there is
// none or it expired.
func (s *Store) Event(_ context.Context, id string) (*onboarding.Event, error) {
	seq, ok := onboarding.EventSeq(id)
	if !ok {
		return nil, onboarding.ErrNotFound
	}
	var e onboarding.Event
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, eventKey(seq), &e) }); err != nil {
		return nil, err
	}
	return &e, nil
}

// Events walks the organization's (or organization and type) event index
// backwards from q.Before, reading q.Limit+1 entries at most, like
// ListApplications. A Before that is not an event id is
// onboarding.ErrInvalidCursor.
func (s *Store) Events(_ context.Context, q onboarding.EventQuery) ([]*onboarding.Event, bool, error) {
	prefix := eventListPrefix(q.OrgID, q.Type)
	o := scanOpts{reverse: true, keysOnly: true}
	if q.Before != "" {
		seq, ok := onboarding.EventSeq(q.Before)
		if !ok {
			return nil, false, onboarding.ErrInvalidCursor
		}
		o.after = append(bytes.Clone(prefix), seq[:]...)
	}
	events := make([]*onboarding.Event, 0, max(q.Limit, 0))
	more := false
	err := s.view(func(txn *badger.Txn) error {
		for item := range scanPrefix(txn, prefix, o) {
			k := item.Key()
			if len(k) != len(prefix)+len(ulid.ULID{}) {
				return fmt.Errorf("event index entry %x: malformed", k)
			}
			if len(events) == q.Limit {
				more = true
				return nil
			}
			var e onboarding.Event
			switch err := getRecord(txn, eventKey(ulid.ULID(k[len(prefix):])), &e); {
			case errors.Is(err, onboarding.ErrNotFound):
				continue // expired between reading the index and the record
			case err != nil:
				return err
			}
			events = append(events, &e)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return events, more, nil
}
