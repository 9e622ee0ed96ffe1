package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// defaultAttemptLimit is the page of DeliveryAttempts when the query sets
// no limit.
const defaultAttemptLimit = 100

// writeAttempt stores a delivery log line under a ULID of its time, with
// its endpoint and event index entries, all expiring
// onboarding.DeliveryLogRetention after the attempt. A line without a time
// is logged now.
func (s *Store) writeAttempt(txn *badger.Txn, a *onboarding.DeliveryAttempt) error {
	line := *a
	if line.At.IsZero() {
		line.At = s.now()
	}
	rec, err := record.Encode(&line)
	if err != nil {
		return err
	}
	return writeAttemptRecord(txn, s.nextULID(line.At), &line, rec)
}

// writeAttemptRecord stores the log line, encoded as rec, under id, with
// its index entries, all expiring onboarding.DeliveryLogRetention after
// line.At.
func writeAttemptRecord(txn *badger.Txn, id ulid.ULID, line *onboarding.DeliveryAttempt, rec []byte) error {
	exp := expiresAt(line.At, onboarding.DeliveryLogRetention)
	for _, ent := range []*badger.Entry{
		badger.NewEntry(attemptKey(id), rec),
		badger.NewEntry(append(endpointAttemptPrefix(line.EndpointID), id[:]...), nil),
		badger.NewEntry(append(eventAttemptPrefix(line.EventID), id[:]...), nil),
	} {
		ent.ExpiresAt = exp
		if err := txn.SetEntry(ent); err != nil {
			return err
		}
	}
	return nil
}

// DeliveryAttempts returns up to q.Limit (default 100) lines of the
// delivery log, newest first. It walks the event's index when q names an
// event, else the endpoint's when it names an endpoint, else the whole
// log; FailedOnly and an endpoint together with an event filter the walk.
func (s *Store) DeliveryAttempts(_ context.Context, q onboarding.AttemptQuery) ([]onboarding.DeliveryAttempt, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultAttemptLimit
	}
	prefix, indexed := []byte(prefixAttempt), true
	switch {
	case q.EventID != "":
		prefix = eventAttemptPrefix(q.EventID)
	case q.EndpointID != "":
		prefix = endpointAttemptPrefix(q.EndpointID)
	default:
		indexed = false
	}
	var out []onboarding.DeliveryAttempt
	err := s.view(func(txn *badger.Txn) error {
		for item := range scanPrefix(txn, prefix, scanOpts{reverse: true, keysOnly: indexed}) {
			if len(out) >= limit {
				break
			}
			var a onboarding.DeliveryAttempt
			if indexed {
				k := item.Key()
				if len(k) != len(prefix)+len(ulid.ULID{}) {
					return fmt.Errorf("delivery log index entry %x: malformed", k)
				}
				switch err := getRecord(txn, attemptKey(ulid.ULID(k[len(prefix):])), &a); {
				case errors.Is(err, onboarding.ErrNotFound):
					continue // expired between reading the index and the line
				case err != nil:
					return err
				}
			} else if err := item.Value(func(b []byte) error { return record.Decode(b, &a) }); err != nil {
				return err
			}
			if q.EndpointID != "" && a.EndpointID != q.EndpointID || q.FailedOnly && a.Success {
				continue
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
