package storage

import (
	"bytes"
	"maps"
	"strings"
	"sync"
	"time"

	"onboard/onboarding"
)

// The due floors. A claim walks each enabled endpoint's space of the due
// index (xq/) and of the lease index (xu/) in key order, and every entry it
// takes is deleted (moved to xu/), as is every finished head's lease.
// Badger's iterator steps over each deleted version still in the memtable
// or the upper levels, so a walk from the start of a space costs a step
// per delivery claimed or finished since the last compaction: quadratic
// over a backlog. The Store keeps a floor per space instead, a place in it
// that no live entry sorts before, and a claim seeks from it. What follows
// holds for each space on its own; "the floor" is the space's floor.
//
// Why no live entry sorts before the floor once the transaction that wrote
// it has returned:
//
//   - Every transaction that writes xq/ entries lowers the floor to the
//     start of the earliest due time it wrote (dueFloor.lower), after it
//     commits and before it returns, and notes that time in every claim
//     then in flight. Events are queued for endpoints their transaction reads,
//     so their writers lower every xq/ floor to the earliest event (all).
//   - Only a claim raises the floor, after it commits: at most to the key
//     of the first entry its walk met (the end of the space, past every
//     entry, when it met none: seekSpace), capped by what others noted in
//     it since it began, then lowered by its own writes (dueFloor.endClaim).
//
// The raise is safe. A claim reads the floors (beginClaim) before it
// takes the snapshot it walks the indexes in (a read-only one, taken in
// each attempt of its transaction). An entry written by a transaction that
// had lowered the floor by then does not sort before that floor, so if it
// is in the snapshot the walk met it or an earlier entry. An entry of a
// transaction that lowers the floor later (committed before the snapshot
// or after it) is either noted in the claim before it ends, capping the
// raise, or lowers the floor after the raise. Until its writer lowers the
// floor, an entry may be missed by a claim, as if it had committed then.
// Deletions need no care: a floor below the first entry costs steps, never
// deliveries. A Store starts knowing nothing: a space without a floor is sought from its
// start.
//
// The floor is a key, not a time, because many entries may be due at the
// same time (a fan-out, a frozen test clock); writers lower it to the
// start of a due time's entries. Times are compared as the index orders
// them (dueNanos), so the floor is right for any clock: events in the
// past, claims at any time, clocks that go backwards.

// dueWrites is the earliest entry some transactions wrote in each space
// (indexSpace), and in every xq/ space at once (all), if any.
type dueWrites struct {
	spaces map[string]uint64 // space → dueNanos of its earliest entry written
	any    bool              // all holds
	all    uint64            // the earliest written in any xq/ space
}

// note records an entry written in space at t.
func (w *dueWrites) note(space []byte, t time.Time) {
	w.noteNanos(string(space), dueNanos(t))
}

func (w *dueWrites) noteNanos(space string, n uint64) {
	if w.spaces == nil {
		w.spaces = map[string]uint64{}
	}
	if old, ok := w.spaces[space]; !ok || n < old {
		w.spaces[space] = n
	}
}

// noteAll records an entry written at t in some xq/ space.
func (w *dueWrites) noteAll(t time.Time) {
	if n := dueNanos(t); !w.any || n < w.all {
		w.any, w.all = true, n
	}
}

// add records the entries of o.
func (w *dueWrites) add(o dueWrites) {
	for sp, n := range o.spaces {
		w.noteNanos(sp, n)
	}
	if o.any && (!w.any || o.all < w.all) {
		w.any, w.all = true, o.all
	}
}

// earliest is where the earliest entry w holds for space starts, if any.
func (w *dueWrites) earliest(space string) ([]byte, bool) {
	n, ok := w.spaces[space]
	if w.any && strings.HasPrefix(space, prefixDueIndex) && (!ok || w.all < n) {
		n, ok = w.all, true
	}
	if !ok {
		return nil, false
	}
	return floorKey([]byte(space), n), true
}

// eventDues is what writeEvents may write for events: enqueue writes a due
// entry only at its event's At, for endpoints only it reads.
func eventDues(events []*onboarding.Event) dueWrites {
	var w dueWrites
	for _, e := range events {
		w.noteAll(e.At)
	}
	return w
}

// dueFloor is the Store's lower bound of each space (see above).
type dueFloor struct {
	mu sync.Mutex
	// keys is where a claim seeks each space: no live entry sorts before
	// it. It is an entry's key when a claim raised it to the first entry it
	// met (many entries may share a time), else the start of a time's
	// entries (floorKey); a space not in keys is sought from its start.
	keys   map[string][]byte
	claims map[*dueWrites]struct{} // of each claim in flight, what others wrote since it began
}

// lower lowers the floors to the earliest entries w holds and notes them in
// the claims in flight. Call it after the transaction that wrote w commits,
// or after it failed: lowering is always safe.
func (f *dueFloor) lower(w dueWrites) {
	if len(w.spaces) == 0 && !w.any {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lowerLocked(w)
}

func (f *dueFloor) lowerLocked(w dueWrites) {
	if len(w.spaces) == 0 && !w.any {
		return
	}
	for sp, k := range f.keys {
		if low, ok := w.earliest(sp); ok && bytes.Compare(low, k) < 0 {
			f.keys[sp] = low
		}
	}
	for others := range f.claims {
		others.add(w)
	}
}

// beginClaim registers a claim about to start its transaction, returning
// where to seek each space from (a copy: absent, the space's start) and
// where the others' writes are noted until endClaim.
func (f *dueFloor) beginClaim() (map[string][]byte, *dueWrites) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claims == nil {
		f.claims = map[*dueWrites]struct{}{}
	}
	others := &dueWrites{}
	f.claims[others] = struct{}{}
	return maps.Clone(f.keys), others
}

// endClaim ends a claim begun with beginClaim. When its transaction
// committed, met holds for each space it walked the key of the first entry
// its walk met or, when it met none, the end of the space (floorKey with
// the largest time, after every entry the space can hold): that space's
// floor rises to it, or to the earliest that others wrote there meanwhile
// if that is earlier. Either way the floors then lower to the earliest the
// claim wrote itself (own).
func (f *dueFloor) endClaim(others *dueWrites, committed bool, met map[string][]byte, own dueWrites) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.claims, others)
	if committed {
		if f.keys == nil {
			f.keys = map[string][]byte{}
		}
		for sp, to := range met {
			if low, ok := others.earliest(sp); ok && bytes.Compare(low, to) < 0 {
				to = low
			}
			if cur, ok := f.keys[sp]; !ok || bytes.Compare(to, cur) > 0 {
				f.keys[sp] = to
			}
		}
	}
	f.lowerLocked(own)
}
