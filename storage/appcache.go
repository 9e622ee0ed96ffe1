package storage

import (
	"errors"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/klauspost/compress/s2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// defaultAppCacheBytes is the default budget of the decoded-applications
// cache (Options.AppCacheBytes), in bytes of the JSON its entries were
// decoded from: a decoded application takes about as much heap as its
// JSON, a few KB for a typical company, so the default keeps a few
// thousand.
const defaultAppCacheBytes = 8 << 20

// appCache keeps applications decoded from their records, by id, each with
// the Badger version of the record it was decoded from. Reading an
// application is mostly decoding it, and the
// applications a partner reads are mostly the few it is working on.
//
// A version (a commit timestamp) is written once per key, so an entry is
// right for as long as reads find its version: a write needs no
// invalidation, it merely leaves the entry unused until a read replaces it
// or it is evicted. UpdateApplication puts what it wrote under its new
// version (keepWritten), with the head of its activity log after that
// commit, and the next update of the application starts from that entry
// without reading the database (latest): its group's version check
// catches an entry that is not the latest, and needs no read of the head
// when the entry's version is the record's (logHead). Entries are
// never handed out: readers get clones, which they may change.
//
// Once the budget is spent, point reads and updates evict entries, lists
// and exports never: they fill only the room left, so a scan of every
// application does not flush the applications in use. Eviction gives a
// second chance (the CLOCK policy, its hand at a random place: Go's map
// iteration order): an entry used since it was kept or last passed over
// (referenced) is passed over once, its mark cleared, and the first
// entry found unmarked is evicted. So the applications a partner keeps
// reading stay while those written once and not read again (the registry
// documents job goes through every new application) go first, where
// random eviction would keep evicting the applications in use.
//
// A point read (ReadApplication) serves an entry marked current without
// reading the database at all. An entry is current while its version is
// the record's latest committed one, which holds because every write of
// an application's record after its create is an UpdateApplication, under
// the application's lock, that begins with beginWrite (clearing the mark)
// and ends with endWrite:
//   - the update that committed a version marks its entry current once
//     the commit is durable (keepWritten), still under the lock, so no
//     other update has committed since, and the next one clears the mark
//     before it commits;
//   - a read marks the entry of the version its snapshot found current
//     when no update of an application of its lock stripe (lockStripe)
//     was under way when it began and none began or ended until it
//     marked: its snapshot, taken after the last update's commit was
//     durable, holds the latest version (writes counts, per stripe, the
//     updates begun and ended, odd while one is under way; a stripe's
//     lock lets one update at a time).
//
// So a read that starts after an update has returned, or after the
// events it committed were delivered, never finds the version before it.
type appCache struct {
	mu      sync.Mutex
	budget  int // bytes of the entries' JSON, at most; 0 disables the cache
	size    int
	entries map[uuid.UUID]cachedApp
	writes  [appLockCount]uint64
}

type cachedApp struct {
	version    uint64
	size       int
	app        *onboarding.Application
	head       logHead // the activity log's head as of version, when known
	current    bool    // version is the record's latest (appCache)
	referenced bool    // used since kept or last passed over by eviction
}

func newAppCache(budget int) *appCache {
	return &appCache{budget: budget, entries: map[uuid.UUID]cachedApp{}}
}

// get returns the application id decoded from version, or nil. It is the
// cache's own, shared with every other reader: the caller must not change
// it.
func (c *appCache) get(id uuid.UUID, version uint64) *onboarding.Application {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || e.version != version {
		return nil
	}
	c.use(id, e)
	return e.app
}

// use marks e, id's entry, referenced, under the lock.
func (c *appCache) use(id uuid.UUID, e cachedApp) {
	if !e.referenced {
		e.referenced = true
		c.entries[id] = e
	}
}

// current returns the application id when its entry is current (the
// record's latest version), shared as get's; else nil and the count of
// updates begun and ended in id's lock stripe, which a read that goes to
// the database takes before its snapshot (markRead). One lock serves both.
func (c *appCache) current(id uuid.UUID) (*onboarding.Application, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[id]; ok && e.current {
		c.use(id, e)
		return e.app, 0
	}
	return nil, c.writes[lockStripe(id)]
}

// beginWrite notes that an update of application id is under way, under
// its lock, and clears the current mark of its entry: before the update
// commits anything.
func (c *appCache) beginWrite(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes[lockStripe(id)]++
	if e, ok := c.entries[id]; ok && e.current {
		e.current = false
		c.entries[id] = e
	}
}

// endWrite notes that the update beginWrite noted has ended, committed or
// not.
func (c *appCache) endWrite(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes[lockStripe(id)]++
}

// markWritten marks id's entry current if it holds version, which the
// caller has just committed under the application's lock.
func (c *appCache) markWritten(id uuid.UUID, version uint64) {
	c.mark(id, version, func() bool { return true })
}

// markRead marks id's entry current if it holds version, which a snapshot
// taken after current answered count found, when no update of the
// stripe was under way then and none has begun or ended since.
func (c *appCache) markRead(id uuid.UUID, version, count uint64) {
	c.mark(id, version, func() bool { return count%2 == 0 && c.writes[lockStripe(id)] == count })
}

// mark marks id's entry current if it holds version and ok, called under
// the lock, answers true.
func (c *appCache) mark(id uuid.UUID, version uint64, ok func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.entries[id]; found && e.version == version && ok() {
		e.current = true
		c.entries[id] = e
	}
}

// latest returns the application id as the cache holds it, with the
// version it was decoded from, whichever that is, and its activity log's
// head as of that version when known (a nil application when it holds
// none): shared, as get's. Only a caller that checks the version before
// it relies on them may use them (UpdateApplication's group does).
func (c *appCache) latest(id uuid.UUID) (*onboarding.Application, uint64, logHead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return nil, 0, logHead{}
	}
	c.use(id, e)
	return e.app, e.version, e.head
}

