package postgres

// The delivery queue: redelivering, claiming and finishing deliveries
// (the schema and its locking rules are in migrations/0003_webhooks.sql;
// queueing new deliveries is queueDeliveries, in events.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// Redeliver queues the event again, due at at, for endpointID, or (empty)
// for every enabled endpoint of its organization that Wants it. A named
// endpoint gets it whatever its event filter, unless it is disabled (then
// the event is queued for no endpoint). A delivery of the event already
// queued for an endpoint starts over (no attempts, no lease, due at at)
// instead of being queued twice; one queued anew joins its subject's
// queue as writeEvents queues. It returns the ids of the endpoints queued
// for, in id order, and onboarding.ErrNotFound for an unknown or expired
// event, or an endpoint that does not exist or belongs to another
// organization.
func (s *Store) Redeliver(ctx context.Context, eventID, endpointID string, at time.Time) ([]string, error) {
	if _, ok := onboarding.EventSeq(eventID); !ok {
		return nil, onboarding.ErrNotFound
	}
	var queued []string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		queued = nil
		var rec []byte
		if err := tx.QueryRow(ctx, `SELECT record FROM events WHERE id = $1 AND expires_at > $2`, eventID, s.now()).Scan(&rec); err != nil {
			return notFound(err)
		}
		var e onboarding.Event
		if err := record.Decode(rec, &e); err != nil {
			return err
		}
		// The endpoints are locked as writeEvents locks them.
		var targets []*onboarding.Endpoint
		if endpointID != "" {
			if err := tx.QueryRow(ctx, `SELECT record FROM webhook_endpoints WHERE id = $1 FOR KEY SHARE`, endpointID).Scan(&rec); err != nil {
				return notFound(err)
			}
			ep, err := decodeEndpoint(rec)
			if err != nil {
				return err
			}
			if ep.OrgID != e.OrgID {
				return onboarding.ErrNotFound
			}
			if ep.Enabled {
				targets = append(targets, ep)
			}
		} else {
			rows, err := tx.Query(ctx, `SELECT record FROM webhook_endpoints WHERE org_id = $1 AND enabled ORDER BY id FOR KEY SHARE`, e.OrgID)
			if err != nil {
				return err
			}
			recs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
			if err != nil {
				return err
			}
			for _, rec := range recs {
				ep, err := decodeEndpoint(rec)
				if err != nil {
					return err
				}
				if ep.Wants(&e) {
					targets = append(targets, ep)
				}
			}
		}
		if len(targets) == 0 {
			return nil
		}
		ids := make([]string, len(targets))
		for i, ep := range targets {
			ids[i] = ep.ID
		}
		// Those queued already start over, their place as head or behind
		// it unchanged.
		rows, err := tx.Query(ctx, `UPDATE deliveries d SET attempts = 0, next_at = $4, owner = NULL, lease_until = NULL
			FROM (SELECT endpoint_id FROM deliveries WHERE endpoint_id = ANY($1) AND subject = $2 AND event_id = $3
				ORDER BY endpoint_id FOR UPDATE) l
			WHERE d.endpoint_id = l.endpoint_id AND d.subject = $2 AND d.event_id = $3
			RETURNING d.endpoint_id`, ids, e.Subject, e.ID, at)
		if err != nil {
			return err
		}
		restarted, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		var fresh []newDelivery
		for _, id := range ids {
			if !slices.Contains(restarted, id) {
				fresh = append(fresh, newDelivery{endpoint: id, subject: e.Subject, event: e.ID, typ: e.Type, at: at})
			}
		}
		if err := queueDeliveries(ctx, tx, fresh); err != nil {
			return err
		}
		if len(fresh) == 0 {
			// A delivery that starts over may be due earlier than a
			// listener expects.
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, deliveriesChannel); err != nil {
				return err
			}
		}
		queued = ids
		return nil
	})
	if err != nil {
		return nil, err
	}
	return queued, nil
}

