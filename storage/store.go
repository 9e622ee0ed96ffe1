// Package storage keeps onboard's records in an embedded Badger database. It
// is the only package that imports Badger: it implements onboarding.Store
// with typed methods, owns the keyspace (keys.go), writes every index in the
// same transaction as its record, and runs value-log garbage collection.
package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// schemaVersion is written to a new database and checked on every open;
// older versions are migrated (checkSchema), one version at a time.
//
//	1: the first release
//	2: adds the xr/ index of applications with pending registry documents
//	3: drops the xp/ index of pre-auth code hashes, which nothing read
//	4: marks the API keys created without a scope list AllScopes; adds the
//	   event, endpoint, delivery queue and delivery log families (keys.go),
//	   which need no migration
//	5: chains every activity log: each v/ entry stores its hash and the one
//	   before it, and every log has a vh/ head (chainActivityLogs)
const schemaVersion = "5"

// migrationBatch bounds the keys one migration transaction deletes or reads, keeping
// it well within Badger's transaction size limit.
const migrationBatch = 1000

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
}

// Store is the Badger-backed onboarding.Store.
type Store struct {
	db   *badger.DB
	dir  string   // the database's directory, absolute and free of symbolic links (PageOut)
	lock *os.File // holds an exclusive flock while the Store is open
	log  *slog.Logger
	now  func() time.Time

	seqMu sync.Mutex
	seq   *ulid.MonotonicEntropy

	// appLocks serialises read-modify-write transactions on one
	// application or RFI request (by a hash of its id, appLock): this
	// process owns the database, so concurrent updates queue instead of
	// failing with write conflicts. A lock is held through the commit's
	// fsync, so two updates of different applications that share one wait
	// a commit for nothing: with 1024, 32 concurrent updates share a lock
	// 3% of the time (with 64, 38%).
	appLocks [1024]sync.Mutex

	// rfiClaims serialises ClaimRFIExpiries: claims all read the front of
	// the expiry queue, so concurrent ones would mostly conflict.
	rfiClaims sync.Mutex

	// apps keeps decoded applications for the next read (appcache.go).
	apps *appCache

	// updates queues application updates for groupLoop (groupcommit.go);
	// groupClosed, set by Close under groupMu, stops new ones.
	updates     chan *groupedUpdate
	groupMu     sync.RWMutex
	groupClosed bool
	groups      atomic.Int64 // groups committed whole, for tests

	// due bounds the due index from below, so that a claim need not walk
	// its deleted front (duefloor.go).
	due dueFloor

	stop      chan struct{}
	done      sync.WaitGroup
	closeOnce sync.Once
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
	db, err := badger.Open(badgerOptions(dir, opts.Logger))
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open database %s: %w", dir, err)
	}
	s := &Store{db: db, dir: real, lock: lock, log: opts.Logger, now: opts.Now, seq: ulid.Monotonic(rand.Reader, 0), apps: newAppCache(opts.AppCacheBytes), updates: make(chan *groupedUpdate, 2*maxGroup), stop: make(chan struct{})}
	if err := s.checkSchema(); err != nil {
		db.Close()
		lock.Close()
		return nil, err
	}
	if err := s.dropOrphanQueues(context.Background()); err != nil {
		db.Close()
		lock.Close()
		return nil, err
	}
	s.done.Add(2)
	go s.gcLoop(opts.GCInterval)
	go s.groupLoop()
	return s, nil
}

