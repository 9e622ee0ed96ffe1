package storage

import (
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Group commit: the writes of applications (creates and updates) and of
// webhook attempts that callers ask for while a commit is on its way to
// disk are applied together, in one transaction and one fsync, by one
// goroutine (groupLoop).
//
// Badger commits in groups of its own, but a transaction cannot even start
// while an earlier commit is in flight: its read timestamp waits for every
// commit before it to be applied (oracle.readTs). With a transaction per
// write, each write would wait for the commit in flight, do its work and
// join a group that had mostly left already, leaving the cores idle. Here
// the callers do their work without a write transaction
// (UpdateApplication reads in a view and checks the version in the
// group); the loop starts one transaction per group, when its last commit
// is done, and finds everything that queued meanwhile.
//
// The updates of one application reach the loop already combined: one
// grouped write for all those that queued behind one another
// (appcombine.go), since each must start from what the one before wrote.
//
// A group succeeds or fails as a whole. When it fails (a conflict that its
// retries did not get past, a write error, a transaction too big, a panic
// while writing), each of its writes is tried again alone, so one bad
// write fails only its own caller.

// maxGroup bounds the updates of one group, well within Badger's
// transaction limits (a few KiB each against 2.4 MiB).
const maxGroup = 64

// groupedUpdate is one caller's update.
type groupedUpdate struct {
	// prepare reads and decides in txn and writes nothing; an error from it
	// ends this update alone. The function it answers writes this update
	// in txn; an error from it fails the group. Both may run more than
	// once, each time in a new transaction.
	prepare func(txn *badger.Txn) (write func() error, err error)
	// versionOf, when set, is a key the update writes whose new version
	// the caller wants (groupResult.version).
	versionOf []byte
	done      chan groupResult
}

// groupResult is how an update ended: its error, or the value of a panic
// in it, which the caller raises again on its own goroutine; and, when it
// wrote and asked for one, the version its key now has (0 if that could
// not be read).
type groupResult struct {
	err      error
	panicked any
	version  uint64
}

// grouped runs prepare and its write in the next group commit and returns
// once that commit is durable, or failed; after Close it answers
// errClosed, and while the disk is nearly full an error matching
// onboarding.ErrInsufficientStorage (space.go). ctx is checked before the
// update is queued only: once queued, it is committed or fails with its
// group.
func (s *Store) grouped(ctx context.Context, prepare func(txn *badger.Txn) (write func() error, err error)) error {
	_, err := s.groupedVersion(ctx, nil, prepare)
	return err
}

// groupedVersion is grouped, answering also the version key has after the
// commit (when key is not nil and the update wrote): the loop reads it
// once for the whole group, right after the commit, when no other group's
// commit can be in flight. A caller reading it itself would open a
// transaction whose read timestamp waits for the next group's commit
// (oracle.readTs): a whole commit cycle more per update. 0 when the
// version could not be read.
func (s *Store) groupedVersion(ctx context.Context, key []byte, prepare func(txn *badger.Txn) (write func() error, err error)) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.space.allow(); err != nil {
		return 0, err
	}
	u := &groupedUpdate{prepare: prepare, versionOf: key, done: make(chan groupResult, 1)}
	s.groupMu.RLock()
	if s.groupClosed {
		s.groupMu.RUnlock()
		return 0, errClosed
	}
	s.updates <- u
	s.groupMu.RUnlock()
	r := <-u.done
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.version, r.err
}

// groupedTxn runs fn in the next group commit as one update that any
// error of fn fails with its group (which is then tried again alone): for
// transactions whose reads and writes are not kept apart.
func (s *Store) groupedTxn(ctx context.Context, fn func(txn *badger.Txn) error) error {
	return s.grouped(ctx, func(txn *badger.Txn) (func() error, error) {
		return func() error { return fn(txn) }, nil
	})
}

// groupLoop commits the queued updates, a group at a time, until Close;
// it then commits what is still queued (Close lets no update in after it
// closes stop).
func (s *Store) groupLoop() {
	defer s.done.Done()
	for {
		var first *groupedUpdate
		select {
		case first = <-s.updates:
		case <-s.stop:
			for {
				select {
				case u := <-s.updates:
					s.commitGroup([]*groupedUpdate{u})
				default:
					return
				}
			}
		}
		group := []*groupedUpdate{first}
	collect:
		for len(group) < maxGroup {
			select {
			case u := <-s.updates:
				group = append(group, u)
			default:
				break collect
			}
		}
		s.commitGroup(group)
	}
}

// commitGroup commits group in one transaction, or, when that fails, each
// of its updates in a transaction of its own.
func (s *Store) commitGroup(group []*groupedUpdate) {
	if len(group) > 1 {
		results := make([]groupResult, len(group))
		err := s.update(context.Background(), func(txn *badger.Txn) error {
			for i, u := range group {
				r, err := runUpdate(txn, u)
				if err != nil {
					return err
				}
				results[i] = r
			}
			return nil
		})
		if err == nil {
			s.groups.Add(1)
			s.readVersions(group, results)
			for i, u := range group {
				u.done <- results[i]
			}
			return
		}
	}
	for _, u := range group {
		var r groupResult
		err := s.update(context.Background(), func(txn *badger.Txn) error {
			var err error
			r, err = runUpdate(txn, u)
			if err == nil {
				err = r.err
			}
			return err
		})
		if r.panicked == nil {
			r.err = err
		}
		results := []groupResult{r}
		s.readVersions([]*groupedUpdate{u}, results)
		u.done <- results[0]
	}
}

// readVersions sets the version of each update of a committed group that
// wrote and asked for one (versionOf), in one read transaction. Its keys
// are written only under their application's lock, which each caller
// holds until it has its answer, so the version read is the commit's.
func (s *Store) readVersions(group []*groupedUpdate, results []groupResult) {
	var wanted []int
	for i, u := range group {
		if u.versionOf != nil && results[i].err == nil && results[i].panicked == nil {
			wanted = append(wanted, i)
		}
	}
	if len(wanted) == 0 {
		return
	}
	_ = s.view(func(txn *badger.Txn) error {
		for _, i := range wanted {
			if item, err := txn.Get(group[i].versionOf); err == nil {
				results[i].version = item.Version()
			}
		}
		return nil
	})
}

// runUpdate runs u in txn. Its result is u's own outcome (an error of
// prepare, or a panic, after which it wrote nothing); the error is one
// that must fail the transaction (from its write, or a panic part-way
// through it).
func runUpdate(txn *badger.Txn, u *groupedUpdate) (r groupResult, err error) {
	writing := false
	defer func() {
		if p := recover(); p != nil {
			r = groupResult{panicked: p}
			if writing {
				err = fmt.Errorf("update panicked while writing: %v", p)
			}
		}
	}()
	write, perr := u.prepare(txn)
	if perr != nil {
		return groupResult{err: perr}, nil
	}
	writing = true
	if err := write(); err != nil {
		return groupResult{}, err
	}
	return groupResult{}, nil
}
