package storage

import (
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// reopenWait bounds how long one reopen waits for a moment with no reader
// of the database; it is tried again at the gate's next look.
const reopenWait = 500 * time.Millisecond

// readOnlyOptions are opts for a database opened read-only for want of
// space: it writes nothing, not even the compaction Close would run.
func readOnlyOptions(opts badger.Options) badger.Options {
	return opts.WithReadOnly(true).WithCompactL0OnClose(false)
}

// reopenWritable closes the database, open read-only for want of space,
// and opens it again for writing, with Badger's compactions and flushes
// (the space gate calls it once the free space allows). Readers wait for
// the swap, whose open flushes the write-ahead logs the read-only one
// replayed into memory (the gate waits for room for them);
// the read-only database is closed before the other is opened, Badger's
// directory lock allowing only one. It answers false, having changed
// nothing, when readers kept the database busy for reopenWait; and an
// error when the open for writing failed, the database being then opened
// read-only again (or, if that fails too, left closed for a later try).
func (s *Store) reopenWritable() (bool, error) {
	if !s.lockDB(reopenWait) {
		return false, nil
	}
	defer s.dbMu.Unlock()
	// A failed close is seen again, with its cause, by the open below.
	_ = s.db.Close()
	db, err := badger.Open(s.bopts)
	if err == nil {
		s.db = db
		return true, nil
	}
	err = fmt.Errorf("open database %s for writing: %w", s.dir, err)
	ro, roErr := openReadOnly(s.bopts)
	if roErr != nil {
		return false, fmt.Errorf("%w; reopen it read-only: %v", err, roErr)
	}
	s.db = ro
	return false, err
}

// A reader of the database may take dbMu again inside its transaction (a
// view in a view, a callback that reads), so the reopen cannot simply wait
// for it with Lock: a reader holding it and asking again would wait behind
// the reopen, which waits for that reader. Instead the reopen announces
// itself (swapping), readers arriving then hold back for up to readerHold
// (a reader already holding dbMu goes on after that), and the reopen takes
// dbMu with TryLock once the readers in flight are done. So new readers
// cannot keep it out for ever, and nothing can deadlock.
const readerHold = 100 * time.Millisecond

// rlockDB takes dbMu for reading, first holding back while a reopen
// waits for the readers in flight (for readerHold at most).
func (s *Store) rlockDB() {
	if c := s.swapping.Load(); c != nil {
		t := time.NewTimer(readerHold)
		select {
		case <-*c:
		case <-t.C:
		}
		t.Stop()
	}
	s.dbMu.RLock()
}

// lockDB takes dbMu for writing once no reader holds it, trying for up to
// wait with new readers held back (rlockDB).
func (s *Store) lockDB(wait time.Duration) bool {
	c := make(chan struct{})
	s.swapping.Store(&c)
	defer func() {
		s.swapping.Store(nil)
		close(c)
	}()
	deadline := time.Now().Add(wait)
	for !s.dbMu.TryLock() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}
