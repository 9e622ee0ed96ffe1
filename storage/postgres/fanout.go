package postgres

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// The fan-out of a change's events in the round trip that writes the
// change. Which endpoints an event is queued for depends on the
// organization's enabled endpoints (Endpoint.Wants), which change
// rarely; the Store keeps each organization's as the last transaction
// that queued its events read them (endpointCache). A change whose
// organizations the cache knows queues, beside its own statements, the
// events, a statement per organization that locks its enabled endpoints
// FOR KEY SHARE (as writeEvents does) and fails with record_changed's
// error unless their records are the cached ones, byte for byte, and the
// deliveries the cached endpoints want, with a statement that fails the
// same way when a queue's head was committed after its snapshot. So the
// transaction commits only what writeEvents would have queued in it;
// when a guard fails it aborts, nothing is written, and the change is
// written again with writeEvents, which reads the endpoints in the
// transaction (an extra round trip or two) and caches them for the next.

// errFanOutStale is a fan-out's guard failing: the cached endpoints are
// not the organization's any more, or a queue got a head meanwhile.
var errFanOutStale = errors.New("the cached endpoints or queue heads changed")

// maxCachedOrgs bounds the organizations endpointCache keeps; past it,
// the cache starts afresh.
const maxCachedOrgs = 4096

// endpointCache keeps, by organization, its enabled endpoints in id
// order, with their records as their rows hold them.
type endpointCache struct {
	mu    sync.Mutex
	byOrg map[string]orgEndpoints
}

// orgEndpoints is an organization's enabled endpoints and their records.
type orgEndpoints struct {
	eps  []*onboarding.Endpoint // shared, never changed
	recs [][]byte
}

func newEndpointCache() *endpointCache {
	return &endpointCache{byOrg: map[string]orgEndpoints{}}
}

// get returns org's cached endpoints; ok is false when it has none.
func (c *endpointCache) get(org string) (orgEndpoints, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byOrg[org]
	return e, ok
}

// put caches e as org's enabled endpoints.
func (c *endpointCache) put(org string, e orgEndpoints) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byOrg[org]; !ok && len(c.byOrg) >= maxCachedOrgs {
		clear(c.byOrg)
	}
	c.byOrg[org] = e
}

// forget drops what the cache holds of org.
func (c *endpointCache) forget(org string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byOrg, org)
}

// eventRows is events as their rows store them, and their organizations
// in the order they first appear.
type eventRows struct {
	events []*onboarding.Event
	recs   [][]byte
	orgs   []string
}

// encodeEvents checks events' ids and encodes their records.
func encodeEvents(events []*onboarding.Event) (eventRows, error) {
	r := eventRows{events: events, recs: make([][]byte, len(events))}
	for i, e := range events {
		if _, ok := onboarding.EventSeq(e.ID); !ok {
			return eventRows{}, fmt.Errorf("store event: %q is not an event id", e.ID)
		}
		rec, err := record.Encode(e)
		if err != nil {
			return eventRows{}, err
		}
		r.recs[i] = rec
		if !slices.Contains(r.orgs, e.OrgID) {
			r.orgs = append(r.orgs, e.OrgID)
		}
	}
	return r, nil
}

// insertEventSQL stores event $1 ($2 organization, $3 type, $4 time, $5
// record), expiring $6 after it happened: one row, so that its prepared
// plan is reused.
const insertEventSQL = `INSERT INTO events (id, org_id, type, at, expires_at, record)
	VALUES ($1, $2, $3, $4::timestamptz, $4::timestamptz + $6::interval, $5)`

// queue queues into b the inserts of r's events; an event id already
// stored fails the batch with errWebhookDuplicate.
func (r eventRows) queue(b *pgx.Batch) {
	for i, e := range r.events {
		b.Queue(insertEventSQL, e.ID, e.OrgID, string(e.Type), e.At, r.recs[i], onboarding.EventRetention).Fn = func(br pgx.BatchResults) error {
			_, err := br.Exec()
			if keyTaken(err) {
				return fmt.Errorf("store events: %w", errWebhookDuplicate)
			}
			return err
		}
	}
}