// QueuedDeliveries counts the deliveries queued and not yet done.
func (s *Store) QueuedDeliveries(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries`).Scan(&n)
	return n, err
}

// claimSQL leases the due heads of the endpoints $1, each up to its room
// $2, at $3 (now): it locks them, skipping those another transaction
// holds, takes up to $4 of them one per endpoint a round, earliest first
// within a round, so that one endpoint's backlog never delays another's,
// and leases those to $5 until $6. The endpoints it leases from are
// locked FOR KEY SHARE, as the transactions that queue lock them: a claim
// that meets an endpoint being disabled or removed waits for that change
// and then leases nothing of it, and a change waits for the claims that
// locked the endpoint first. So no claim that commits after an endpoint's
// disabling or removal has leased a delivery of it.
//
// It returns the leased deliveries with their event's record (NULL when
// the event expired), then rows with taken false whose time is when
// something not taken is due: each head it locked and did not take, and
// per endpoint the earliest unclaimed head and the earliest claimed one
// (leases) left. For an endpoint whose in-flight cap held the claim back
// ($7) a head due by now is left out, and with it those after it of its
// kind: the caller hears when an attempt in flight to it ends.
const claimSQL = `WITH candidates AS MATERIALIZED (
	SELECT d.endpoint_id, d.subject, d.event_id, d.due_at
	FROM unnest($1::text[], $2::int[]) AS r(endpoint_id, room)
	CROSS JOIN LATERAL (
		SELECT d.endpoint_id, d.subject, d.event_id, d.due_at
		FROM deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.endpoint_id = r.endpoint_id AND d.head AND d.due_at <= $3 AND e.enabled
		ORDER BY d.due_at, d.event_id LIMIT r.room
		FOR UPDATE OF d SKIP LOCKED FOR KEY SHARE OF e) d
), ranked AS MATERIALIZED (
	SELECT c.*, row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.due_at, c.event_id) AS round
	FROM candidates c
), picked AS MATERIALIZED (
	SELECT endpoint_id, subject, event_id FROM ranked
	ORDER BY round, due_at, endpoint_id, event_id LIMIT $4
), leased AS (
	UPDATE deliveries d SET owner = $5, lease_until = $6
	FROM picked p
	WHERE d.endpoint_id = p.endpoint_id AND d.subject = p.subject AND d.event_id = p.event_id
	RETURNING d.endpoint_id, d.subject, d.event_id, d.event_type, d.attempts, d.next_at
), left_due AS (
	SELECT f.t FROM unnest($1::text[], $7::bool[]) AS r(endpoint_id, capped)
	CROSS JOIN LATERAL (
		SELECT (SELECT d.due_at FROM deliveries d
			WHERE d.endpoint_id = r.endpoint_id AND d.head AND d.owner IS NULL AND NOT EXISTS (SELECT 1 FROM picked p
				WHERE p.endpoint_id = d.endpoint_id AND p.subject = d.subject AND p.event_id = d.event_id)
			ORDER BY d.due_at LIMIT 1)
		UNION ALL
		SELECT (SELECT d.due_at FROM deliveries d
			WHERE d.endpoint_id = r.endpoint_id AND d.head AND d.owner IS NOT NULL AND NOT EXISTS (SELECT 1 FROM picked p
				WHERE p.endpoint_id = d.endpoint_id AND p.subject = d.subject AND p.event_id = d.event_id)
			ORDER BY d.due_at LIMIT 1)
	) AS f(t)
	WHERE f.t IS NOT NULL AND (NOT r.capped OR f.t > $3)
)
SELECT true, l.endpoint_id, l.subject, l.event_id, l.event_type, l.attempts, l.next_at, e.record
FROM leased l LEFT JOIN events e ON e.id = l.event_id AND e.expires_at > $3
UNION ALL
SELECT false, '', '', '', '', 0, r.due_at, NULL
FROM ranked r
WHERE NOT EXISTS (SELECT 1 FROM picked p
	WHERE p.endpoint_id = r.endpoint_id AND p.subject = r.subject AND p.event_id = r.event_id)
