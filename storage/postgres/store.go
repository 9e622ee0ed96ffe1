// Package postgres keeps onboard's records in PostgreSQL, for partners who
// run several instances or already operate a database: it implements
// onboarding.Store with the same behaviour as the embedded Badger store.
// Each aggregate is one row holding its record (the bytes of package
// record, so API answers do not change with the backend) beside the
// indexed columns its queries need; a record and its index rows change in
// one transaction, updates lock their row (SELECT … FOR UPDATE) instead
// of the embedded store's per-process locks, background work is claimed
// with FOR UPDATE SKIP LOCKED and a lease, and expiring rows carry an
// expires_at that reads respect and a sweep deletes. The schema is the
// embedded migrations (migrate.go).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"onboard/onboarding"
)

// maxAttempts bounds the tries of a transaction that lost a serialization
// failure or a deadlock to a concurrent one.
const maxAttempts = 8

// Options configures Open.
type Options struct {
	// MaxConnections bounds this instance's pool; default 10.
	MaxConnections int
	// Logger receives the store's own reports (sweeps, migrations); default discard.
	Logger *slog.Logger
	// Now is the store's clock for the rows it writes itself and for
	// expiry; default time.Now.
	Now func() time.Time
	// SweepInterval is how often the store deletes expired rows
	// (sweep.go); default 10 minutes, negative: never (SweepExpired
	// still does it when called).
	SweepInterval time.Duration
	// CacheBytes is the budget of the cache of decoded applications
	// (appcache.go), in bytes of their records' JSON; default 8 MiB,
	// negative: no cache.
	CacheBytes int
}

// Store is the PostgreSQL onboarding.Store. Its methods return
// onboarding.ErrNotFound for missing records, and an error matching
// onboarding.ErrWriteConflict when a transaction still lost to concurrent
// ones after its retries; every other error is unexpected.
type Store struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	now  func() time.Time

	// apps keeps decoded applications by the version of their row
	// (appcache.go).
	apps *appCache
	// endpoints keeps organizations' enabled endpoints for the fan-out of
	// their events (fanout.go).
	endpoints *endpointCache
	// notifyWanted holds a notification of queued deliveries the
	// notifier has yet to send (notifier.go).
	notifyWanted chan struct{}
	// ids issues the ULIDs of activity entries (activity.go).
	ids ulids
	// stop, closed by Close, ends the background goroutines, which
	// background counts (the sweep, saves under way).
	stop       chan struct{}
	background sync.WaitGroup
	closeOnce  sync.Once
	// closing, held for writing by Close while it marks the Store closed
	// and for reading by whoever starts background work, orders the
	// background's Add before Close's Wait; closed is set under it.
	closing sync.RWMutex
	closed  bool
	// stopWebhookSweep stops the webhook sweep's goroutine (webhooksweep.go).
	stopWebhookSweep func()
	// writes groups the one-batch writes that arrive together
	// (groupcommit.go).
	writes *commitGroup
}

// Open connects to the database at url (a postgres:// URL or a libpq
// key=value string), checks that it answers, and brings its schema up to
// date under an advisory lock, so that instances starting together
// migrate once.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres_url: %w", err)
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = 10
	}
	cfg.MaxConns = int32(o.MaxConnections)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	switch {
	case o.CacheBytes == 0:
		o.CacheBytes = defaultCacheBytes
	case o.CacheBytes < 0:
		o.CacheBytes = 0
	}
	s := &Store{pool: pool, log: o.Logger, now: o.Now, apps: newAppCache(o.CacheBytes), endpoints: newEndpointCache(),
		notifyWanted: make(chan struct{}, 1), stop: make(chan struct{}),
		writes: newCommitGroup(pool, groupSending(o.MaxConnections), maxGroupWrites)}
	if err := s.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = defaultSweepInterval
	}
	s.startNotifier()
	if o.SweepInterval > 0 {
		s.background.Go(func() { s.sweepLoop(o.SweepInterval) })
	}
	s.stopWebhookSweep = s.startWebhookSweep()
	return s, nil
}

// Close stops the background work, waits for the writes under way
// (SaveResponse's) and closes the pool, waiting for the connections in
// use to be returned. Calls after the first do nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Lock()
		s.closed = true
		s.closing.Unlock()
		close(s.stop)
		s.stopWebhookSweep()
		s.background.Wait()
		s.pool.Close()
	})
	return nil
}

// errClosed answers the calls of a closed Store that say so, as the
// embedded store's do.
var errClosed = errors.New("the store is closed")

// Ping checks that the database answers a query; once the Store is
// closed, it answers errClosed.
func (s *Store) Ping(ctx context.Context) error {
	select {
	case <-s.stop:
		return errClosed
	default:
	}
	if _, err := s.pool.Exec(ctx, "SELECT 1"); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// inTx runs fn in a transaction and commits it, running it again (up to
// maxAttempts in all) when PostgreSQL aborted it for a serialization
// failure or a deadlock; fn must then be safe to run again. An error
// from fn rolls back and is returned unchanged.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for range maxAttempts {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", onboarding.ErrWriteConflict, err)
}

// retryable reports whether err is PostgreSQL aborting a transaction for
// a serialization failure (40001) or a deadlock (40P01), or a unique key
// taken by a concurrent insert that a second try sees (23505 is not one:
// callers that expect it handle it themselves).
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == "40001" || pe.Code == "40P01"
}

// notFound turns pgx.ErrNoRows into onboarding.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return onboarding.ErrNotFound
	}
	return err
}

// The PostgreSQL Store keeps everything the embedded one does.
var _ onboarding.Store = (*Store)(nil)

// DatabaseBytes is the disk space the store's database takes
// (pg_database_size), tables, indexes and TOAST included.
func (s *Store) DatabaseBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
	return n, err
}