// checkEndpointsSQL locks organization $1's enabled endpoints FOR KEY
// SHARE, in id order, and fails with record_changed's error unless their
// records, in that order, are $2.
const checkEndpointsSQL = `SELECT CASE WHEN coalesce(array_agg(e.record ORDER BY e.id), '{}') = $2::bytea[] THEN 0 ELSE record_changed() END
	FROM (SELECT id, record FROM webhook_endpoints WHERE org_id = $1 AND enabled ORDER BY id FOR KEY SHARE) e`

// fanOut is the statements of a change's events whose endpoints are
// cached: the events, and the deliveries the cached endpoints want, in
// the order queueOneSQL queues them (by endpoint, subject and event).
type fanOut struct {
	rows       eventRows
	cached     []orgEndpoints // of rows.orgs
	deliveries []newDelivery
}

// planFanOut returns the fan-out of r from the cache; ok is false when
// the cache does not know one of r's organizations.
func (s *Store) planFanOut(r eventRows) (f fanOut, ok bool) {
	f = fanOut{rows: r, cached: make([]orgEndpoints, len(r.orgs))}
	for i, org := range r.orgs {
		if f.cached[i], ok = s.endpoints.get(org); !ok {
			return fanOut{}, false
		}
		for _, e := range r.events {
			for _, ep := range f.cached[i].eps {
				if ep.Wants(e) {
					f.deliveries = append(f.deliveries, newDelivery{endpoint: ep.ID, subject: e.Subject, event: e.ID, typ: e.Type, at: e.At})
				}
			}
		}
	}
	slices.SortFunc(f.deliveries, func(a, b newDelivery) int {
		return cmp.Or(strings.Compare(a.endpoint, b.endpoint), strings.Compare(a.subject, b.subject), strings.Compare(a.event, b.event))
	})
	return f, true
}

// queueOneSQL queues delivery $3 (event type $4, due at $5) in the queue
// of endpoint $1 and subject $2, as queueSQL does one delivery: as
// the queue's head when it has none (the head it finds is locked FOR KEY
// SHARE), else behind it. When a head committed after its snapshot made
// the unique index of heads refuse it, it fails with record_changed's
// error. Its parameters are scalars, so that its prepared plan is reused;
// ORDER BY event_id makes that plan, often made while the table is still
// empty, look the head up in the primary key by endpoint and subject
// (which yields that order), not in deliveries_due by endpoint alone,
// which would read every head of the endpoint.
const queueOneSQL = `WITH headed AS MATERIALIZED (
	SELECT 1 FROM deliveries WHERE endpoint_id = $1::text AND subject = $2::text AND head ORDER BY event_id FOR KEY SHARE
), inserted AS (
	INSERT INTO deliveries (endpoint_id, subject, event_id, event_type, head, next_at)
	SELECT $1::text, $2::text, $3::text, $4::text, NOT EXISTS (SELECT 1 FROM headed), $5::timestamptz
	ON CONFLICT DO NOTHING
	RETURNING 1
)
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM headed) AND NOT EXISTS (SELECT 1 FROM inserted) THEN record_changed() ELSE 0 END`

// queue queues into b the statements of f: the events, a guard per
// organization and the deliveries, each failing the batch with
// errFanOutStale when the cache proves out of date. The deliveries of
// one queue go in event order, each seeing the one before as its head.
func (f fanOut) queue(b *pgx.Batch) {
	f.rows.queue(b)
	for i, org := range f.rows.orgs {
		b.Queue(checkEndpointsSQL, org, f.cached[i].recs).Fn = staleOn
	}
	for _, d := range f.deliveries {
		b.Queue(queueOneSQL, d.endpoint, d.subject, d.event, string(d.typ), d.at).Fn = staleOn
	}
}

// staleOn reads a guard's result, turning its failure into errFanOutStale.
func staleOn(br pgx.BatchResults) error {
	_, err := br.Exec()
	if recordChanged(err) {
		return errFanOutStale
	}
	return err
}

// cacheEndpoints caches, for each of orgs, its enabled endpoints among
// eps (in id order), whose records are recs.
func (s *Store) cacheEndpoints(orgs []string, eps []*onboarding.Endpoint, recs [][]byte) {
	for _, org := range orgs {
		var e orgEndpoints
		for i, ep := range eps {
			if ep.OrgID == org {
				e.eps = append(e.eps, ep)
				e.recs = append(e.recs, recs[i])
			}
		}
		if e.recs == nil {
			e.recs = [][]byte{}
		}
		s.endpoints.put(org, e)
	}
}
