package storage

import (
	"bytes"
	"sync"
	"time"

	"onboard/onboarding"
)

// The due floor. A claim walks the due index (xq/) in key order, and every
// entry it takes is deleted (moved to its lease's end), as is every
// finished head's. Badger's iterator steps over each deleted version still
// in the memtable or the upper levels, so a walk from the start of xq/
// costs a step per delivery claimed since the last compaction: quadratic
// over a backlog. The Store keeps a floor instead, a place in xq/ that no
// live entry sorts before, and a claim seeks from it.
//
// Why no live entry sorts before the floor once the transaction that wrote
// it has returned:
//
//   - Every transaction that writes xq/ entries lowers the floor to the
//     start of the earliest due time it wrote (dueFloor.lower), after it
//     commits and before it returns, and notes that time in every claim
//     then in flight.
//   - Only a claim raises the floor, after it commits: at most to the key
//     of the first entry its walk met (the start of c.Now when it met
//     none), capped by what others noted in it since it began, then lowered
//     by its own writes (dueFloor.endClaim).
//
// The raise is safe. A claim reads the floor (beginClaim) before its
// transaction takes its snapshot. An entry written by a transaction that
// had lowered the floor by then does not sort before that floor, so if it
// is in the snapshot the walk met it or an earlier entry. An entry of a
// transaction that lowers the floor later (committed before the snapshot
// or after it) is either noted in the claim before it ends, capping the
// raise, or lowers the floor after the raise. Until its writer lowers the
// floor, an entry may be missed by a claim, as if it had committed then.
// Deletions need no care: a floor below the first entry costs steps, never
// deliveries. A Store starts knowing nothing, at the index's start.
//
// The floor is a key, not a time, because many entries may be due at the
// same time (a fan-out, a frozen test clock); writers lower it to the
// start of a due time's entries. Times are compared as the index orders
// them (dueNanos), so the floor is right for any clock: events in the
// past, claims at any time, clocks that go backwards.

// dueWrites is the earliest due entry some transactions wrote to xq/, if
// any.
type dueWrites struct {
	any      bool
	earliest time.Time
}

// note records a due entry written at t.
func (w *dueWrites) note(t time.Time) {
	if !w.any || dueNanos(t) < dueNanos(w.earliest) {
		w.any, w.earliest = true, t
	}
}

// key is where the entries due at w.earliest start in xq/.
func (w *dueWrites) key() []byte {
	return dueFloorKey(dueNanos(w.earliest))
}

// add records the entries of o.
func (w *dueWrites) add(o dueWrites) {
	if o.any {
		w.note(o.earliest)
	}
}

// eventDues is the earliest due time writeEvents may write for events:
// enqueue writes an entry only at its event's At.
func eventDues(events []*onboarding.Event) dueWrites {
	var w dueWrites
	for _, e := range events {
		w.note(e.At)
	}
	return w
}

// dueFloor is the Store's lower bound of the due index (see above).
type dueFloor struct {
	mu sync.Mutex
	// key is where a claim seeks xq/: no live entry sorts before it. It is
	// an entry's key when a claim raised it to the first entry it met (many
	// entries may share a due time), else the start of a due time's
	// entries (dueFloorKey); nil is the start of the index.
	key    []byte
	claims map[*dueWrites]struct{} // of each claim in flight, what others wrote since it began
}

// lower lowers the floor to the earliest due w holds and notes it in the
// claims in flight. Call it after the transaction that wrote w commits, or
// after it failed: lowering is always safe.
func (f *dueFloor) lower(w dueWrites) {
	if !w.any {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lowerLocked(w)
}

func (f *dueFloor) lowerLocked(w dueWrites) {
	if !w.any {
		return
	}
	if k := w.key(); bytes.Compare(k, f.key) < 0 {
		f.key = k
	}
	for others := range f.claims {
		others.add(w)
	}
}

// beginClaim registers a claim about to start its transaction, returning
// the key to seek xq/ from and where the others' writes are noted until
// endClaim.
func (f *dueFloor) beginClaim() ([]byte, *dueWrites) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claims == nil {
		f.claims = map[*dueWrites]struct{}{}
	}
	others := &dueWrites{}
	f.claims[others] = struct{}{}
	if f.key == nil {
		return []byte(prefixDueIndex), others
	}
	return f.key, others
}

// endClaim ends a claim begun with beginClaim. When its transaction
// committed, met is the key of the first entry its walk met (or, when it
// met none, dueFloorKey of the claim's Now): the floor rises to it, or to
// the earliest that others wrote meanwhile if that is earlier. Either way
// it then lowers to the earliest the claim wrote itself (own).
func (f *dueFloor) endClaim(others *dueWrites, committed bool, met []byte, own dueWrites) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.claims, others)
	if committed {
		to := met
		if others.any && bytes.Compare(others.key(), to) < 0 {
			to = others.key()
		}
		if bytes.Compare(to, f.key) > 0 {
			f.key = to
		}
	}
	f.lowerLocked(own)
}