// badgerOptions are the options of every database of a data directory,
// chosen for a small server that must survive a crash with every
// acknowledged write and stay within a modest memory budget:
//   - SyncWrites: every commit is fsynced before it is acknowledged (the
//     API's "acknowledged means durable").
//   - NumVersionsToKeep 1: no reads of older versions; compaction drops
//     them.
//   - MemTableSize 8 MiB (Badger's default is 64 MiB): the write buffers
//     are the largest fixed cost, each one's arena a little over its size
//     (10.5 MiB), in the heap for as long as it is the active memtable, and
//     two of them at once while one is flushed. With the records in the
//     value log a memtable holds keys, pointers and the small records
//     (index entries, activity), so 8 MiB still holds thousands of writes.
//     Against 16 MiB (TestScaleMemory, 60,000 seeded): 57 MiB of RSS idle
//     after the load against 72 to 76 (the target is 64), and the bench's
//     writes at the same rates within its noise (two runs each: PATCH
//     5,517 and 6,025 a second against 5,744 and 5,512, creates 2,898 and
//     2,947 against 2,995 and 2,846). Before the value log, when the
//     memtables held the records, 8 MiB cost decisions 15 to 25% of their
//     throughput in interleaved runs.
//   - NumLevelZeroTables 10 and NumLevelZeroTablesStall 30 (Badger's
//     defaults are 5 and 15): with 8 MiB memtables, the same bytes in level
//     0 before a compaction starts, and before writes stall, as the
//     defaults with 16 MiB. With the defaults, busy creates (the bench's
//     creates while webhooks and registry documents are being worked on)
//     fell to 0.78 to 0.92 of quiet ones in four runs, against 0.93 to
//     1.16 in five with 16 MiB memtables; with these, 1.11 and 1.03 (with
//     5 and 30, 0.84: what slows them is compacting level 0 twice as
//     often, not stalls). The cost is on reads: every point read checks
//     each table in level 0, which holds up to 9 at rest instead of 4. A
//     list of 50 with 1,000,000 stored took 1.25 times as long as with
//     10,000 in one run of TestScaleList just after seeding, against 1.14
//     with 5 and 30 (the target is 1.2).
//   - ValueLogFileSize 64 MiB: smaller files are garbage-collected sooner
//     (the default is 1 GiB).
//   - BlockCacheSize 32 MiB and IndexCacheSize 16 MiB: reads are point
//     lookups and short scans of recent records, which these caches hold;
//     the rest comes from the page cache.
//   - DetectConflicts: UpdateApplication's read-modify-write transactions
//     rely on it.
//   - ValueThreshold 1 KiB (Badger v4's default, 1 MiB, keeps every value
//     in the tree): an application's record and an event's (a whole
//     application, compressed: 1 to 2 KiB) go to the value log, and the
//     tree holds their keys and pointers. Applications are keyed by random
//     ids and rewritten on every change, so with the records in the tree
//     each flush's compaction rewrote most of a level's records, and
//     sustained writes were bound by compaction (a quarter of the CPU while
//     deciding) and by the memory its table builders held. On 2 cores,
//     with this: seeding 60,000 at 2,244 creates a second against 1,061 to
//     1,394, the Go heap at 146 MiB while seeding against 411 to 485, and
//     the bench's create and decision p99s at 31 and 32 ms against 88 to
//     98 and 130 to 385 (PATCH: the same rate in interleaved runs, with a
//     lower p99). Its costs: a commit fsyncs the value log as well as the
//     tree's log; reading a record is a second read, in the value log,
//     after the tree's; a record's old versions stay in the value log until
//     garbage collection rewrites a file that is half garbage (gcLoop), so
//     the database is larger (after a bench run 896 MiB against 324 to
//     399); and the value log is written through its memory mapping, so
//     more of it counts in RSS (serve trims it: Trim, pageout.go).
//   - MetricsEnabled false: Badger counts every get, put and bloom-filter
//     check, per level, in expvar maps that onboard never reads (its
//     /metrics are its own). A read of an application checks a level's
//     filter for each level above the one holding it, so the counting grew
//     with the tree: listing 50 cached applications in the store took 264
//     to 289 µs with 1,000,000 stored and 200 to 207 µs with 10,000; with
//     the counting off, 224 and 191 to 195.
//
// Tried and not taken (2-core machine, issue 15):
//   - Tables without compression took less memory to build but made the
//     database 70% larger, on disk and in the page cache the process maps.
//   - Two compactors instead of four: decisions ran at the same rate in
//     interleaved runs (2,138 and 2,137 a second on average over three
//     each), the memory peaks moved less than their noise, and seeding was
//     no faster.
func badgerOptions(dir string, log *slog.Logger) badger.Options {
	return badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(badgerLogger{log}).
		WithNumVersionsToKeep(1).
		WithMemTableSize(8 << 20).
		WithNumLevelZeroTables(10).
		WithNumLevelZeroTablesStall(30).
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(32 << 20).
		WithIndexCacheSize(16 << 20).
		WithDetectConflicts(true).
		WithValueThreshold(1 << 10).
		WithMetricsEnabled(false)
}

