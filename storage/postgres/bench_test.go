package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
	"onboard/storage/storetest/fixture"
)

// The benchmarks run from 32 goroutines at once (parallelism 16 on 2
// cores), as the API's clients do, over the default pool of 10
// connections: the ceilings are a raw durable INSERT of a record-sized
// value and a raw point read of one, the operations the Store's create,
// get and PATCH are compared with.

const benchParallelism = 16

// benchStore opens a Store on a fresh database for b.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), pgtestURL(b), Options{SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchParallel runs op from the benchmark's goroutines
// (benchParallelism per core), i counting the operations from 1.
func benchParallel(b *testing.B, op func(i int64) error) {
	var n atomic.Int64
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(n.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchRecord is the record bytes of a typical application.
func benchRecord(b testing.TB) []byte {
	b.Helper()
	rec, err := record.Encode(fixture.App("acme", 1, onboarding.StatusSent))
	if err != nil {
		b.Fatal(err)
	}
	return rec
}

// benchKV creates the key-value table of the ceilings and returns the
// record they write.
func benchKV(b *testing.B, s *Store) []byte {
	b.Helper()
	if _, err := s.pool.Exec(context.Background(), `CREATE TABLE kv (key uuid PRIMARY KEY, value bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return benchRecord(b)
}

// BenchmarkCeilingInsert: one durable single-statement INSERT of a
// record per operation.
func BenchmarkCeilingInsert(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	rec := benchKV(b, s)
	benchParallel(b, func(_ int64) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO kv (key, value) VALUES ($1, $2)`, uuid.New(), rec)
		return err
	})
}

// BenchmarkCeilingGet: one point read of a record by its key.
func BenchmarkCeilingGet(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	rec := benchKV(b, s)
	keys := make([]uuid.UUID, 1000)
	for i := range keys {
		keys[i] = uuid.New()
		if _, err := s.pool.Exec(ctx, `INSERT INTO kv (key, value) VALUES ($1, $2)`, keys[i], rec); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var v []byte
		for pb.Next() {
			if err := s.pool.QueryRow(ctx, `SELECT value FROM kv WHERE key = $1`, keys[n.Add(1)%int64(len(keys))]).Scan(&v); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchApps creates n applications with their first activity entry.
func benchApps(b *testing.B, s *Store, n int) []*onboarding.Application {
	b.Helper()
	apps := make([]*onboarding.Application, n)
	for i := range apps {
		apps[i] = fixture.App("acme", i, onboarding.StatusSent)
		if err := s.CreateApplication(context.Background(), apps[i], onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}}); err != nil {
			b.Fatal(err)
		}
	}
	return apps
}

// BenchmarkCreateApplication: a create with its activity entry.
func BenchmarkCreateApplication(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	benchParallel(b, func(_ int64) error {
		app := fixture.App("acme", 1, onboarding.StatusSent)
		app.Participants[0].LinkSlug = rand.Text()
		return s.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}})
	})
}

// BenchmarkGetApplication: a read of an application, decoded.
func BenchmarkGetApplication(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	apps := benchApps(b, s, 1000)
	benchParallel(b, func(i int64) error {
		return s.ReadApplication(ctx, apps[i%int64(len(apps))].ID, func(*onboarding.Application) error { return nil })
	})
}

// BenchmarkPatchApplication: an update of one field with its activity
// entry, of applications chosen in turn among 1,000.
func BenchmarkPatchApplication(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	apps := benchApps(b, s, 1000)
	benchParallel(b, func(i int64) error {
		_, err := s.UpdateApplication(ctx, apps[i%int64(len(apps))].ID, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Data.Fields["website"] = json.RawMessage(fmt.Sprintf(`"https://example.com/%d"`, i))
			now := time.Now()
			a.UpdatedAt = now
			return onboarding.Changes{Log: []onboarding.Activity{{At: now, Action: onboarding.ActionFieldsUpdated, Fields: []string{"website"}}}}, nil
		})
		return err
	})
}

// BenchmarkCreateApplicationWithEvent: a create with its activity entry
// and an application.created event, queued for the organization's one
// endpoint in the same transaction, as the API's creates are.
func BenchmarkCreateApplicationWithEvent(b *testing.B) {
	benchCreateWithEvent(b, &onboarding.Endpoint{ID: "we_" + ulid.Make().String(), OrgID: "acme", URL: "https://hooks.example.com/", Enabled: true, CreatedAt: t0})
}

// BenchmarkCreateApplicationWithUnwantedEvent: the same, but the
// organization's one enabled endpoint subscribed to other events: the
// event is stored and queued for nobody.
func BenchmarkCreateApplicationWithUnwantedEvent(b *testing.B) {
	benchCreateWithEvent(b, &onboarding.Endpoint{ID: "we_" + ulid.Make().String(), OrgID: "acme", URL: "https://hooks.example.com/", Enabled: true, CreatedAt: t0,
		Events: []onboarding.EventType{onboarding.EventApplicationSubmitted}})
}

// BenchmarkCreateApplicationWithEventNoEndpoint: the same, for an
// organization without endpoints.
func BenchmarkCreateApplicationWithEventNoEndpoint(b *testing.B) {
	benchCreateWithEvent(b, nil)
}

// benchCreateWithEvent runs creates with an application.created event,
// after creating ep when it is not nil.
func benchCreateWithEvent(b *testing.B, ep *onboarding.Endpoint) {
	s := benchStore(b)
	ctx := context.Background()
	if ep != nil {
		if err := s.CreateEndpoint(ctx, ep); err != nil {
			b.Fatal(err)
		}
	}
	benchParallel(b, func(_ int64) error {
		app := fixture.App("acme", 1, onboarding.StatusSent)
		app.Participants[0].LinkSlug = rand.Text()
		ch := onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)},
			Events: []*onboarding.Event{testEvent(onboarding.EventApplicationCreated, "acme", app.ID)}}
		return s.CreateApplication(ctx, app, ch)
	})
}
