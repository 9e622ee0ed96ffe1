package storage

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// TestReopenWritable opens a database read-only for want of space, as
// Open does on a disk filled to its last bytes, and frees the space: the
// gate reopens it for writing by itself, under readers that keep reading
// through the swap, and a write then succeeds and is durable.
func TestReopenWritable(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := func(s *Store, key string) error {
		return s.update(context.Background(), func(txn *badger.Txn) error { return txn.Set([]byte(key), []byte("v")) })
	}
	get := func(s *Store, key string) error {
		return s.view(func(txn *badger.Txn) error {
			_, err := txn.Get([]byte(key))
			return err
		})
	}
	if err := set(s, "zbefore"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var free atomic.Int64 // the disk is full
	var logs syncBuffer
	s, err = Open(dir, Options{
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})),
		freeBytes: func(string) (int64, error) { return free.Load(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.space.readOnly.Load() == nil {
		t.Fatal("opened for writing with no space free")
	}
	if err := get(s, "zbefore"); err != nil {
		t.Fatalf("read of a database open read-only: %v", err)
	}
	err = set(s, "zafter")
	if !errors.Is(err, onboarding.ErrInsufficientStorage) || !strings.Contains(err.Error(), refusedReadOnly) {
		t.Fatalf("write to a database open read-only: %v", err)
	}

	// Readers keep reading while the space is freed and the database
	// swapped.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	stopReaders := sync.OnceFunc(func() {
		close(stop)
		readers.Wait()
	})
	defer stopReaders() // before Close, even when the test fails
	readErrs := make(chan error, 4)
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := get(s, "zbefore"); err != nil {
					readErrs <- err
					return
				}
				if err := s.Ping(context.Background()); err != nil {
					readErrs <- err
					return
				}
			}
		}()
	}
	free.Store(1 << 40)
	deadline := time.Now().Add(30 * time.Second)
	for s.space.readOnly.Load() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still read-only 30s after space was freed; log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopReaders()
	close(readErrs)
	for err := range readErrs {
		t.Errorf("read during the reopen: %v", err)
	}
	if err := set(s, "zafter"); err != nil {
		t.Fatalf("write after the reopen: %v", err)
	}
	if err := s.Writable(); err != nil {
		t.Errorf("Writable after the reopen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		got = append(got, l[:strings.Index(l+" dir=", " dir=")])
	}
	want := []string{
		`level=ERROR msg="storage: insufficient storage, the database is open read-only; writes are refused until space is freed, when it reopens for writing by itself"`,
		`level=INFO msg="storage: disk space is back, the database is open for writing again"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log = %q, want %q", got, want)
	}

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, key := range []string{"zbefore", "zafter"} {
		if err := get(s, key); err != nil {
			t.Errorf("%s after a restart: %v", key, err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use: a log written by
// the store's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestReopenWritableRetries: an open for writing that fails (here, another
// holder of Badger's directory lock) leaves the database open read-only,
// serving reads, is logged once, and is tried again until it succeeds.
func TestReopenWritableRetries(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var free atomic.Int64
	var logs syncBuffer
	s, err = Open(dir, Options{
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})),
		freeBytes: func(string) (int64, error) { return free.Load(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A shared lock beside the read-only database's: an exclusive one,
	// which writing takes, fails.
	lock, err := os.Open(dir) // Badger flocks the directory
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	const failed = `level=ERROR msg="storage: the database could not be reopened for writing; it stays read-only, and the reopen is tried again"`
	free.Store(1 << 40)
	waitFor(t, "the failed reopen's log line", func() bool { return strings.Contains(logs.String(), failed) })
	if s.space.readOnly.Load() == nil {
		t.Fatal("writable while another process holds the directory lock")
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("read after a failed reopen: %v", err)
	}
	if err := lock.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reopen", func() bool { return s.space.readOnly.Load() == nil })
	if err := s.update(context.Background(), func(txn *badger.Txn) error { return txn.Set([]byte("z"), nil) }); err != nil {
		t.Fatalf("write after the reopen: %v", err)
	}
	if n := strings.Count(logs.String(), failed); n != 1 {
		t.Errorf("the failed reopen is logged %d times, want once; log:\n%s", n, logs.String())
	}
}

// waitFor polls done until it reports true, failing the test after 30s.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
