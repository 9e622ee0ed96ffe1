package postgres

import (
	"container/list"
	"sync"

	"github.com/google/uuid"
	"github.com/klauspost/compress/s2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// The cache of decoded applications. Every application row has a version,
// which each update increments; a read asks the database for the row's
// version and for its record only when the version differs from the one
// the cache holds (one round trip either way), so a cached application is
// never served once another update, from any instance, has committed,
// and a read that hits costs no decoding. ReadApplication hands readers
// the cached application itself, which they share (so the server's
// answers rendered from it stay valid as long as it does); Application
// and UpdateApplication start from deep copies.

// defaultCacheBytes is the cache's budget when Options gives none, in
// bytes of the JSON of the records it holds (jsonSize), as the embedded
// store counts its cache's.
const defaultCacheBytes = 8 << 20

// appCache keeps decoded applications by id, with the version of the row
// each was decoded from, least recently used first out once their records
// pass the budget.
type appCache struct {
	mu     sync.Mutex
	budget int // 0: the cache is off
	bytes  int
	lru    list.List // of *cachedApp, most recently used at the front
	byID   map[uuid.UUID]*list.Element
}

// cachedApp is one entry: an application as one version of its row holds
// it. app is shared by every reader, never changed.
type cachedApp struct {
	id      uuid.UUID
	version int64
	app     *onboarding.Application
	head    *onboarding.ActivityHead // of its log at that version; never changed
	size    int                      // of its record's JSON
}

func newAppCache(budget int) *appCache {
	return &appCache{budget: budget, byID: map[uuid.UUID]*list.Element{}}
}

// get returns the cached entry of id, or nil.
func (c *appCache) get(id uuid.UUID) *cachedApp {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	e := *el.Value.(*cachedApp)
	return &e
}

// put keeps app, which nobody may change any more, with head, the head of
// its log, as version of id's row, unless the cache holds a later
// version; size is its record's JSON's (jsonSize).
func (c *appCache) put(id uuid.UUID, version int64, app *onboarding.Application, head *onboarding.ActivityHead, size int) {
	if size > c.budget/8 {
		return // off, or one record would crowd out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		e := el.Value.(*cachedApp)
		if e.version >= version {
			return
		}
		c.bytes += size - e.size
		e.version, e.app, e.head, e.size = version, app, head, size
		c.lru.MoveToFront(el)
	} else {
		c.byID[id] = c.lru.PushFront(&cachedApp{id: id, version: version, app: app, head: head, size: size})
		c.bytes += size
	}
	for c.bytes > c.budget {
		e := c.lru.Remove(c.lru.Back()).(*cachedApp)
		delete(c.byID, e.id)
		c.bytes -= e.size
	}
}

// clear forgets every entry.
func (c *appCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	clear(c.byID)
	c.bytes = 0
}

// ForgetCached empties the cache of decoded applications, for a server
// gone idle to hand its memory back: the next read of each application
// decodes it again.
func (s *Store) ForgetCached() {
	s.apps.clear()
}

// jsonSize is the length of the JSON a record holds (record.Encode), which
// the cache counts: what a decoded application weighs, roughly, whether
// its record is compressed or not.
func jsonSize(rec []byte) int {
	if len(rec) > 0 && rec[0] == record.CodecS2JSON {
		if n, err := s2.DecodedLen(rec[1:]); err == nil {
			return n
		}
	}
	return len(rec)
}
