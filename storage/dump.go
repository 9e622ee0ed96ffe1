package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/dump"
	"onboard/storage/record"
)

// Dump and Load: the store's records in the backend-neutral form of
// package dump, which backups carry (backup/). Dump reads the families that
// hold records (keys.go) and leaves out every index, which Load writes
// again with the functions the store's own writes use (appIndexes,
// rfiIndexes, writeEvent, ...), so that a loaded store is the one dumped.

// dumpFamily is one family of records Dump walks, and how each of its
// items becomes a line.
type dumpFamily struct {
	kind   string
	prefix string
	line   func(txn *badger.Txn, key, value []byte, item *badger.Item) (*dump.Line, error)
}

// Dump passes every record of one consistent snapshot to emit as a line,
// kinds in the order dump.Kinds lists them: one read transaction, so a
// write that commits meanwhile is either whole in the dump or absent.
// Expired records (events, delivery log lines, idempotency records) are
// left out. emit's error, or ctx's, stops the dump and is returned.
func (s *Store) Dump(ctx context.Context, emit func(*dump.Line) error) error {
	return s.view(func(txn *badger.Txn) error {
		n := 0
		for _, f := range dumpFamilies() {
			for item := range scanPrefix(txn, []byte(f.prefix), scanOpts{prefetch: 64}) {
				if n++; n%1024 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				key := item.KeyCopy(nil)
				value, err := item.ValueCopy(nil)
				if err != nil {
					return fmt.Errorf("dump key %q: %w", key, err)
				}
				l, err := f.line(txn, key, value, item)
				if err != nil {
					return fmt.Errorf("dump key %q: %w", key, err)
				}
				l.Kind = f.kind
				if err := emit(l); err != nil {
					return err
				}
			}
		}
		return ctx.Err()
	})
}

// dumpFamilies are the families of records, in the order of dump.Kinds.
func dumpFamilies() []dumpFamily {
	plain := func(_ *badger.Txn, _, value []byte, _ *badger.Item) (*dump.Line, error) {
		return &dump.Line{Record: value}, nil
	}
	return []dumpFamily{
		{dump.Application, prefixApp, plain},
		{dump.RFIRequest, prefixRFI, dumpRFI},
		{dump.Activity, prefixActivity, dumpActivity},
		{dump.ActivityHead, prefixActivityHead, dumpActivityHead},
		{dump.APIKey, prefixKey, plain},
		{dump.Idempotency, prefixIdempotency, dumpIdempotency},
		{dump.Endpoint, prefixEndpoint, plain},
		{dump.Event, prefixEvent, plain},
		{dump.Delivery, prefixDelivery, dumpDelivery},
		{dump.DeliveryAttempt, prefixAttempt, dumpAttempt},
	}
}

// dumpRFI is an RFI request's line, with the lease of its expiry-queue
// entry when a claim holds it.
func dumpRFI(txn *badger.Txn, key, value []byte, _ *badger.Item) (*dump.Line, error) {
	l := &dump.Line{Record: value}
	id, err := uuid.FromBytes(key[len(prefixRFI):])
	if err != nil {
		return nil, err
	}
	item, err := txn.Get(rfiQueuedKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return l, nil // not active: not in the queue
	}
	if err != nil {
		return nil, err
	}
	at, err := item.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	entry, err := txn.Get(at)
	if err != nil {
		return nil, fmt.Errorf("expiry entry %x: %w", at, err)
	}
	owner, err := entry.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	if len(owner) > 0 {
		due, _, err := parseRFIExpiryKey(at)
		if err != nil {
			return nil, err
		}
		l.Owner, l.LeaseUntil = string(owner), due
	}
	return l, nil
}

// dumpActivity is an activity entry's line.
func dumpActivity(_ *badger.Txn, key, value []byte, _ *badger.Item) (*dump.Line, error) {
	if len(key) != len(prefixActivity)+16+16 {
		return nil, errors.New("malformed activity key")
	}
	subject := uuid.UUID(key[len(prefixActivity) : len(prefixActivity)+16])
	return &dump.Line{Subject: subject.String(), Seq: ulid.ULID(key[len(key)-16:]), Record: value}, nil
}