// put keeps app, decoded from version of id's record of size bytes, with
// the activity log's head as of that version when known, unless a later
// version is kept already, it is larger than a quarter of the budget, or
// the budget is spent and evict is not set. The cache owns app from now
// on.
func (c *appCache) put(id uuid.UUID, version uint64, size int, app *onboarding.Application, head logHead, evict bool) {
	if size > c.budget/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	referenced := false // a new version of an entry keeps its mark
	if old, ok := c.entries[id]; ok {
		if old.version >= version {
			return
		}
		c.size -= old.size
		referenced = old.referenced
		delete(c.entries, id)
	}
	if !evict && c.size+size > c.budget {
		return
	}
	c.evict(size)
	c.entries[id] = cachedApp{version: version, size: size, app: app, head: head, referenced: referenced}
	c.size += size
}

// evict makes room for size bytes, under the lock: it passes over the
// entries once, clearing the marks of those referenced and evicting the
// others until there is room, and evicts whichever come first when one
// pass was not enough (every entry had been used).
func (c *appCache) evict(size int) {
	for k, e := range c.entries {
		if c.size+size <= c.budget {
			return
		}
		if e.referenced {
			e.referenced = false
			c.entries[k] = e
			continue
		}
		c.size -= e.size
		delete(c.entries, k)
	}
	for k, e := range c.entries {
		if c.size+size <= c.budget {
			return
		}
		c.size -= e.size
		delete(c.entries, k)
	}
}

// forget drops id's entry, if any.
func (c *appCache) forget(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[id]; ok {
		c.size -= e.size
		delete(c.entries, id)
	}
}

// clear forgets every entry.
func (c *appCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.size = 0
}

// ForgetCached empties the decoded-applications cache, for a server gone
// idle to hand its memory back: the next read of each application decodes
// it again.
func (s *Store) ForgetCached() {
	s.apps.clear()
}

// room reports whether put would keep an entry of size bytes now, so that
// a reader need not clone an application the cache would not keep.
func (c *appCache) room(size int, evict bool) bool {
	if size > c.budget/4 {
		return false
	}
	if evict {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size+size <= c.budget
}

// jsonSize is the size of the JSON that a record encode wrote holds.
func jsonSize(b []byte) int {
	if len(b) > 0 && b[0] == record.CodecS2JSON {
		if n, err := s2.DecodedLen(b[1:]); err == nil {
			return n
		}
	}
	return len(b)
}

// readApplication reads application id in txn, from the cache when it
// holds the version txn sees, and keeps one it decoded for the next read;
// evict is set for point reads, which may evict others to make room. txn
// must not have written the application: Badger gives a pending write the
// version of the transaction's snapshot, which an earlier commit of the
// record may have too.
func (s *Store) readApplication(txn *badger.Txn, id uuid.UUID, evict bool) (*onboarding.Application, error) {
	app, _, err := s.readApplicationVersion(txn, id, evict)
	return app, err
}

// readApplicationVersion reads application id in txn as readApplication
// does, and answers the version of the record read too.
func (s *Store) readApplicationVersion(txn *badger.Txn, id uuid.UUID, evict bool) (*onboarding.Application, uint64, error) {
	app, version, shared, err := s.readSharedApplication(txn, id, evict)
	if shared {
		app = app.Clone()
	}
	return app, version, err
}

// readSharedApplication reads application id in txn as readApplication
// does, without copying: when shared is set, the application is the one
// the cache keeps, which every reader shares, and must not be changed.
func (s *Store) readSharedApplication(txn *badger.Txn, id uuid.UUID, evict bool) (app *onboarding.Application, version uint64, shared bool, err error) {
	item, err := txn.Get(appKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, 0, false, onboarding.ErrNotFound
	}
	if err != nil {
		return nil, 0, false, err
	}
	version = item.Version()
	if app := s.apps.get(id, version); app != nil {
		return app, version, true, nil
	}
	app = new(onboarding.Application)
	var size int
	if err := item.Value(func(b []byte) error {
		size = jsonSize(b)
		return record.Decode(b, app)
	}); err != nil {
		return nil, 0, false, err
	}
	if s.apps.room(size, evict) {
		s.apps.put(id, version, size, app, logHead{}, evict)
		return app, version, true, nil
	}
	return app, version, false, nil
}

// keepWritten keeps app, which the caller has just committed under the
// application's lock with head as its activity log's head, for the next
// read, as version: the version the group loop read right after the commit
// (groupedVersion), the commit's own, since nothing else writes the record
// without the lock. Version 0 (it could not be read) keeps nothing.
func (s *Store) keepWritten(id uuid.UUID, app *onboarding.Application, size int, head logHead, version uint64) {
	if version == 0 || !s.apps.room(size, true) {
		return
	}
	s.apps.put(id, version, size, app.Clone(), head, true)
	s.apps.markWritten(id, version)
}
