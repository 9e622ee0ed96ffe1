package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// closeTimeout bounds how long Close waits for Badger to flush its
// memtable and compact level 0. A healthy close takes seconds; one that
// cannot write (a data directory made read-only, a disk failing) would
// wait for ever, Badger retrying the flush every second. Giving up loses
// nothing acknowledged: every acknowledged write is in the synced
// write-ahead log, which the next Open replays.
const closeTimeout = 30 * time.Second

// ErrCloseTimedOut is matched by the error of a Close that gave up waiting
// for the database to flush.
var ErrCloseTimedOut = fmt.Errorf("the database could not be flushed within %s", closeTimeout)

// closeWithin runs close, waiting at most within: after that it leaves
// close running and returns an error matching ErrCloseTimedOut that says
// what Badger last failed to do and where the unflushed writes are.
func (s *Store) closeWithin(within time.Duration, close func() error) error {
	done := make(chan error, 1)
	go func() { done <- close() }()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	why := ""
	if last := s.badgerErr.Load(); last != nil {
		why = " (" + strings.ReplaceAll(*last, "\n", "; ") + ")"
	}
	return fmt.Errorf("%w%s; nothing acknowledged is lost: the writes not yet flushed (%s) are in the write-ahead log (%s), which the next start replays",
		ErrCloseTimedOut, why, byteSize(memtablesToFlush(s.dir)), filepath.Join(s.dir, "*.mem"))
}

// lastError is a slog.Handler that passes records on to next and keeps the
// message of the last one at error level: Badger's own, which Close names
// when it gives up.
type lastError struct {
	next slog.Handler
	last *atomic.Pointer[string]
}

func (h lastError) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.next.Enabled(ctx, l)
}

func (h lastError) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		msg := r.Message
		h.last.Store(&msg)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h lastError) WithAttrs(as []slog.Attr) slog.Handler {
	return lastError{next: h.next.WithAttrs(as), last: h.last}
}

func (h lastError) WithGroup(name string) slog.Handler {
	return lastError{next: h.next.WithGroup(name), last: h.last}
}

// ErrNoRoomToFlush is matched by the error of a Close that did not flush
// the database because the disk had no room for it: Badger writes the
// flushed tables through memory maps, and a page the filesystem cannot
// allocate would end the process with SIGBUS instead of an error.
var ErrNoRoomToFlush = errors.New("the database was not flushed: the disk has no room for it")

// roomToFlush reports whether the disk has room for what Close writes: the
// memtables still in write-ahead logs, flushed into level 0 tables, and
// the compaction of level 0 that Badger runs on close. It answers nil, or
// an error matching ErrNoRoomToFlush that says where the writes are kept.
func (s *Store) roomToFlush() error {
	wal := memtablesToFlush(s.dir)
	need := wal*5/4 + openMargin
	for _, l := range s.db.Levels() {
		if l.Level == 0 || l.IsBaseLevel {
			need += l.Size
		}
	}
	free, err := s.space.free()
	if err != nil || free >= need {
		return nil
	}
	return fmt.Errorf("%w (%s free on the filesystem of %s, %s needed); nothing acknowledged is lost: the writes not yet flushed (%s) are in the write-ahead log (%s), which the next start replays once space is freed",
		ErrNoRoomToFlush, byteSize(free), s.dir, byteSize(need), byteSize(wal), filepath.Join(s.dir, "*.mem"))
}