// CompactionDue reports whether a level of the database is due for
// compaction (Badger compacts one whose adjusted score is 1 or more).
// onboard bench waits until none is before it measures an operation, so
// that the operation is not measured against the compaction of what the
// one before it wrote.
func (s *Store) CompactionDue() bool {
	for _, l := range s.db.Levels() {
		if l.Adjusted >= 1 {
			return true
		}
	}
	return false
}

// Close stops garbage collection and closes the database. Writes
// acknowledged before Close are durable. Calls after the first return nil.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.groupMu.Lock()
		s.groupClosed = true
		s.groupMu.Unlock()
		close(s.stop)
		s.done.Wait()
		err = s.db.Close()
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

// checkSchema stamps a new database with schemaVersion and migrates an
// older one a version at a time. Each step records the version it reaches
// only once its changes are committed, so a migration interrupted by a
// crash runs its unfinished step again on the next open.
func (s *Store) checkSchema() error {
	ctx := context.Background()
	v, found, err := s.schema()
	if err != nil {
		return err
	}
	if !found {
		return s.setSchema(ctx, schemaVersion)
	}
	switch v {
	case schemaVersion:
		return nil
	case "1":
		if err := s.update(ctx, func(txn *badger.Txn) error {
			if err := indexPendingDocuments(txn); err != nil {
				return err
			}
			return txn.Set([]byte(keySchema), []byte("2"))
		}); err != nil {
			return fmt.Errorf("migrate schema 1 to 2: %w", err)
		}
		fallthrough
	case "2":
		if err := s.dropRetiredPreAuthIndex(ctx); err != nil {
			return fmt.Errorf("migrate schema 2 to 3: %w", err)
		}
		if err := s.setSchema(ctx, "3"); err != nil {
			return fmt.Errorf("migrate schema 2 to 3: %w", err)
		}
		fallthrough
	case "3":
		if err := s.markAllScopeKeys(ctx); err != nil {
			return fmt.Errorf("migrate schema 3 to 4: %w", err)
		}
		if err := s.setSchema(ctx, "4"); err != nil {
			return fmt.Errorf("migrate schema 3 to 4: %w", err)
		}
		fallthrough
	case "4":
		if err := s.chainActivityLogs(ctx); err != nil {
			return fmt.Errorf("migrate schema 4 to 5: %w", err)
		}
		return s.setSchema(ctx, "5")
	}
	return fmt.Errorf("data directory has schema version %q; this onboard reads version %s", v, schemaVersion)
}

// schema returns the data directory's schema version; found is false for a
// new data directory.
func (s *Store) schema() (version string, found bool, err error) {
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(keySchema))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		version, found = string(v), true
		return err
	})
	return version, found, err
}

func (s *Store) setSchema(ctx context.Context, version string) error {
	return s.update(ctx, func(txn *badger.Txn) error {
		return txn.Set([]byte(keySchema), []byte(version))
	})
}

