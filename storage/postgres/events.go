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
// It may run again in a retried transaction.
func (s *Store) writeEvents(ctx context.Context, tx pgx.Tx, events []*onboarding.Event) error {
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	ids, orgs, types := make([]string, n), make([]string, n), make([]string, n)
	ats, recs := make([]time.Time, n), make([][]byte, n)
	orgSet := map[string]bool{}
	var orgList []string
	for i, e := range events {
		if _, ok := onboarding.EventSeq(e.ID); !ok {
			return fmt.Errorf("store event: %q is not an event id", e.ID)
		}
		rec, err := record.Encode(e)
		if err != nil {
			return err
		}
		ids[i], orgs[i], types[i], ats[i], recs[i] = e.ID, e.OrgID, string(e.Type), e.At, rec
		if !orgSet[e.OrgID] {
			orgSet[e.OrgID] = true
			orgList = append(orgList, e.OrgID)
		}
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO events (id, org_id, type, at, expires_at, record)
		SELECT id, org_id, type, at, at + $6::interval, record
		FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::bytea[]) AS e(id, org_id, type, at, record)`,
		ids, orgs, types, ats, recs, onboarding.EventRetention)
	b.Queue(`SELECT record FROM webhook_endpoints WHERE org_id = ANY($1) AND enabled ORDER BY id FOR KEY SHARE`, orgList)
	br := tx.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		if uniqueViolation(err) {
			return fmt.Errorf("store events: %w", errWebhookDuplicate)
		}
		return err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	endpointRecs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	if len(endpointRecs) == 0 {
		return nil
	}
	byOrg := map[string][]*onboarding.Endpoint{}
	for _, rec := range endpointRecs {
		ep, err := decodeEndpoint(rec)
		if err != nil {
			return err
		}
		byOrg[ep.OrgID] = append(byOrg[ep.OrgID], ep)
	}
	var queue []newDelivery
	for _, e := range events {
		for _, ep := range byOrg[e.OrgID] {
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

// queueDeliveries queues ds, which are not queued yet, in tx, and
// notifies deliveriesChannel when there are any. A delivery heads its
// (endpoint, subject) queue when the queue was empty, and waits behind the
// head otherwise. Each round locks the heads of the queues it adds to FOR
// KEY SHARE, so that a head is not finished (FinishDeliveries locks it FOR
// UPDATE) until tx has committed what it queued behind it, and then
// inserts; a delivery meant to start a queue that finds, through the
// unique index, a head committed since, is queued behind that head in the
// next round. A delivery already queued (a concurrent redelivery) is left
// as it is.
func queueDeliveries(ctx context.Context, tx pgx.Tx, ds []newDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	pending := ds
	for round := 0; len(pending) > 0; round++ {
		if round == maxAttempts {
			return fmt.Errorf("queue deliveries: %w: no stable queue head", onboarding.ErrWriteConflict)
		}
		n := len(pending)
		eps, subjects := make([]string, n), make([]string, n)
		for i, d := range pending {
			eps[i], subjects[i] = d.endpoint, d.subject
		}
		rows, err := tx.Query(ctx, `SELECT d.endpoint_id, d.subject FROM deliveries d
			JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[])) AS q(endpoint_id, subject)
				ON d.endpoint_id = q.endpoint_id AND d.subject = q.subject
			WHERE d.head ORDER BY d.endpoint_id, d.subject FOR KEY SHARE OF d`, eps, subjects)
		if err != nil {
			return err
		}
		type queueKey struct{ endpoint, subject string }
		headed := map[queueKey]bool{}
		var ep, subject string
		if _, err := pgx.ForEachRow(rows, []any{&ep, &subject}, func() error {
			headed[queueKey{ep, subject}] = true
			return nil
		}); err != nil {
			return err
		}
		// The first delivery of each queue without a head, in event order,
		// is to head it.
		first := map[queueKey]int{}
		for i, d := range pending {
			k := queueKey{d.endpoint, d.subject}
			if headed[k] {
				continue
			}
			if j, ok := first[k]; !ok || d.event < pending[j].event {
				first[k] = i
			}
		}
		heads := make([]bool, n)
		events, types, ats := make([]string, n), make([]string, n), make([]time.Time, n)
		for i, d := range pending {
			events[i], types[i], ats[i] = d.event, string(d.typ), d.at
		}
		for _, i := range first {
			heads[i] = true
		}
		rows, err = tx.Query(ctx, `INSERT INTO deliveries (endpoint_id, subject, event_id, event_type, head, next_at)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[])
			ON CONFLICT DO NOTHING
			RETURNING endpoint_id, event_id`, eps, subjects, events, types, heads, ats)
		if err != nil {
			return err
		}
		type deliveryKey struct{ endpoint, event string }
		inserted := map[deliveryKey]bool{}
		var event string
		if _, err := pgx.ForEachRow(rows, []any{&ep, &event}, func() error {
			inserted[deliveryKey{ep, event}] = true
			return nil
		}); err != nil {
			return err
		}
		var again []newDelivery
		for i, d := range pending {
			// A head refused by the unique index of heads goes behind the
			// head that took its place; anything else refused was queued
			// already.
			if heads[i] && !inserted[deliveryKey{d.endpoint, d.event}] {
				again = append(again, d)
			}
		}
		pending = again
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, deliveriesChannel)
	return err
}

// AddEvent stores an event that no application change caused (webhook.test)
// and queues it for the endpoints that want it, in one transaction.
func (s *Store) AddEvent(ctx context.Context, e *onboarding.Event) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		return s.writeEvents(ctx, tx, []*onboarding.Event{e})
	})
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