UNION ALL
SELECT false, '', '', '', '', 0, t, NULL FROM left_due`

// ClaimDeliveries leases up to c.Limit due queue heads to c.Owner in one
// transaction of two statements: it reads the enabled endpoints, then
// leases what each endpoint's room under c.MaxInFlight allows, skipping
// the heads other transactions hold, and learns when what it leaves is
// due (claimSQL). A claimed head is due again when its lease ends. A
// delivery whose event expired is dropped instead, with a log line, and
// the next of its subject becomes the head. next is the earliest of the
// leases given and of what claimSQL reports left (a head another claim
// holds counts as due), c.Now when a delivery was dropped; zero when
// nothing is queued. Lease times are kept to the microsecond: the
// LeaseUntil of a claimed delivery is c.Now plus c.Lease truncated to it.
func (s *Store) ClaimDeliveries(ctx context.Context, c onboarding.Claim) ([]*onboarding.Delivery, time.Time, error) {
	var claimed []*onboarding.Delivery
	var next time.Time
	now := c.Now.Truncate(time.Microsecond)
	leaseUntil := c.Now.Add(c.Lease).Truncate(time.Microsecond)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		claimed, next = nil, time.Time{}
		earliest := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		rows, err := tx.Query(ctx, `SELECT record FROM webhook_endpoints WHERE enabled ORDER BY id`)
		if err != nil {
			return err
		}
		recs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		endpoints := map[string]*onboarding.Endpoint{}
		ids, rooms, capped := make([]string, 0, len(recs)), make([]int32, 0, len(recs)), make([]bool, 0, len(recs))
		for _, rec := range recs {
			ep, err := decodeEndpoint(rec)
			if err != nil {
				return err
			}
			room, held := max(c.Limit, 0), false
			if c.MaxInFlight != nil {
				if r := c.MaxInFlight(ep.ID) - c.InFlight[ep.ID]; r < room {
					room, held = max(r, 0), true
				}
			}
			endpoints[ep.ID] = ep
			ids, rooms, capped = append(ids, ep.ID), append(rooms, int32(room)), append(capped, held)
		}
		if len(ids) == 0 {
			return nil
		}
		rows, err = tx.Query(ctx, claimSQL, ids, rooms, now, max(c.Limit, 0), c.Owner, leaseUntil, capped)
		if err != nil {
			return err
		}
		var expired []*onboarding.Delivery
		var taken bool
		var endpointID, subject, eventID, eventType string
		var attempts int
		var at time.Time
		var eventRec []byte
		_, err = pgx.ForEachRow(rows, []any{&taken, &endpointID, &subject, &eventID, &eventType, &attempts, &at, &eventRec}, func() error {
			if !taken {
				earliest(at.UTC())
				return nil
			}
			d := &onboarding.Delivery{EventID: eventID, EndpointID: endpointID, Subject: subject, Attempts: attempts,
				NextAt: at.UTC(), Owner: c.Owner, LeaseUntil: leaseUntil}
			if eventRec == nil {
				d.Event = &onboarding.Event{Type: onboarding.EventType(eventType)}
				expired = append(expired, d)
				return nil
			}
			var e onboarding.Event
			if err := record.Decode(eventRec, &e); err != nil {
				return err
			}
			ep := *endpoints[endpointID]
			d.Event, d.Endpoint = &e, &ep
			claimed = append(claimed, d)
			earliest(leaseUntil)
			return nil
		})
		if err != nil {
			return err
		}
		if len(expired) > 0 {
			if err := s.dropExpired(ctx, tx, expired, endpoints, c.Now); err != nil {
				return err
			}
			earliest(c.Now)
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return claimed, next, nil
}

// dropExpired drops the claimed heads ds, whose event expired, each with a
// log line at now, and makes the next of each one's subject its head.
func (s *Store) dropExpired(ctx context.Context, tx pgx.Tx, ds []*onboarding.Delivery, endpoints map[string]*onboarding.Endpoint, now time.Time) error {
	lines := make([]onboarding.DeliveryAttempt, len(ds))
	for i, d := range ds {
		if err := finishHead(ctx, tx, d.EndpointID, d.Subject, d.EventID, now); err != nil {
			return err
		}
		lines[i] = onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID,
			OrgID: endpoints[d.EndpointID].OrgID, Attempt: d.Attempts, At: now, Error: "not delivered: the event expired"}
	}
	return s.writeAttempts(ctx, tx, lines)
}

// finishHead deletes the head (endpointID, subject, eventID), which tx has
// locked, and makes the first delivery left in its queue the head, due at
// the later of now and its own time. Because tx locked the head before
// this statement began, every delivery queued behind it has committed and
// is seen (queueDeliveries).
func finishHead(ctx context.Context, tx pgx.Tx, endpointID, subject, eventID string, now time.Time) error {
	// Two statements, in one round trip: the new head is marked only once
	// the old one is gone (the index of heads is checked at once).
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM deliveries WHERE endpoint_id = $1 AND subject = $2 AND event_id = $3`, endpointID, subject, eventID)
	b.Queue(`UPDATE deliveries SET head = true, next_at = greatest(next_at, $3)
		WHERE endpoint_id = $1 AND subject = $2 AND event_id = (
			SELECT event_id FROM deliveries WHERE endpoint_id = $1 AND subject = $2
			ORDER BY event_id LIMIT 1)`, endpointID, subject, now)
	return tx.SendBatch(ctx, b).Close()
}

