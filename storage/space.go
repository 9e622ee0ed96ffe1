package storage

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"onboard/onboarding"
)

// The space gate keeps a full disk an error instead of a crash. Badger
// writes its write-ahead logs (*.mem), value logs (*.vlog), tables (*.sst)
// and DISCARD file through memory maps of files it creates sparse, so a
// write into a page the filesystem cannot allocate is a SIGBUS, which no
// Go code can recover from. So every write asks the gate first
// (Store.update, groupedVersion, and the blob store for each chunk of a
// file), and the gate refuses it, before Badger sees it, while the free
// space of the database's filesystem is below the reserve: what Badger may
// still write on its own once the writes already admitted are in (see
// Store.spaceNeeded). Reads never ask. The refusal lifts, by itself, once
// the free space is back above the reserve with some slack, seen by the
// next write or by the gate's own look every spaceEvery. A database opened
// read-only for want of space (openMode) is reopened for writing by that
// look too, once the free space allows the open and the reserve after it.
const (
	// spaceMargin is the part of the reserve that does not depend on the
	// database: the writes admitted between two looks at the free space
	// (a group commit of up to maxGroup records and the value-log entries
	// of its larger ones), the first pages of the next memtable and value
	// log files, and the growth of MANIFEST and DISCARD.
	spaceMargin = 2 << 20
	// spaceSlack is how far above the reserve the free space must be for a
	// refusal to lift, so that writes near the boundary do not make it
	// come and go with every write.
	spaceSlack = 512 << 10
	// spaceEvery is how often the reserve is measured again, and how often
	// the gate looks at the free space when nothing writes.
	spaceEvery = time.Second
	// openMargin is what opening the database needs besides flushing the
	// memtables left in write-ahead logs: the pages Open reads past the end
	// of its logs (on tmpfs, reading a hole allocates it), the new
	// memtable's first page and a rewrite of MANIFEST.
	openMargin = 256 << 10
	// vlogGCRewrite is what one round of value-log garbage collection may
	// write before it deletes the file it rewrites: the live half of a
	// value-log file at most (gcLoop's discard ratio is 0.5) of
	// badgerOptions' 64 MiB.
	vlogGCRewrite = 32 << 20
)

// spaceGate decides whether a write may go to disk, and logs, once each,
// the moment writes start being refused and the moment they resume.
type spaceGate struct {
	dir  string                // named in the messages
	free func() (int64, error) // bytes the filesystem still gives this process
	need func() int64          // the reserve, measured afresh
	log  *slog.Logger
	now  func() time.Time

	measuring sync.Mutex   // one measure of the reserve at a time
	reserve   atomic.Int64 // the last measured reserve
	measured  atomic.Int64 // when, in Unix nanoseconds
	lastFree  atomic.Int64 // the free space last seen
	refused   atomic.Bool
	flip      sync.Mutex // orders the state changes and their log lines
	// readOnly, set while the database is open read-only
	// (openedReadOnly), refuses every write.
	readOnly atomic.Pointer[spaceError]
	// reopen reopens a database open read-only for writing (see
	// Store.reopenWritable); reopenLogged, used by watch alone, keeps its
	// failures to one log line.
	reopen       func() (bool, error)
	reopenLogged bool
}

// newSpaceGate returns the gate of the filesystem holding dir, whose free
// space free measures (freeBytes), with the reserve need measures.
func newSpaceGate(dir string, free func(string) (int64, error), need func() int64, log *slog.Logger, now func() time.Time) *spaceGate {
	g := &spaceGate{dir: dir, free: func() (int64, error) { return free(dir) }, need: need, log: log, now: now}
	g.measure()
	return g
}

// spaceError is a write refused for want of space. Its message, with the
// figures, is for logs and GET /readyz; it unwraps to
// onboarding.ErrInsufficientStorage, the API's answer.
type spaceError struct {
	dir        string
	free, need int64 // need: the free space the refused work needs
	what       string
}

func (e *spaceError) Error() string {
	return fmt.Sprintf("Insufficient storage: %s free on the filesystem of %s, %s needed %s",
		byteSize(e.free), e.dir, byteSize(e.need), e.what)
}

