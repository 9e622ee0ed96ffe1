// Package storage keeps onboard's records in an embedded Badger database. It
// is the only package that imports Badger: it implements onboarding.Store
// with typed methods, owns the keyspace (keys.go), writes every index in the
// same transaction as its record, and runs value-log garbage collection.
package storage

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// maxAttempts bounds the retries of a transaction that lost a write conflict.
const maxAttempts = 8

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("the data directory is in use by another onboard process")

// Options configures Open.
type Options struct {
	Logger *slog.Logger // Badger's own messages at warning and above; default discard
	// GCInterval is how often value-log garbage collection runs; default 5 minutes.
	GCInterval time.Duration
	// Now is the time of the delivery log lines the store writes itself
	// (deliveries dropped when an endpoint is disabled); default time.Now.
	Now func() time.Time
	// AppCacheBytes is the budget of the decoded-applications cache
	// (appCache), in bytes of the records' JSON; 0 is the default, 8 MiB,
	// and a negative budget turns the cache off.
	AppCacheBytes int

	// freeBytes, for tests, is the free space of the filesystem holding
	// a directory; default freeBytes.
	freeBytes func(dir string) (int64, error)
}

// Store is the Badger-backed onboarding.Store. Its methods return
// onboarding.ErrNotFound for missing records, and an error matching
// onboarding.ErrWriteConflict (never badger.ErrConflict) when a transaction
// still lost write conflicts to concurrent ones after its retries, which
// the caller may try again; every other error is unexpected.
type Store struct {
	// db is the database; dbMu guards it against the reopen of a database
	// opened read-only for want of space (reopenWritable), which swaps it.
	// Every use of db holds dbMu for reading (rlockDB) for the whole
	// transaction, iteration or stream; the reopen takes it for writing
	// (lockDB). swapping is set while the reopen waits (reopen.go).
	db       *badger.DB
	dbMu     sync.RWMutex
	swapping atomic.Pointer[chan struct{}]
	bopts    badger.Options // the options of a database open for writing
	// closing, set as Close starts, stops reads from the application
	// cache, which do not touch db.
	closing atomic.Bool
	dir     string   // the database's directory, absolute and free of symbolic links (PageOut)
	lock    *os.File // holds an exclusive flock while the Store is open
	log     *slog.Logger
	now     func() time.Time

	seqMu sync.Mutex
	seq   *ulid.MonotonicEntropy

	// appLocks serialises read-modify-write transactions on one
	// application or RFI request (by a hash of its id, appLock): this
	// process owns the database, so concurrent updates queue instead of
	// failing with write conflicts. A lock is held through the commit's
	// fsync, so two updates of different applications that share one wait
	// a commit for nothing: appLockCount locks make that rare among the
	// updates a server runs at once.
	appLocks [appLockCount]sync.Mutex

	// rfiClaims serialises ClaimRFIExpiries: claims all read the front of
	// the expiry queue, so concurrent ones would mostly conflict.
	rfiClaims sync.Mutex

	// apps keeps decoded applications for the next read (appcache.go).
	apps *appCache
	// hot queues the updates of each application while one of its
	// updates leads (appcombine.go).
	hot appQueues
	// endpoints holds each organization's webhook endpoint ids
	// (endpointindex.go).
	endpoints *endpointIndex

	// updates queues application updates for groupLoop (groupcommit.go);
	// groupClosed, set by Close under groupMu, stops new ones.
	updates     chan *groupedUpdate
	groupMu     sync.RWMutex
	groupClosed bool
	groups      atomic.Int64 // groups committed whole, for tests

	// space refuses writes while the disk is nearly full (space.go).
	space *spaceGate

	// due bounds the due index from below, so that a claim need not walk
	// its deleted front (duefloor.go).
	due dueFloor

	stop      chan struct{}
	done      sync.WaitGroup
	closeOnce sync.Once
	// badgerErr is Badger's last error message, which a Close that gives
	// up names (closebound.go).
	badgerErr atomic.Pointer[string]
}

var _ onboarding.Store = (*Store)(nil)

// Open opens (creating when needed) the database in dir, with synchronous
// writes: an acknowledged write survives a crash.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.GCInterval <= 0 {
		opts.GCInterval = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch {
	case opts.AppCacheBytes == 0:
		opts.AppCacheBytes = defaultAppCacheBytes
	case opts.AppCacheBytes < 0:
		opts.AppCacheBytes = 0
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create database directory: %w", err)
	}
	real, err := filepath.Abs(dir)
	if err == nil {
		real, err = filepath.EvalSymlinks(real)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve database directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if opts.freeBytes == nil {
		opts.freeBytes = freeBytes
	}
	readOnly, err := openMode(dir, opts.freeBytes)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open database %s: %w", dir, err)
	}
	s := &Store{dir: real, lock: lock, log: opts.Logger, now: opts.Now, seq: ulid.Monotonic(rand.Reader, 0), apps: newAppCache(opts.AppCacheBytes), updates: make(chan *groupedUpdate, 2*maxGroup), stop: make(chan struct{})}
	bopts := badgerOptions(dir, slog.New(lastError{next: opts.Logger.Handler(), last: &s.badgerErr}))
	s.bopts = bopts
	open := badger.Open
	if readOnly != nil {
		open = openReadOnly
	}
	db, err := open(bopts)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open database %s: %w", dir, err)
	}
	s.db = db
	s.space = newSpaceGate(real, opts.freeBytes, s.spaceNeeded, opts.Logger, time.Now)
	if readOnly != nil {
		s.space.openedReadOnly(readOnly, s.reopenWritable)
	} else {
		_ = s.space.allow() // a start on a full disk says so at once
	}
	if err := s.checkSchema(); err != nil {
		db.Close()
		lock.Close()
		return nil, err
	}
	if s.endpoints, err = loadEndpointIndex(db); err != nil {
		db.Close()
		lock.Close()
		return nil, err
	}
	if err := s.dropOrphanQueues(context.Background()); err != nil && readOnly == nil {
		db.Close()
		lock.Close()
		return nil, err
	}
	s.done.Add(3)
	go s.gcLoop(opts.GCInterval)
	go s.groupLoop()
	go func() { defer s.done.Done(); s.space.watch(s.stop) }()
	return s, nil
}