// FinishDeliveries records a batch of attempts in one transaction, in
// order. It first locks the batch's deliveries, in key order (so that
// batches, drops and queueings wait for each other rather than deadlock),
// and writes every log line. Then, for each attempt whose delivery is
// still under the claim it was given (Owner and LeaseUntil), it applies
// the result: a done delivery leaves the queue and the next of its
// subject becomes the head, due at the later of the attempt and its own
// time; another is due again at RetryAt, unclaimed. Result.Endpoint
// changes the endpoint in the same transaction, written only when that
// changes it (attempts of one endpoint in a batch see each other's
// changes); the endpoint's row is locked only then, so that finishes do
// not queue up behind one another for an endpoint whose health stays
// the same. When a result disables the endpoint, its queue is dropped with
// log lines at the attempt's time once the batch has committed
// (drainEndpointQueue), before FinishDeliveries returns; a drop that fails
// is logged, not answered (the sweep drops what it left). lost[i] reports
// that the claim of the i-th attempt no longer held: only its log line was
// written. err is about the whole batch, which then recorded nothing.
func (s *Store) FinishDeliveries(ctx context.Context, batch []onboarding.FinishedDelivery) (lost []bool, err error) {
	var disabled map[string]time.Time // endpoint id → the attempt that disabled it
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		lost, disabled = make([]bool, len(batch)), map[string]time.Time{}
		n := len(batch)
		eps, subjects, events := make([]string, n), make([]string, n), make([]string, n)
		lines := make([]onboarding.DeliveryAttempt, n)
		for i, f := range batch {
			d := f.Delivery
			eps[i], subjects[i], events[i], lines[i] = d.EndpointID, d.Subject, d.EventID, f.Result.Attempt
		}
		type key struct{ endpoint, subject, event string }
		type claim struct {
			owner string
			until time.Time
		}
		held := map[key]claim{}
		rows, err := tx.Query(ctx, `SELECT d.endpoint_id, d.subject, d.event_id, coalesce(d.owner, ''), d.lease_until
			FROM deliveries d
			JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[])) AS b(endpoint_id, subject, event_id)
				ON d.endpoint_id = b.endpoint_id AND d.subject = b.subject AND d.event_id = b.event_id
			ORDER BY d.endpoint_id, d.subject, d.event_id FOR UPDATE OF d`, eps, subjects, events)
		if err != nil {
			return err
		}
		var k key
		var owner string
		var until *time.Time
		if _, err := pgx.ForEachRow(rows, []any{&k.endpoint, &k.subject, &k.event, &owner, &until}, func() error {
			if until != nil {
				held[k] = claim{owner, *until}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := s.writeAttempts(ctx, tx, lines); err != nil {
			return err
		}
		changes := endpointChanges{tx: tx, current: map[string]*onboarding.Endpoint{}, locked: map[string]bool{}}
		for i, f := range batch {
			d, r := f.Delivery, f.Result
			k := key{d.EndpointID, d.Subject, d.EventID}
			c, ok := held[k]
			if !ok || d.Owner == "" || c.owner != d.Owner || !c.until.Equal(d.LeaseUntil) {
				lost[i] = true
				continue
			}
			delete(held, k) // a second finish of it in the batch is lost
			if r.Done {
				if err := finishHead(ctx, tx, d.EndpointID, d.Subject, d.EventID, r.Attempt.At); err != nil {
					return err
				}
			} else if _, err := tx.Exec(ctx, `UPDATE deliveries SET attempts = attempts + 1, next_at = $4, owner = NULL, lease_until = NULL
				WHERE endpoint_id = $1 AND subject = $2 AND event_id = $3`, d.EndpointID, d.Subject, d.EventID, r.RetryAt); err != nil {
				return err
			}
			if r.Endpoint == nil {
				continue
			}
			off, err := changes.apply(ctx, d.EndpointID, r.Endpoint)
			if err != nil {
				return err
			}
			if off {
				disabled[d.EndpointID] = r.Attempt.At
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(disabled)) {
		if err := s.drainEndpointQueue(ctx, id, disabled[id]); err != nil {
			s.log.Error("webhooks: drop the queue of the endpoint an attempt disabled", "endpoint_id", id, "err", err)
		}
	}
	return lost, nil
}

// endpointChanges applies the endpoint changes of a batch of results in
// one transaction.
type endpointChanges struct {
	tx      pgx.Tx
	current map[string]*onboarding.Endpoint // each endpoint as the batch left it so far
	locked  map[string]bool                 // endpoints whose row tx locked
}

// apply applies change to the endpoint id (a missing endpoint is left
// alone) and writes it when that changed it, reporting whether that
// disabled it. The endpoint is first read without a lock; only when change
// would change it is its row locked and read again, and change applied to
// what it read then.
func (c *endpointChanges) apply(ctx context.Context, id string, change func(*onboarding.Endpoint)) (disabled bool, err error) {
	ep, ok := c.current[id]
	if !ok {
		if ep, err = c.read(ctx, id, ""); err != nil || ep == nil {
			return false, err
		}
		c.current[id] = ep
	}
	changed, before, err := applied(ep, change)
	if err != nil || bytes.Equal(before, changed.rec) {
		return false, err
	}
	if !c.locked[id] {
		// FOR UPDATE when the change enables or disables the endpoint
		// (which waits for the transactions queueing for it), else FOR NO
		// KEY UPDATE, which does not.
		lock := "FOR NO KEY UPDATE"
		if changed.ep.Enabled != ep.Enabled {
			lock = "FOR UPDATE"
		}
		fresh, err := c.read(ctx, id, lock)
		if err != nil || fresh == nil {
			return false, err
		}
		c.locked[id] = true
		ep = fresh
		if changed, before, err = applied(ep, change); err != nil {
			return false, err
		}
		if bytes.Equal(before, changed.rec) {
			c.current[id] = ep
			return false, nil
		}
	}
	if changed.ep.ID != id || changed.ep.OrgID != ep.OrgID {
		return false, fmt.Errorf("finish delivery: endpoint %s: id and organization are immutable", id)
	}
	if _, err := c.tx.Exec(ctx, `UPDATE webhook_endpoints SET enabled = $2, record = $3 WHERE id = $1`,
		id, changed.ep.Enabled, changed.rec); err != nil {
		return false, err
	}
	c.current[id] = changed.ep
	return ep.Enabled && !changed.ep.Enabled, nil
}

// encodedEndpoint is an endpoint and its record.
type encodedEndpoint struct {
	ep  *onboarding.Endpoint
	rec []byte
}

// applied applies change to a copy of ep, returning the copy with its
// record and ep's record.
func applied(ep *onboarding.Endpoint, change func(*onboarding.Endpoint)) (encodedEndpoint, []byte, error) {
	before, err := record.Encode(ep)
	if err != nil {
		return encodedEndpoint{}, nil, err
	}
	cp, err := decodeEndpoint(before) // a deep copy
	if err != nil {
		return encodedEndpoint{}, nil, err
	}
	change(cp)
	after, err := record.Encode(cp)
	if err != nil {
		return encodedEndpoint{}, nil, err
	}
	return encodedEndpoint{cp, after}, before, nil
}

// read reads the endpoint id with the locking clause lock (empty: none);
// nil when there is none.
func (c *endpointChanges) read(ctx context.Context, id, lock string) (*onboarding.Endpoint, error) {
	var rec []byte
	err := c.tx.QueryRow(ctx, `SELECT record FROM webhook_endpoints WHERE id = $1 `+lock, id).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeEndpoint(rec)
}