// What a spaceError says is refused.
const (
	refusedWrites   = "to accept writes; writes are refused until space is freed"
	refusedReadOnly = "to open the database for writing: it is open read-only, and writes are refused until space is freed, when it reopens for writing by itself"
)

func (e *spaceError) Unwrap() error { return onboarding.ErrInsufficientStorage }

// allow is admit of nothing: the check of a write to the database.
func (g *spaceGate) allow() error { return g.admit(0) }

// admit reports whether n more bytes may be written now: nil, or a
// *spaceError once the free space, less n, is below the reserve. A refusal
// holds until the free space is spaceSlack above the reserve plus n. A
// free space that cannot be read admits: the gate is a guard, not a new
// way to fail.
func (g *spaceGate) admit(n int64) error {
	if e := g.readOnly.Load(); e != nil {
		if free, err := g.free(); err == nil {
			g.lastFree.Store(free)
			return &spaceError{dir: g.dir, free: free, need: g.writableNeed(), what: refusedReadOnly}
		}
		return e
	}
	free, err := g.free()
	if err != nil {
		return nil
	}
	g.lastFree.Store(free)
	reserve := g.currentReserve()
	if g.refused.Load() {
		if free-n < reserve+spaceSlack {
			return &spaceError{dir: g.dir, free: free, need: reserve + spaceSlack + n, what: refusedWrites}
		}
		g.set(false, free, reserve)
		return nil
	}
	if free-n < reserve {
		g.set(true, free, reserve)
		return &spaceError{dir: g.dir, free: free, need: reserve + n, what: refusedWrites}
	}
	return nil
}

// roomFor reports whether n bytes fit above the reserve, without changing
// the gate's state: for background work that may wait (value-log GC).
func (g *spaceGate) roomFor(n int64) bool {
	free, err := g.free()
	return err == nil && free-n >= g.currentReserve()
}

// set enters (refused) or leaves the refused state, logging the change
// once.
func (g *spaceGate) set(refused bool, free, reserve int64) {
	g.flip.Lock()
	defer g.flip.Unlock()
	if g.refused.Load() == refused {
		return
	}
	g.refused.Store(refused)
	if refused {
		g.log.Error("storage: insufficient storage, writes are refused until space is freed",
			"dir", g.dir, "free_bytes", free, "reserve_bytes", reserve)
		return
	}
	g.log.Info("storage: disk space is back, writes resume", "dir", g.dir, "free_bytes", free, "reserve_bytes", reserve)
}

// openedReadOnly refuses every write, the database having been opened
// read-only for want of space (see openMode), and logs why once, until
// watch has reopened it for writing with reopen. reopen answers false
// when it could not start yet (readers were busy), and an error when the
// database could not be opened for writing and stays read-only.
func (g *spaceGate) openedReadOnly(e *spaceError, reopen func() (bool, error)) {
	g.reopen = reopen
	g.readOnly.Store(e)
	g.lastFree.Store(e.free)
	g.refused.Store(true)
	g.log.Error("storage: insufficient storage, the database is open read-only; writes are refused until space is freed, when it reopens for writing by itself",
		"dir", g.dir, "free_bytes", e.free, "needed_bytes", g.writableNeed())
}

// writableNeed is the free space a database open read-only needs to be
// reopened for writing: the open's (openNeed), and the reserve after it
// with the slack that lifts a refusal.
func (g *spaceGate) writableNeed() int64 {
	return openNeed(g.dir) + g.currentReserve() + spaceSlack
}

// tryReopen reopens the database open read-only for writing once the free
// space allows it, and then lets writes in, saying so once.
func (g *spaceGate) tryReopen() {
	free, err := g.free()
	if err != nil {
		return
	}
	g.lastFree.Store(free)
	if free < g.writableNeed() {
		return
	}
	done, err := g.reopen()
	if err != nil {
		if !g.reopenLogged {
			g.reopenLogged = true
			g.log.Error("storage: the database could not be reopened for writing; it stays read-only, and the reopen is tried again",
				"dir", g.dir, "err", err)
		}
		return
	}
	if !done {
		return
	}
	g.measure()
	g.flip.Lock()
	defer g.flip.Unlock()
	g.readOnly.Store(nil)
	g.refused.Store(false)
	g.log.Info("storage: disk space is back, the database is open for writing again",
		"dir", g.dir, "free_bytes", free, "reserve_bytes", g.reserve.Load())
}

