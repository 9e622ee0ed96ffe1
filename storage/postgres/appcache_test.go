package postgres

import (
	"testing"

	"github.com/google/uuid"

	"onboard/onboarding"
)

// TestAppCache: entries leave least recently used first once their
// records pass the budget, a later version replaces an earlier one and
// never the reverse, a record too large for its share is not kept, and
// ForgetCached empties it.
func TestAppCache(t *testing.T) {
	c := newAppCache(8000)
	ids := make([]uuid.UUID, 9)
	app := &onboarding.Application{ID: "a"}
	for i := range ids {
		ids[i] = uuid.New()
	}
	for i := range 8 {
		c.put(ids[i], 1, app, nil, 1000) // 8000 bytes in all: the budget
	}
	c.get(ids[0])                   // the most recently used now
	c.put(ids[8], 1, app, nil, 500) // 8500: ids[1], the least recently used, leaves
	held := func() (n int) {
		for _, id := range ids {
			if c.get(id) != nil {
				n++
			}
		}
		return n
	}
	if c.get(ids[1]) != nil || c.get(ids[0]) == nil || held() != 8 || c.bytes != 7500 {
		t.Errorf("held %d with %d bytes; want all but the second, 7500", held(), c.bytes)
	}
	newer := &onboarding.Application{ID: "newer"}
	c.put(ids[0], 3, newer, &onboarding.ActivityHead{Hash: "h"}, 600)
	c.put(ids[0], 2, app, nil, 500)
	if e := c.get(ids[0]); e.version != 3 || e.app != newer || e.head.Hash != "h" || c.bytes != 7100 {
		t.Errorf("entry %+v with %d bytes; want version 3 kept, 7100", e, c.bytes)
	}
	c.put(uuid.New(), 1, app, nil, 1001) // more than an eighth of the budget
	if c.bytes != 7100 || c.lru.Len() != 8 {
		t.Errorf("a record of more than its share was kept: %d bytes, %d entries", c.bytes, c.lru.Len())
	}
	s := &Store{apps: c}
	s.ForgetCached()
	if held() != 0 || c.bytes != 0 {
		t.Errorf("after ForgetCached: held %d, %d bytes", held(), c.bytes)
	}
	off := newAppCache(0)
	off.put(ids[0], 1, app, nil, 1)
	if off.get(ids[0]) != nil {
		t.Errorf("a cache with no budget kept an entry")
	}
}
