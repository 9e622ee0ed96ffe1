package storage

import (
	"errors"
	"regexp"
	"testing"
	"time"
)

// TestCloseWithin: a close that does not finish is left running, and the
// error says what Badger last failed to do and where the writes are.
func TestCloseWithin(t *testing.T) {
	s := &Store{dir: t.TempDir()}
	msg := "badger: error flushing memtable to disk: open 000002.sst: read-only file system\nretrying"
	s.badgerErr.Store(&msg)
	release := make(chan struct{})
	defer close(release)
	err := s.closeWithin(time.Millisecond, func() error { <-release; return nil })
	if !errors.Is(err, ErrCloseTimedOut) {
		t.Fatalf("err = %v, want ErrCloseTimedOut", err)
	}
	want := regexp.MustCompile(`^the database could not be flushed within 30s \(badger: error flushing memtable to disk: open 000002\.sst: read-only file system; retrying\); nothing acknowledged is lost: the writes not yet flushed \(0 B\) are in the write-ahead log \(.*/\*\.mem\), which the next start replays$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("message %q", err)
	}

	if err := s.closeWithin(time.Hour, func() error { return nil }); err != nil {
		t.Errorf("a close that finishes: %v", err)
	}
}
