package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/postgres/pgtest"
)

// hookEnv is a database of its own for the webhook tests, with a Store on
// it (s; more with open, as other instances), a clock that starts now
// (shared by every Store it opens) and makers of events and endpoints.
type hookEnv struct {
	t   *testing.T
	url string
	s   *Store
	now time.Time

	mu      sync.Mutex // guards entropy
	entropy *ulid.MonotonicEntropy
}

func newHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	h := &hookEnv{t: t, url: pgtest.URL(t), now: time.Now().UTC().Truncate(time.Millisecond),
		entropy: ulid.Monotonic(ulid.DefaultEntropy(), 0)}
	h.s = h.open()
	return h
}

// open opens another Store on h's database (another instance), closed
// when the test ends.
func (h *hookEnv) open() *Store {
	h.t.Helper()
	s, err := Open(context.Background(), h.url, Options{MaxConnections: 4, Now: func() time.Time { return h.now }})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { s.Close() })
	return s
}

// at is h.now plus d.
func (h *hookEnv) at(d time.Duration) time.Time { return h.now.Add(d) }

// ulid returns a new ULID of at's time.
func (h *hookEnv) ulid(at time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return ulid.MustNew(ulid.Timestamp(at), h.entropy).String()
}

// event builds (without storing) an event of org about subject at at.
func (h *hookEnv) event(typ onboarding.EventType, org, subject string, at time.Time) *onboarding.Event {
	id := "evt_" + h.ulid(at)
	if subject == "" {
		subject = id
	}
	return &onboarding.Event{ID: id, Type: typ, OrgID: org, Subject: subject, At: at,
		Body: json.RawMessage(fmt.Sprintf(`{"id":%q,"type":%q,"data":{}}`, id, typ))}
}

// add stores events with AddEvent.
func (h *hookEnv) add(events ...*onboarding.Event) {
	h.t.Helper()
	for _, e := range events {
		if err := h.s.AddEvent(context.Background(), e); err != nil {
			h.t.Fatalf("AddEvent(%s): %v", e.Type, err)
		}
	}
}

// write stores events with writeEvents, in one transaction.
func (h *hookEnv) write(events ...*onboarding.Event) {
	h.t.Helper()
	if err := h.s.inTx(context.Background(), func(tx pgx.Tx) error {
		return h.s.writeEvents(context.Background(), tx, events)
	}); err != nil {
		h.t.Fatal(err)
	}
}

// endpoint creates an enabled endpoint of org receiving types (none: all).
func (h *hookEnv) endpoint(org string, types ...onboarding.EventType) *onboarding.Endpoint {
	h.t.Helper()
	ep := &onboarding.Endpoint{ID: "we_" + h.ulid(h.now), OrgID: org,
		URL: "https://hooks.example.com/" + org, Events: types, Enabled: true, CreatedAt: h.now,
		Secrets: []onboarding.SigningSecret{{Key: []byte("k"), CreatedAt: h.now}}}
	if err := h.s.CreateEndpoint(context.Background(), ep); err != nil {
		h.t.Fatal(err)
	}
	return ep
}

// claim claims up to limit deliveries for owner at at, with a one-minute
// lease, through s (h.s when nil).
func (h *hookEnv) claimOn(s *Store, owner string, at time.Time, limit int) ([]*onboarding.Delivery, time.Time) {
	h.t.Helper()
	if s == nil {
		s = h.s
	}
	got, next, err := s.ClaimDeliveries(context.Background(), onboarding.Claim{Owner: owner, Now: at, Lease: time.Minute, Limit: limit})
	if err != nil {
		h.t.Fatal(err)
	}
	return got, next
}

func (h *hookEnv) claim(owner string, at time.Time, limit int) ([]*onboarding.Delivery, time.Time) {
	h.t.Helper()
	return h.claimOn(nil, owner, at, limit)
}

// finish finishes d with a log line at at.
func (h *hookEnv) finish(d *onboarding.Delivery, at time.Time, r onboarding.DeliveryResult) error {
	return h.finishOn(h.s, d, at, r)
}

func (h *hookEnv) finishOn(s *Store, d *onboarding.Delivery, at time.Time, r onboarding.DeliveryResult) error {
	r.Attempt = onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: d.EndpointID, OrgID: d.Event.OrgID,
		Attempt: d.Attempts + 1, At: at, StatusCode: 200, Success: r.Done}
	return s.FinishDelivery(context.Background(), d, r)
}

// hookPair names a delivery by endpoint and event.
func hookPair(endpointID, eventID string) string { return endpointID + " " + eventID }

// hookPairs names deliveries, sorted.
func hookPairs(ds []*onboarding.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, hookPair(d.EndpointID, d.EventID))
	}
	sort.Strings(out)
	return out
}

// queuedRow is a row of the deliveries table.
type queuedRow struct {
	EndpointID, Subject, EventID string
	EventType                    onboarding.EventType
	Head                         bool
	Attempts                     int
	NextAt                       time.Time
	Owner                        string
	LeaseUntil                   time.Time
	DueAt                        time.Time
}

// queued returns every queued delivery of h's database by hookPair,
// after checking the queue's invariants (deliveryQueue).
func (h *hookEnv) queued() map[string]queuedRow {
	h.t.Helper()
	return deliveryQueue(h.t, h.s)
}

// deliveryQueue returns every queued delivery by hookPair, after checking
// the queue's invariants: every queue has exactly one head, and a
// delivery is due at its lease's end while claimed, else at its own time.
func deliveryQueue(t *testing.T, s *Store) map[string]queuedRow {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT endpoint_id, subject, event_id, event_type, head, attempts, next_at,
		coalesce(owner, ''), coalesce(lease_until, 'epoch'), due_at FROM deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]queuedRow{}
	heads := map[string]int{}
	var q queuedRow
	if _, err := pgx.ForEachRow(rows, []any{&q.EndpointID, &q.Subject, &q.EventID, &q.EventType, &q.Head, &q.Attempts, &q.NextAt,
		&q.Owner, &q.LeaseUntil, &q.DueAt}, func() error {
		if q.Owner == "" {
			q.LeaseUntil = time.Time{}
		}
		out[hookPair(q.EndpointID, q.EventID)] = q
		k := q.EndpointID + " " + q.Subject
		heads[k] += 0
		if q.Head {
			heads[k]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k, n := range heads {
		if n != 1 {
			t.Errorf("queue %s has %d heads", k, n)
		}
	}
	for _, q := range out {
		want := q.NextAt
		if q.Owner != "" {
			want = q.LeaseUntil
		}
		if !q.DueAt.Equal(want) {
			t.Errorf("%s → %s is due at %v, want %v", q.EndpointID, q.EventID, q.DueAt, want)
		}
	}
	return out
}

// CheckQueues checks the invariants of the delivery and RFI expiry
// queues: the Store suite (storetest) calls it after every operation
// that changes them.
func (s *Store) CheckQueues(t *testing.T) {
	t.Helper()
	deliveryQueue(t, s)
	rfiQueue(t, s)
}

// queuedPairs names the queued deliveries, sorted.
func (h *hookEnv) queuedPairs() []string {
	h.t.Helper()
	out := []string{}
	for k := range h.queued() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
