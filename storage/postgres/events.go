package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// deliveriesChannel is the LISTEN/NOTIFY channel a transaction that
// queues deliveries notifies on commit (WatchDeliveries).
const deliveriesChannel = "onboard_deliveries"

// writeEvents stores events, expiring onboarding.EventRetention after
// they happened, and queues each, in tx, for every enabled endpoint of its
// organization that Wants it: the transactional outbox. The endpoints are
// read FOR KEY SHARE, so that an endpoint's disabling or removal waits for
// tx and tx, if it comes second, sees it (migrations/0003_webhooks.sql).
// When it queues anything, tx notifies deliveriesChannel, which reaches
// the listeners when tx commits. An event id already stored is an error.
// It may run again in a retried transaction. It caches the endpoints it
// read for the fan-outs that follow (fanout.go).
func (s *Store) writeEvents(ctx context.Context, tx pgx.Tx, events []*onboarding.Event) error {
	if len(events) == 0 {
		return nil
	}
	r, err := encodeEvents(events)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	r.queue(b)
	var recs [][]byte
	b.Queue(`SELECT record FROM webhook_endpoints WHERE org_id = ANY($1) AND enabled ORDER BY id FOR KEY SHARE`, r.orgs).Query(func(rows pgx.Rows) error {
		var err error
		recs, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
		return err
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	eps := make([]*onboarding.Endpoint, len(recs))
	for i, rec := range recs {
		if eps[i], err = decodeEndpoint(rec); err != nil {
			return err
		}
	}
	s.cacheEndpoints(r.orgs, eps, recs)
	var queue []newDelivery
	for _, e := range events {
		for _, ep := range eps {
			if ep.Wants(e) {
				queue = append(queue, newDelivery{endpoint: ep.ID, subject: e.Subject, event: e.ID, typ: e.Type, at: e.At})
			}
		}
	}
	return queueDeliveries(ctx, tx, queue)
}

// newDelivery is a delivery for queueDeliveries to queue.
type newDelivery struct {
	endpoint, subject, event string
	typ                      onboarding.EventType
	at                       time.Time // when it is due
}

// queueSQL queues the deliveries $1…$6 (endpoint, subject, event, type,
// first of its queue among them, due time) in one statement. It locks the
// heads of the queues it adds to FOR KEY SHARE, so that a head is not
// finished (FinishDeliveries locks it FOR UPDATE) until the transaction
// has committed what it queued behind it; the first delivery of a queue
// without a head is inserted as its head. It returns the deliveries meant
// to head their queue that the unique index of heads refused: a head
// committed after the statement's snapshot, which the next round queues
// them behind. A delivery already queued (a concurrent redelivery) is left
// as it is.
const queueSQL = `WITH q AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[])
		AS q(endpoint_id, subject, event_id, event_type, first, next_at)
), headed AS MATERIALIZED (
	SELECT d.endpoint_id, d.subject FROM deliveries d
	JOIN (SELECT DISTINCT endpoint_id, subject FROM q) k ON d.endpoint_id = k.endpoint_id AND d.subject = k.subject
	WHERE d.head ORDER BY d.endpoint_id, d.subject FOR KEY SHARE OF d
), heads AS MATERIALIZED (
	SELECT q.endpoint_id, q.event_id FROM q
	WHERE q.first AND NOT EXISTS (SELECT 1 FROM headed h WHERE h.endpoint_id = q.endpoint_id AND h.subject = q.subject)
), inserted AS (
	INSERT INTO deliveries (endpoint_id, subject, event_id, event_type, head, next_at)
	SELECT q.endpoint_id, q.subject, q.event_id, q.event_type,
		EXISTS (SELECT 1 FROM heads h WHERE h.endpoint_id = q.endpoint_id AND h.event_id = q.event_id), q.next_at
	FROM q
	ON CONFLICT DO NOTHING
	RETURNING endpoint_id, event_id
)
SELECT h.endpoint_id, h.event_id FROM heads h
WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.endpoint_id = h.endpoint_id AND i.event_id = h.event_id)`

// queueDeliveries queues ds, which are not queued yet, in tx, and
// notifies deliveriesChannel when there are any: each delivery heads its
// (endpoint, subject) queue when the queue was empty, and waits behind the
// head otherwise (queueSQL). The notification goes in the same round trip
// as the first round.
func queueDeliveries(ctx context.Context, tx pgx.Tx, ds []newDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	type queueKey struct{ endpoint, subject string }
	pending := ds
	for round := 0; len(pending) > 0; round++ {
		if round == maxAttempts {
			return fmt.Errorf("queue deliveries: %w: no stable queue head", onboarding.ErrWriteConflict)
		}
		n := len(pending)
		eps, subjects, events, types := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		firsts, ats := make([]bool, n), make([]time.Time, n)
		first := map[queueKey]int{} // the first of each queue, in event order
		for i, d := range pending {
			eps[i], subjects[i], events[i], types[i], ats[i] = d.endpoint, d.subject, d.event, string(d.typ), d.at
			k := queueKey{d.endpoint, d.subject}
			if j, ok := first[k]; !ok || d.event < pending[j].event {
				first[k] = i
			}
		}
		for _, i := range first {
			firsts[i] = true
		}
		b := &pgx.Batch{}
		b.Queue(queueSQL, eps, subjects, events, types, firsts, ats)
		if round == 0 {
			b.Queue(`SELECT pg_notify($1, '')`, deliveriesChannel)
		}
		br := tx.SendBatch(ctx, b)
		rows, err := br.Query()
		if err != nil {
			br.Close()
			return err
		}
		refused := map[string]bool{}
		var ep, event string
		if _, err := pgx.ForEachRow(rows, []any{&ep, &event}, func() error {
			refused[ep+" "+event] = true
			return nil
		}); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		var again []newDelivery
		for _, d := range pending {
			if refused[d.endpoint+" "+d.event] {
				again = append(again, d)
			}
		}
		pending = again
	}
	return nil
}

// AddEvent stores an event that no application change caused (webhook.test)
// and queues it for the endpoints that want it, in one transaction.
func (s *Store) AddEvent(ctx context.Context, e *onboarding.Event) error {
	return s.sendAtomically(ctx, e.ID, func(*pgx.Batch) {}, []*onboarding.Event{e})
}

// Event returns the event with id, or onboarding.ErrNotFound when there is
// none or it expired.
func (s *Store) Event(ctx context.Context, id string) (*onboarding.Event, error) {
	if _, ok := onboarding.EventSeq(id); !ok {
		return nil, onboarding.ErrNotFound
	}
	var rec []byte
	if err := s.pool.QueryRow(ctx, `SELECT record FROM events WHERE id = $1 AND expires_at > $2`, id, s.now()).Scan(&rec); err != nil {
		return nil, notFound(err)
	}
	var e onboarding.Event
	if err := record.Decode(rec, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Events returns up to q.Limit of the organization's (or organization and
// type's) events that have not expired, newest first, older than q.Before
// when it is set, and whether more follow: it reads q.Limit+1 rows. A
// Before that is not an event id is onboarding.ErrInvalidCursor.
func (s *Store) Events(ctx context.Context, q onboarding.EventQuery) ([]*onboarding.Event, bool, error) {
	if q.Before != "" {
		if _, ok := onboarding.EventSeq(q.Before); !ok {
			return nil, false, onboarding.ErrInvalidCursor
		}
	}
	limit := max(q.Limit, 0)
	// One statement per shape of the query, each served by its index.
	sql := `SELECT record FROM events WHERE org_id = $1 AND expires_at > $2`
	args := []any{q.OrgID, s.now(), limit + 1}
	if q.Type != "" {
		args = append(args, string(q.Type))
		sql += ` AND type = $4`
	}
	if q.Before != "" {
		args = append(args, q.Before)
		sql += fmt.Sprintf(` AND id < $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, sql+` ORDER BY id DESC LIMIT $3`, args...)
	if err != nil {
		return nil, false, err
	}
	recs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, false, err
	}
	more := len(recs) > limit
	if more {
		recs = recs[:limit]
	}
	events := make([]*onboarding.Event, 0, len(recs))
	for _, rec := range recs {
		var e onboarding.Event
		if err := record.Decode(rec, &e); err != nil {
			return nil, false, err
		}
		events = append(events, &e)
	}
	return events, more, nil
}
