package storetest

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"onboard/onboarding"
	"onboard/storage"
	"onboard/storage/postgres"
	"onboard/storage/postgres/pgtest"
)

// EnvStore names the variable that chooses the backend of the stores the
// service-level tests open (Open): BackendBadger when unset.
const EnvStore = "ONBOARD_TEST_STORE"

// The backends a test store may be opened on.
const (
	BackendBadger   = "badger"
	BackendPostgres = "postgres"
)

// Store is what the service-level tests use of a store: the
// onboarding.Store, the idempotency records the server keeps in it, its
// readiness probe, and Close.
type Store interface {
	onboarding.Store
	ResponseStore
	Ping(ctx context.Context) error
	Close() error
}

// Data is where a test store keeps its records, so that a test can open
// it again, as a restarted server does.
type Data struct {
	Backend  string
	Location string // Badger's directory, or PostgreSQL's URL
}

// Open returns a store on fresh data for t, on the backend EnvStore names,
// closed when t ends. A PostgreSQL store gets a database of its own on the
// server pgtest names, and skips t without one.
func Open(t testing.TB) Store {
	t.Helper()
	return NewData(t).Open(t)
}

// NewData returns fresh, empty data for t's stores, on the backend
// EnvStore names.
func NewData(t testing.TB) Data {
	t.Helper()
	backend := os.Getenv(EnvStore)
	if backend == "" {
		backend = BackendBadger
	}
	return NewDataOn(t, backend)
}

// NewDataOn returns fresh, empty data for t's stores on backend: a
// temporary directory, or a new database (pgtest.URL).
func NewDataOn(t testing.TB, backend string) Data {
	t.Helper()
	switch backend {
	case BackendBadger:
		return Data{Backend: backend, Location: filepath.Join(t.TempDir(), "db")}
	case BackendPostgres:
		return Data{Backend: backend, Location: pgtest.URL(t)}
	}
	t.Fatalf("%s=%q: the test stores are %q", EnvStore, backend, []string{BackendBadger, BackendPostgres})
	return Data{}
}

// Open opens a store on d for t, closed when t ends. Only one store may be
// open on a Badger directory at a time; any number on a PostgreSQL
// database.
func (d Data) Open(t testing.TB) Store {
	t.Helper()
	return d.open(t, nil)
}

// open opens a store on d whose clock is now (nil: time.Now).
func (d Data) open(t testing.TB, now func() time.Time) Store {
	t.Helper()
	if now == nil {
		now = time.Now
	}
	var s Store
	switch d.Backend {
	case BackendBadger:
		b, err := storage.Open(d.Location, storage.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		s = b
	case BackendPostgres:
		p, err := postgres.Open(context.Background(), d.Location, postgres.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		s = p
	default:
		t.Fatalf("no test store on backend %q", d.Backend)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// OpenerOn returns an Opener of the suite for backend: a restart closes a
// store and opens its data again; a second store beside an open one is
// opened on every backend but Badger, whose directory one store holds.
func OpenerOn(backend string) Opener {
	var mu sync.Mutex
	data := map[onboarding.Store]Data{}
	return func(t *testing.T, o Options) onboarding.Store {
		t.Helper()
		of := o.Reopen
		if of == nil {
			of = o.Beside
		}
		mu.Lock()
		d, known := data[of]
		mu.Unlock()
		switch {
		case of == nil:
			d = NewDataOn(t, backend)
		case !known:
			t.Fatal("the Options name a store this Opener did not open")
		case o.Beside != nil && backend == BackendBadger:
			return nil
		case o.Reopen != nil:
			if err := o.Reopen.(Store).Close(); err != nil {
				t.Fatal(err)
			}
		}
		s := d.open(t, o.Now)
		mu.Lock()
		data[s] = d
		mu.Unlock()
		return s
	}
}

// Activity returns the entries of subjectID's activity log, oldest first.
func Activity(ctx context.Context, s onboarding.Store, subjectID string) ([]onboarding.Activity, error) {
	var out []onboarding.Activity
	err := s.ActivityLog(ctx, subjectID, func(_ *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
		for e, err := range entries {
			if err != nil {
				return err
			}
			out = append(out, e.Activity)
		}
		return nil
	})
	return out, err
}

// Tamperer is a store that can rewrite an activity log behind its hash
// chain's back, for the tests of the chain's verifier.
type Tamperer interface {
	TamperWithActivity(ctx context.Context, subjectID string,
		edit func(head *onboarding.ActivityHead, log []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity)) error
}

// TamperWithActivity rewrites subjectID's log in s with edit (see
// storage.Store.TamperWithActivity), or skips t when s cannot.
func TamperWithActivity(t testing.TB, s onboarding.Store, subjectID string,
	edit func(head *onboarding.ActivityHead, log []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity)) error {
	t.Helper()
	tt, ok := s.(Tamperer)
	if !ok {
		t.Skipf("the %T store cannot rewrite an activity log", s)
	}
	return tt.TamperWithActivity(context.Background(), subjectID, edit)
}

var (
	_ Store = (*storage.Store)(nil)
	_ Store = (*postgres.Store)(nil)
)