// dumpActivityHead is the line of an activity log's head.
func dumpActivityHead(_ *badger.Txn, key, value []byte, _ *badger.Item) (*dump.Line, error) {
	subject, err := uuid.FromBytes(key[len(prefixActivityHead):])
	if err != nil {
		return nil, err
	}
	h, err := decodeHead(value)
	if err != nil {
		return nil, err
	}
	return &dump.Line{Subject: subject.String(), Seq: h.Seq, Hash: h.Hash}, nil
}

// dumpIdempotency is an idempotency record's line, with its expiry.
func dumpIdempotency(_ *badger.Txn, key, value []byte, item *badger.Item) (*dump.Line, error) {
	client, k, ok := bytes.Cut(key[len(prefixIdempotency):], []byte{sep})
	if !ok {
		return nil, errors.New("malformed idempotency key")
	}
	l := &dump.Line{ClientID: string(client), Key: string(k), Record: value}
	if exp := item.ExpiresAt(); exp > 0 {
		l.ExpiresAt = time.Unix(int64(exp), 0).UTC()
	}
	return l, nil
}

// dumpDelivery is a queued delivery's line, saying whether it heads its
// queue.
func dumpDelivery(txn *badger.Txn, key, value []byte, _ *badger.Item) (*dump.Line, error) {
	var q queuedDelivery
	if err := record.Decode(value, &q); err != nil {
		return nil, err
	}
	head, err := isHead(txn, q.EndpointID, q.Subject, key)
	if err != nil {
		return nil, err
	}
	return &dump.Line{
		EventID: q.EventID, EventType: q.EventType, EndpointID: q.EndpointID, Subject: q.Subject,
		Attempts: q.Attempts, NextAt: q.NextAt, Owner: q.Owner, LeaseUntil: q.LeaseUntil, Head: head,
	}, nil
}

// dumpAttempt is a delivery log line's line.
func dumpAttempt(_ *badger.Txn, key, value []byte, _ *badger.Item) (*dump.Line, error) {
	if len(key) != len(prefixAttempt)+16 {
		return nil, errors.New("malformed delivery log key")
	}
	return &dump.Line{Seq: ulid.ULID(key[len(prefixAttempt):]), Record: value}, nil
}

// loadBatch bounds the lines one transaction of Load writes; a batch
// Badger finds too big is split.
const loadBatch = 256

// Load writes the lines next yields (io.EOF after the last) into the
// store, which must hold no record yet (dump.ErrNotEmpty otherwise): each
// record with the index entries, queue entries and expiry the store's own
// writes give it, a batch of lines per transaction. A line it cannot load
// (an unknown kind, a record that does not decode, a row that is there
// already) stops it with an error naming the line's number, from 1; what
// it wrote so far stays, so load into a store made for the purpose and
// drop it on failure.
func (s *Store) Load(ctx context.Context, next func() (*dump.Line, error)) error {
	empty, err := s.Empty(ctx)
	if err != nil {
		return err
	}
	if !empty {
		return dump.ErrNotEmpty
	}
	var batch []*dump.Line
	first := 1 // the number of batch[0]
	for {
		l, err := next()
		end := errors.Is(err, io.EOF)
		if err != nil && !end {
			return err
		}
		if l != nil {
			batch = append(batch, l)
		}
		if len(batch) == loadBatch || end && len(batch) > 0 {
			if err := s.loadLines(ctx, batch, first); err != nil {
				return err
			}
			first += len(batch)
			batch = nil
		}
		if end {
			return nil
		}
	}
}

// Empty reports whether the store holds no record: no key but its schema
// version.
func (s *Store) Empty(context.Context) (bool, error) {
	empty := true
	err := s.view(func(txn *badger.Txn) error {
		for item := range scanPrefix(txn, nil, scanOpts{keysOnly: true}) {
			if string(item.Key()) != keySchema {
				empty = false
				return nil
			}
		}
		return nil
	})
	return empty, err
}

