package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
)

// Combining: updates of one application that queue behind one another are
// applied in one group commit.
//
// An update holds its application's lock until its commit is durable, so
// that the next one starts from what it wrote; with one update per commit,
// a record that many callers update at once (a hot record) would get one
// fsync per update, however many the group commit could take. Instead,
// the first caller to update an application leads: while it leads, the
// callers that come to update the same application queue their changes
// on the application's queue (appQueues) rather than wait for the lock.
// The leader takes the lock, then every queued change, and applies them
// in arrival order, each on a copy of the application as the change
// before it left it (applyCombined); it writes the final record once,
// with the index entries rewritten from the first state to the last, the
// activity entries of all the changes chained in order and their events
// in order, in one grouped update; once that commit is durable it answers
// each caller with the application as its own change left it. A change
// that fails or panics answers its own caller only and is left out; a
// caller whose context ends before its change is applied gets the
// context's error. Then the leader hands the lead to the first caller
// that queued meanwhile, if any, and returns: no caller waits for more
// than the batch it joined and the one before it, and the lock is taken
// again for each batch, so other applications of its stripe get their
// turn.

// maxCombined bounds the changes one batch applies, as maxGroup bounds
// the updates of a group.
const maxCombined = maxGroup

// appChange is one caller's change of an application, waiting for a
// leader to apply it.
type appChange struct {
	ctx    context.Context
	change func(*onboarding.Application) (onboarding.Changes, error)
	done   chan appAnswer // buffered: a leader never waits for the caller
}

// appAnswer is how a change ended: the application as it left it, or its
// error, or the value of a panic in it, which its caller raises again on
// its own goroutine; or, with lead set, nothing yet: its caller leads the
// next batch, which applies its change first.
type appAnswer struct {
	app      *onboarding.Application
	err      error
	panicked any
	lead     bool
}

// appQueues holds the queue of each application that has a leader: its
// entry exists from the time a caller takes the lead until the last
// leader finds the queue empty.
type appQueues struct {
	mu sync.Mutex
	m  map[uuid.UUID][]*appChange
	// queued, when set (by tests, before any update), is called under mu
	// with the length of an application's queue each time a change joins
	// it.
	queued func(id uuid.UUID, n int)
	// batches counts the batches committed, for tests.
	batches atomic.Int64
}

// join queues c on id's queue when the application has a leader, and
// otherwise makes c's caller its leader, answering true.
func (q *appQueues) join(id uuid.UUID, c *appChange) (lead bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[uuid.UUID][]*appChange{}
	}
	pending, led := q.m[id]
	if !led {
		q.m[id] = nil
		return true
	}
	q.m[id] = append(pending, c)
	if q.queued != nil {
		q.queued(id, len(pending)+1)
	}
	return false
}

// take removes up to n changes from the front of id's queue and answers
// them, oldest first.
func (q *appQueues) take(id uuid.UUID, n int) []*appChange {
	q.mu.Lock()
	defer q.mu.Unlock()
	pending := q.m[id]
	n = min(n, len(pending))
	taken := pending[:n:n]
	q.m[id] = pending[n:]
	return taken
}

// handOff ends a leader's batch: it removes and answers the oldest change
// of id's queue, whose caller leads next, or, when the queue is empty,
// ends the lead (nil).
func (q *appQueues) handOff(id uuid.UUID) *appChange {
	q.mu.Lock()
	defer q.mu.Unlock()
	pending := q.m[id]
	if len(pending) == 0 {
		delete(q.m, id)
		return nil
	}
	q.m[id] = pending[1:]
	return pending[0]
}

// lead runs one batch as id's leader, first's change first: it takes the
// application's lock and the changes queued by then, applies and commits
// them, answers each caller (first's too, on its channel) and hands the
// lead on.
func (s *Store) lead(id uuid.UUID, first *appChange) {
	lock := s.appLock(id)
	lock.Lock()
	batch := append([]*appChange{first}, s.hot.take(id, maxCombined-1)...)
	var answers []appAnswer
	func() {
		defer func() {
			// Not a change's panic (applyCombined recovers those):
			// every caller of the batch raises it, and the lead
			// moves on all the same.
			if p := recover(); p != nil {
				answers = make([]appAnswer, len(batch))
				for i := range answers {
					answers[i] = appAnswer{panicked: p}
				}
			}
		}()
		s.apps.beginWrite(id) // before anything commits: no read may take the entry as current
		defer s.apps.endWrite(id)
		answers = s.applyCombined(id, batch)
	}()
	lock.Unlock()
	if next := s.hot.handOff(id); next != nil {
		next.done <- appAnswer{lead: true}
	}
	for i, c := range batch {
		c.done <- answers[i]
	}
}