// indexPendingDocuments writes the xr/ entry of every application whose
// registry documents are pending (schema 1 → 2): version 1 stored such
// applications without queueing them.
func indexPendingDocuments(txn *badger.Txn) error {
	prefix := []byte(prefixApp)
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	it := txn.NewIterator(opts)
	defer it.Close()
	var pending [][]byte
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		var app onboarding.Application
		if err := it.Item().Value(func(b []byte) error { return decode(b, &app) }); err != nil {
			return err
		}
		if app.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending {
			id, err := uuid.FromBytes(it.Item().Key()[len(prefix):])
			if err != nil {
				return err
			}
			pending = append(pending, pendingDocsKey(id))
		}
	}
	for _, k := range pending {
		if err := txn.Set(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// dropRetiredPreAuthIndex deletes every xp/ key (schema 2 → 3), at most
// migrationBatch per transaction so that any number of them fits.
func (s *Store) dropRetiredPreAuthIndex(ctx context.Context) error {
	prefix := []byte(prefixRetiredPreAuthIndex)
	for {
		deleted := 0
		err := s.update(ctx, func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = prefix
			opts.PrefetchValues = false
			it := txn.NewIterator(opts)
			var keys [][]byte
			for it.Seek(prefix); it.ValidForPrefix(prefix) && len(keys) < migrationBatch; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			it.Close()
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			deleted = len(keys)
			return nil
		})
		if err != nil || deleted == 0 {
			return err
		}
	}
}

// scopesBeforeSchema4 returns the scopes of onboard before schema 4: every
// key stored before then that carries all of them was created without a
// scope list.
func scopesBeforeSchema4() []onboarding.Scope {
	return []onboarding.Scope{
		onboarding.ScopeApplicationsCreate, onboarding.ScopeApplicationsRead,
		onboarding.ScopeApplicationsWrite, onboarding.ScopeRFICreate,
	}
}

// markAllScopeKeys sets AllScopes on every API key that carries all of
// scopesBeforeSchema4() (schema 3 → 4), so that a key created with every
// scope keeps every scope later versions add. It reads at most
// migrationBatch keys per transaction, resuming after the last one read.
func (s *Store) markAllScopeKeys(ctx context.Context) error {
	prefix := []byte(prefixKey)
	old := scopesBeforeSchema4()
	after := []byte(nil)
	for {
		var last []byte
		err := s.update(ctx, func(txn *badger.Txn) error {
			last = nil
			opts := badger.DefaultIteratorOptions
			opts.Prefix = prefix
			it := txn.NewIterator(opts)
			type rec struct {
				key []byte
				k   onboarding.APIKey
			}
			var marked []rec
			seek := prefix
			if after != nil {
				seek = after
			}
			read := 0
			for it.Seek(seek); it.ValidForPrefix(prefix) && read < migrationBatch; it.Next() {
				key := it.Item().KeyCopy(nil)
				if after != nil && bytes.Equal(key, after) {
					continue
				}
				read++
				last = key
				var k onboarding.APIKey
				if err := it.Item().Value(func(b []byte) error { return decode(b, &k) }); err != nil {
					it.Close()
					return err
				}
				if !k.AllScopes && hasScopes(&k, old) {
					k.AllScopes = true
					marked = append(marked, rec{key, k})
				}
			}
			it.Close()
			for _, m := range marked {
				if err := setRecord(txn, m.key, &m.k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || last == nil {
			return err
		}
		after = last
	}
}

// hasScopes reports whether k lists every one of scopes.
func hasScopes(k *onboarding.APIKey, scopes []onboarding.Scope) bool {
	for _, sc := range scopes {
		if !slices.Contains(k.Scopes, sc) {
			return false
		}
	}
	return true
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
			for s.db.RunValueLogGC(0.5) == nil {
			}
			if err := s.dropOrphanQueues(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("webhooks: drop the queues of removed endpoints", "err", err)
			}
		}
	}
}

// appLock is the lock of appLocks for the application or RFI request id.
func (s *Store) appLock(id uuid.UUID) *sync.Mutex {
	return &s.appLocks[binary.BigEndian.Uint16(id[14:])%uint16(len(s.appLocks))]
}

// update runs fn in a read-write transaction, retrying a bounded number of
// times when it loses a write conflict to a concurrent transaction.
func (s *Store) update(ctx context.Context, fn func(*badger.Txn) error) error {
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if err = ctx.Err(); err != nil {
			return err
		}
		err = s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
	return fmt.Errorf("transaction still conflicting after %d attempts: %w", maxAttempts, err)
}

func (s *Store) view(fn func(*badger.Txn) error) error {
	return s.db.View(fn)
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
	return item.Value(func(b []byte) error { return decode(b, v) })
}

func setRecord(txn *badger.Txn, key []byte, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	return txn.Set(key, b)
}

// badgerLogger forwards Badger's warnings and errors to slog.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.log.Error("badger: " + trim(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Warningf(f string, a ...any) {
	l.log.Warn("badger: " + trim(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Infof(string, ...any)  {}
func (l badgerLogger) Debugf(string, ...any) {}

func trim(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}