// loadLines writes lines (the first numbered first) in one transaction,
// split in two when Badger finds it too big.
func (s *Store) loadLines(ctx context.Context, lines []*dump.Line, first int) error {
	var dues dueWrites
	var endpoints []*onboarding.Endpoint
	err := s.update(ctx, func(txn *badger.Txn) error {
		dues, endpoints = dueWrites{}, nil
		for i, l := range lines {
			ep, err := loadLine(txn, l, &dues)
			if errors.Is(err, badger.ErrTxnTooBig) {
				return err
			}
			if err != nil {
				return &dump.LineError{Line: first + i, Err: err}
			}
			if ep != nil {
				endpoints = append(endpoints, ep)
			}
		}
		return nil
	})
	if errors.Is(err, badger.ErrTxnTooBig) && len(lines) > 1 {
		half := len(lines) / 2
		if err := s.loadLines(ctx, lines[:half], first); err != nil {
			return err
		}
		return s.loadLines(ctx, lines[half:], first+half)
	}
	if err != nil {
		return err
	}
	for _, ep := range endpoints {
		s.endpoints.add(ep.OrgID, ep.ID)
	}
	s.due.lower(dues)
	return nil
}

// loadLine writes one line's rows in txn, noting the due-index entries it
// writes in dues; it returns the endpoint a line of that kind stored.
func loadLine(txn *badger.Txn, l *dump.Line, dues *dueWrites) (*onboarding.Endpoint, error) {
	if err := l.Check(); err != nil {
		return nil, err
	}
	switch l.Kind {
	case dump.Application:
		return nil, loadApplication(txn, l)
	case dump.RFIRequest:
		return nil, loadRFI(txn, l)
	case dump.Activity:
		return nil, loadActivity(txn, l)
	case dump.ActivityHead:
		return nil, loadActivityHead(txn, l)
	case dump.APIKey:
		return nil, loadAPIKey(txn, l)
	case dump.Idempotency:
		return nil, loadIdempotency(txn, l)
	case dump.Endpoint:
		return loadEndpoint(txn, l)
	case dump.Event:
		return nil, loadEvent(txn, l)
	case dump.Delivery:
		return nil, loadDelivery(txn, l, dues)
	case dump.DeliveryAttempt:
		return nil, loadAttempt(txn, l)
	}
	return nil, fmt.Errorf("unknown kind %q", l.Kind)
}

func loadApplication(txn *badger.Txn, l *dump.Line) error {
	var app onboarding.Application
	if err := record.Decode(l.Record, &app); err != nil {
		return err
	}
	id, err := uuid.Parse(app.ID)
	if err != nil {
		return fmt.Errorf("application id %q: %w", app.ID, err)
	}
	return insertRecord(txn, "application "+app.ID, appKey(id), l.Record, appIndexes(&app, id))
}

// loadRFI writes an RFI request with its indexes and, when it is active,
// its expiry-queue entry: at its ExpiresAt, or at the end of the lease
// the line names, with the lease's owner.
func loadRFI(txn *badger.Txn, l *dump.Line) error {
	var r onboarding.RFIRequest
	if err := record.Decode(l.Record, &r); err != nil {
		return err
	}
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return fmt.Errorf("rfi request id %q: %w", r.ID, err)
	}
	if err := insertRecord(txn, "rfi request "+r.ID, rfiKey(id), l.Record, rfiIndexes(&r, id), rfiQueuedKey(id)); err != nil {
		return err
	}
	if r.Status != onboarding.RFIActive {
		return nil
	}
	at, owner := rfiExpiryKey(r.ExpiresAt, id), []byte(nil)
	if l.Owner != "" {
		at, owner = rfiExpiryKey(l.LeaseUntil, id), []byte(l.Owner)
	}
	if err := txn.Set(at, owner); err != nil {
		return err
	}
	return txn.Set(rfiQueuedKey(id), at)
}

func loadActivity(txn *badger.Txn, l *dump.Line) error {
	subject, err := uuid.Parse(l.Subject)
	if err != nil {
		return fmt.Errorf("activity subject %q: %w", l.Subject, err)
	}
	key := activityKey(subject, l.Seq)
	if _, err := loggedActivity(key, l.Record); err != nil {
		return err
	}
	return insertRecord(txn, "activity entry", key, l.Record, nil)
}

func loadActivityHead(txn *badger.Txn, l *dump.Line) error {
	subject, err := uuid.Parse(l.Subject)
	if err != nil {
		return fmt.Errorf("activity subject %q: %w", l.Subject, err)
	}
	h, err := encodeHead(onboarding.ActivityHead{Seq: l.Seq, Hash: l.Hash})
	if err != nil {
		return err
	}
	return insertRecord(txn, "activity head", activityHeadKey(subject), h, nil)
}