// applyCombined applies batch's changes in turn and commits what they
// wrote as one grouped update, under the application's lock, answering
// each change's outcome.
//
// The first attempt starts from the cached application, without a read
// of the database: under the lock, the application as this process last
// wrote it is most likely still its latest version, and the group's
// version check says whether it is (if not, the next attempt reads). A
// read would wait for whatever commit is in flight (Badger's read
// timestamp waits for every commit before it), about half a millisecond
// an update under load. The activity log's head comes with the record,
// from the cache entry (when the entry knows it) or from the read's
// snapshot, so that the group, where every microsecond delays every
// writer, does not read it (logHead says why the version check covers
// it). A change's refusal counts only once the application it was
// decided on is known to be the latest: the commit of the changes that
// were applied says so; when none was, the batch starts again from a
// read.
func (s *Store) applyCombined(id uuid.UUID, batch []*appChange) []appAnswer {
	answers := make([]appAnswer, len(batch))
	key := appKey(id)
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var app *onboarding.Application
		var version uint64
		var head logHead
		if attempt == 0 {
			app, version, head = s.apps.latest(id)
		}
		cached := app != nil
		if !cached {
			if err := s.view(func(txn *badger.Txn) error {
				var err error
				if app, version, err = s.readApplicationVersion(txn, id, true); err != nil {
					return err
				}
				h, err := activityHead(txn, id)
				head = logHead{head: h, known: err == nil}
				return err
			}); err != nil {
				return answerAll(answers, err)
			}
		}
		w := chainChanges(id, app, batch, answers)
		if w.applied == 0 {
			if cached {
				continue // refused on the cached application: decide on the stored one
			}
			return answers
		}
		rec, err := record.Encode(w.app)
		if err != nil {
			return answerApplied(answers, err)
		}
		oldIx, newIx := appIndexes(app, id), appIndexes(w.app, id)
		var dues dueWrites
		var written logHead
		newVersion, err := s.groupedVersion(context.Background(), key, func(txn *badger.Txn) (func() error, error) {
			dues, written = dueWrites{}, logHead{}
			switch item, err := txn.Get(key); {
			case errors.Is(err, badger.ErrKeyNotFound):
				return nil, onboarding.ErrNotFound
			case err != nil:
				return nil, err
			case item.Version() != version:
				return nil, errStale
			}
			return func() error {
				if err := txn.Set(key, rec); err != nil {
					return err
				}
				if err := rewriteIndexes(txn, oldIx, newIx); err != nil {
					return err
				}
				var err error
				if written, err = s.appendActivityAfter(txn, id, head, w.log); err != nil {
					return err
				}
				for _, o := range w.outcomes {
					if err := writeOutcome(txn, o); err != nil {
						return err
					}
				}
				dues = eventDues(w.events.events)
				return s.writeEventRecords(txn, w.events)
			}, nil
		})
		s.due.lower(dues)
		switch {
		case errors.Is(err, errStale):
			continue
		case err != nil && w.applied > 1 && !errors.Is(err, errClosed):
			// The changes together could not be written: each alone,
			// in order, so that one bad change fails only its caller.
			for i, c := range batch {
				answers[i] = s.applyCombined(id, []*appChange{c})[0]
			}
			return answers
		case err != nil:
			return answerApplied(answers, err)
		}
		s.keepWritten(id, w.app, jsonSize(rec), written, newVersion)
		s.hot.batches.Add(1)
		return answers
	}
	return answerAll(answers, fmt.Errorf("update application %s: the record kept changing while it was updated", id))
}

// combinedWrite is what the applied changes of a batch write: the
// application as the last of them left it, and the activity entries,
// events and idempotency outcomes of all of them, in order.
type combinedWrite struct {
	app      *onboarding.Application
	applied  int
	log      []onboarding.Activity
	events   eventRecords
	outcomes []*outcomeWrite
}

// chainChanges applies batch's changes in turn, each on a copy of the
// application as the one before it left it (app for the first; app itself
// is left as it is), and sets each change's answer: the application as it
// left it, or why it was left out.
func chainChanges(id uuid.UUID, app *onboarding.Application, batch []*appChange, answers []appAnswer) combinedWrite {
	w := combinedWrite{app: app}
	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			answers[i] = appAnswer{err: err}
			continue
		}
		next := w.app.Clone()
		ch, panicked, err := runChange(c.change, next)
		switch {
		case panicked != nil:
			answers[i] = appAnswer{panicked: panicked}
			continue
		case err != nil:
			answers[i] = appAnswer{err: err}
			continue
		case next.ID != app.ID || next.OrgID != app.OrgID || next.Seq != app.Seq:
			answers[i] = appAnswer{err: fmt.Errorf("update application %s: id, organization and sequence are immutable", id)}
			continue
		}
		events, err := encodeEvents(ch.Events)
		if err != nil {
			answers[i] = appAnswer{err: err}
			continue
		}
		outcome, err := encodeOutcome(ch.Idempotent)
		if err != nil {
			answers[i] = appAnswer{err: err}
			continue
		}
		if outcome != nil {
			w.outcomes = append(w.outcomes, outcome)
		}
		w.app = next
		w.applied++
		w.log = append(w.log, ch.Log...)
		w.events.events = append(w.events.events, events.events...)
		w.events.recs = append(w.events.recs, events.recs...)
		answers[i] = appAnswer{app: next}
	}
	return w
}

// runChange runs change on app, recovering a panic in it.
func runChange(change func(*onboarding.Application) (onboarding.Changes, error), app *onboarding.Application) (ch onboarding.Changes, panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	ch, err = change(app)
	return ch, nil, err
}

// answerAll answers every change of a batch with err.
func answerAll(answers []appAnswer, err error) []appAnswer {
	for i := range answers {
		answers[i] = appAnswer{err: err}
	}
	return answers
}

// answerApplied answers err to the changes of a batch that were applied,
// whose write failed; the others keep their own outcome.
func answerApplied(answers []appAnswer, err error) []appAnswer {
	for i := range answers {
		if answers[i].app != nil {
			answers[i] = appAnswer{err: err}
		}
	}
	return answers
}