// CompactionDue reports whether a level of the database is due for
// compaction (Badger compacts one whose adjusted score is 1 or more).
// onboard bench waits until none is before it measures an operation, so
// that the operation is not measured against the compaction of what the
// one before it wrote.
func (s *Store) CompactionDue() bool {
	s.rlockDB()
	defer s.dbMu.RUnlock()
	for _, l := range s.db.Levels() {
		if l.Adjusted >= 1 {
			return true
		}
	}
	return false
}

// Close stops garbage collection and closes the database. Writes
// acknowledged before Close are durable. A database that cannot be
// flushed within closeTimeout (a data directory that became read-only) is
// left as it is: Close then returns an error matching ErrCloseTimedOut,
// and the process should exit, the lock being released with it. So is one
// whose flush the disk has no room for (ErrNoRoomToFlush). Calls
// after the first return nil.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.badgerErr.Store(nil) // name only what failed while closing
		// Each step may wait on a Badger that cannot write: a commit of
		// the group loop stalls on a full memtable that cannot be flushed,
		// and updates queued behind it hold groupMu.
		err = s.closeWithin(closeTimeout, func() error {
			s.groupMu.Lock()
			s.groupClosed = true
			s.groupMu.Unlock()
			close(s.stop)
			s.done.Wait()
			if s.space.readOnly.Load() == nil {
				if err := s.roomToFlush(); err != nil {
					return err
				}
			}
			return s.db.Close()
		})
		if errors.Is(err, ErrCloseTimedOut) || errors.Is(err, ErrNoRoomToFlush) {
			return
		}
		s.lock.Close()
		if err != nil {
			err = fmt.Errorf("close database: %w", err)
		}
	})
	return err
}

// lockDir takes an exclusive, non-blocking flock on dir/onboard.lock, so that
// a second process fails fast with ErrLocked instead of Badger's own message.
// The kernel releases it when the process exits, however it exits.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "onboard.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	return f, nil
}

// gcLoop collects garbage until Close, every round: value-log GC, which
// rewrites files while at least half of a file is garbage, and the drop of
// the queues of removed webhook endpoints (dropOrphanQueues), which a
// removal whose drop failed part-way leaves behind; without it they would
// wait for the next start.
func (s *Store) gcLoop(every time.Duration) {
	defer s.done.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.stop // Close: a drop in progress stops between its batches
		cancel()
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			for s.space.roomFor(vlogGCRewrite) && s.runValueLogGC() == nil {
			}
			if err := s.dropOrphanQueues(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("webhooks: drop the queues of removed endpoints", "err", err)
			}
		}
	}
}

// appLockCount is the number of application locks (Store.appLocks).
const appLockCount = 1024

// lockStripe is the index of the application lock of id among
// appLockCount.
func lockStripe(id uuid.UUID) int {
	return int(binary.BigEndian.Uint16(id[14:]) % appLockCount)
}

// appLock is the lock of appLocks for the application or RFI request id.
func (s *Store) appLock(id uuid.UUID) *sync.Mutex {
	return &s.appLocks[lockStripe(id)]
}

// update runs fn in a read-write transaction, retrying a bounded number of
// times when it loses a write conflict to a concurrent transaction; a
// conflict that outlasts the retries is onboarding.ErrWriteConflict.
// While the disk is nearly full it fails at once, matching
// onboarding.ErrInsufficientStorage (space.go).
func (s *Store) update(ctx context.Context, fn func(*badger.Txn) error) error {
	if err := s.space.allow(); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if err = ctx.Err(); err != nil {
			return err
		}
		s.rlockDB()
		err = s.db.Update(fn)
		s.dbMu.RUnlock()
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
	return translateConflict(fmt.Errorf("transaction still conflicting after %d attempts: %w", maxAttempts, err))
}

// view runs fn in a read-only transaction.
func (s *Store) view(fn func(*badger.Txn) error) error {
	s.rlockDB()
	defer s.dbMu.RUnlock()
	return s.db.View(fn)
}

// runValueLogGC runs one round of value-log garbage collection.
func (s *Store) runValueLogGC() error {
	s.rlockDB()
	defer s.dbMu.RUnlock()
	return s.db.RunValueLogGC(0.5)
}

// nextULID returns a ULID greater than any this Store issued before.
func (s *Store) nextULID(t time.Time) ulid.ULID {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), s.seq)
}

// getRecord decodes the record at key into v, translating a missing key into
// onboarding.ErrNotFound.
func getRecord(txn *badger.Txn, key []byte, v any) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return onboarding.ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return record.Decode(b, v) })
}

func setRecord(txn *badger.Txn, key []byte, v any) error {
	b, err := record.Encode(v)
	if err != nil {
		return err
	}
	return txn.Set(key, b)
}