func loadAPIKey(txn *badger.Txn, l *dump.Line) error {
	var k onboarding.APIKey
	if err := record.Decode(l.Record, &k); err != nil {
		return err
	}
	if k.ClientID == "" {
		return errors.New("an api key without a client id")
	}
	return insertRecord(txn, "api key "+k.ClientID, apiKeyKey(k.ClientID), l.Record,
		map[string][]byte{string(orgKeyIndexKey(k.OrgID, k.ClientID)): nil})
}

// loadIdempotency writes an idempotency record with its expiry; one
// expired already is left out, as the store would no longer read it.
func loadIdempotency(txn *badger.Txn, l *dump.Line) error {
	var saved json.RawMessage
	if err := record.Decode(l.Record, &saved); err != nil {
		return err
	}
	key := idempotencyKey(l.ClientID, l.Key)
	if err := absent(txn, "idempotency record", key, nil); err != nil {
		return err
	}
	if !l.ExpiresAt.After(time.Now()) {
		return nil
	}
	e := badger.NewEntry(key, l.Record)
	e.ExpiresAt = uint64(l.ExpiresAt.Unix())
	return txn.SetEntry(e)
}

func loadEndpoint(txn *badger.Txn, l *dump.Line) (*onboarding.Endpoint, error) {
	var ep onboarding.Endpoint
	if err := record.Decode(l.Record, &ep); err != nil {
		return nil, err
	}
	if ep.ID == "" {
		return nil, errors.New("an endpoint without an id")
	}
	return &ep, insertRecord(txn, "endpoint "+ep.ID, endpointKey(ep.ID), l.Record,
		map[string][]byte{string(orgEndpointKey(ep.OrgID, ep.ID)): nil})
}

// loadEvent writes an event and its indexes, expiring as writeEvent makes
// them; it queues nothing, the queue coming in lines of its own.
func loadEvent(txn *badger.Txn, l *dump.Line) error {
	var e onboarding.Event
	if err := record.Decode(l.Record, &e); err != nil {
		return err
	}
	_, err := writeEvent(txn, &e, l.Record)
	return err
}

// loadDelivery writes a queued delivery and, when it heads its queue, the
// queue's head and the head's due or lease entry.
func loadDelivery(txn *badger.Txn, l *dump.Line, dues *dueWrites) error {
	seq, ok := onboarding.EventSeq(l.EventID)
	if !ok {
		return fmt.Errorf("a delivery of %q, which is not an event id", l.EventID)
	}
	q := queuedDelivery{
		EventID: l.EventID, EventType: l.EventType, EndpointID: l.EndpointID, Subject: l.Subject,
		Attempts: l.Attempts, NextAt: l.NextAt, Owner: l.Owner, LeaseUntil: l.LeaseUntil,
	}
	key := deliveryKey(q.EndpointID, q.Subject, seq)
	rec, err := record.Encode(&q)
	if err != nil {
		return err
	}
	var extra [][]byte
	if l.Head {
		extra = [][]byte{queueHeadKey(q.EndpointID, q.Subject)}
	}
	if err := insertRecord(txn, "delivery of "+q.EventID+" to "+q.EndpointID, key, rec, nil, extra...); err != nil {
		return err
	}
	if !l.Head {
		return nil
	}
	if err := txn.Set(queueHeadKey(q.EndpointID, q.Subject), seq[:]); err != nil {
		return err
	}
	if q.Owner == "" {
		dues.note(indexSpace(prefixDueIndex, q.EndpointID), q.NextAt)
	} else {
		dues.note(indexSpace(prefixLeaseIndex, q.EndpointID), q.LeaseUntil)
	}
	return txn.Set(q.indexKey(key), nil)
}

// loadAttempt writes a delivery log line under its own id, with its
// indexes, expiring as writeAttempt makes them.
func loadAttempt(txn *badger.Txn, l *dump.Line) error {
	var a onboarding.DeliveryAttempt
	if err := record.Decode(l.Record, &a); err != nil {
		return err
	}
	if err := absent(txn, "delivery log line", attemptKey(l.Seq), nil); err != nil {
		return err
	}
	return writeAttemptRecord(txn, l.Seq, &a, l.Record)
}