// currentReserve is the reserve, measured again when the last measure is
// older than spaceEvery (by one caller; the others use the last).
func (g *spaceGate) currentReserve() int64 {
	if g.now().UnixNano()-g.measured.Load() >= int64(spaceEvery) && g.measuring.TryLock() {
		g.measure()
		g.measuring.Unlock()
	}
	return g.reserve.Load()
}

func (g *spaceGate) measure() {
	g.reserve.Store(g.need())
	g.measured.Store(g.now().UnixNano())
}

// watch looks at the free space every spaceEvery until stop is closed, so
// that a refusal lifts, and is logged as lifted, without a write.
func (g *spaceGate) watch(stop <-chan struct{}) {
	t := time.NewTicker(spaceEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if g.readOnly.Load() != nil {
				g.tryReopen()
				continue
			}
			_ = g.allow()
		}
	}
}

// spaceNeeded is the reserve of the database's gate: the space Badger may
// take on its own, with no write asking, before the gate's next look.
//   - Each memtable still in a write-ahead log is flushed into a level 0
//     table of about its size (counted with a quarter more, for the
//     table's index and filter), and the log is deleted only afterwards.
//   - A compaction out of level 0 merges level 0 with the base level and
//     writes the result before it deletes its inputs: up to their size.
//   - spaceMargin for the rest.
//
// Compactions between deeper levels are not counted: Badger starts them
// one table at a time, small beside this reserve.
func (s *Store) spaceNeeded() int64 {
	need := int64(spaceMargin) + memtablesToFlush(s.dir)*5/4
	s.rlockDB()
	defer s.dbMu.RUnlock()
	if !s.db.IsClosed() {
		for _, l := range s.db.Levels() {
			if l.Level == 0 || l.IsBaseLevel {
				need += l.Size
			}
		}
	}
	return need
}

// memtablesToFlush is the space the write-ahead logs (*.mem) in dir hold
// on disk: allocated blocks, not their sparse size.
func memtablesToFlush(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(dir, e.Name()), &st) == nil {
			n += st.Blocks * 512
		}
	}
	return n
}

// openMode decides how the database in dir can be opened in the free space
// of its filesystem. Opening it for writing takes openMargin, plus the
// size of the memtables left in write-ahead logs, which Badger flushes as
// it opens, through memory maps: short of that it would die of SIGBUS. It
// is then opened read-only (openReadOnly), which replays those logs into
// memory and writes nothing: readOnly is the *spaceError that says why.
func openMode(dir string, freeBytes func(string) (int64, error)) (readOnly *spaceError, err error) {
	free, err := freeBytes(dir)
	if err != nil {
		return nil, nil
	}
	need := openNeed(dir)
	if free >= need {
		return nil, nil
	}
	return &spaceError{dir: dir, free: free, need: need, what: refusedReadOnly}, nil
}

// openNeed is the free space opening the database in dir for writing
// takes: flushing the memtables left in write-ahead logs, and openMargin.
func openNeed(dir string) int64 {
	return memtablesToFlush(dir)*5/4 + openMargin
}

// freeBytes is the space the filesystem holding dir gives an unprivileged
// writer (statfs's available blocks).
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// byteSize formats n bytes for a message: "812 KiB", "3.4 MiB".
func byteSize(n int64) string {
	switch {
	case n < 0:
		return "0 B"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	case n < 1<<30:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// AdmitWrite reports whether n more bytes may be written to the data
// directory's filesystem now: nil, or an error matching
// onboarding.ErrInsufficientStorage once that would take its free space
// below the database's reserve. The blob store asks it before each chunk
// it writes.
func (s *Store) AdmitWrite(n int64) error { return s.space.admit(n) }

// Writable is the check of GET /readyz for the disk: nil while writes are
// accepted, the reason they are refused otherwise.
func (s *Store) Writable() error { return s.space.allow() }

// SpaceState is what the gate last saw: the free space of the database's
// filesystem, the reserve, and whether writes are refused.
func (s *Store) SpaceState() (free, reserve int64, refused bool) {
	return s.space.lastFree.Load(), s.space.reserve.Load(), s.space.refused.Load()
}
