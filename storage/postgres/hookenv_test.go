package postgres

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/postgres/pgtest"
	"onboard/storage/storetest/fixture"
)

// hookEnv is a database of its own for the webhook tests, with a Store on
// it (fixture.Hooks; more with open, as other instances), all on the
// Hooks' clock.
type hookEnv struct {
	*fixture.Hooks[*Store]
	url string
}

func newHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	h := &hookEnv{Hooks: fixture.NewHooks[*Store](t), url: pgtest.URL(t)}
	h.S = h.open()
	return h
}

// open opens another Store on h's database (another instance), closed
// when the test ends.
func (h *hookEnv) open() *Store {
	h.T.Helper()
	s, err := Open(context.Background(), h.url, Options{MaxConnections: 4, Now: h.Clock})
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() { s.Close() })
	return s
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
	h.T.Helper()
	return deliveryQueue(h.T, h.S)
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
		out[fixture.Pair(q.EndpointID, q.EventID)] = q
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
	h.T.Helper()
	out := []string{}
	for k := range h.queued() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
