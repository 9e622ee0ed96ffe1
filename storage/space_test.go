package storage

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestSpaceGate walks the gate through a disk filling and emptying: writes
// are refused below the reserve, stay refused until the free space is
// spaceSlack above it, and each change is logged once.
func TestSpaceGate(t *testing.T) {
	const reserve = 4 << 20
	var logs bytes.Buffer
	free := int64(0)
	g := &spaceGate{dir: "/data/badger", free: func() (int64, error) { return free, nil }, need: func() int64 { return reserve },
		log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})), now: time.Now}
	g.measure()
	steps := []struct {
		free    int64
		n       int64 // bytes asked for
		refused bool
	}{
		{free: 10 << 20, refused: false},
		{free: 10 << 20, n: 6<<20 + 1, refused: true}, // a chunk that would eat into the reserve
		{free: 10 << 20, refused: false},              // spaceSlack above: lifted
		{free: reserve, refused: false},
		{free: reserve - 1, refused: true},
		{free: reserve - 1, refused: true},
		{free: reserve + spaceSlack - 1, refused: true}, // above the reserve, within the slack
		{free: reserve + spaceSlack, refused: false},
		{free: reserve + spaceSlack, refused: false},
	}
	for i, s := range steps {
		free = s.free
		err := g.admit(s.n)
		if got := err != nil; got != s.refused {
			t.Fatalf("step %d (free %d, n %d): refused %v, want %v (err %v)", i, s.free, s.n, got, s.refused, err)
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, onboarding.ErrInsufficientStorage) {
			t.Errorf("step %d: %v does not match ErrInsufficientStorage", i, err)
		}
		if e := onboarding.AsError(err); e == nil || e.Kind != onboarding.KindUnavailable || !e.Retryable {
			t.Errorf("step %d: AsError = %+v, want a retryable KindUnavailable", i, e)
		}
	}
	want := []string{
		`level=ERROR msg="storage: insufficient storage, writes are refused until space is freed" dir=/data/badger free_bytes=10485760 reserve_bytes=4194304`,
		`level=INFO msg="storage: disk space is back, writes resume" dir=/data/badger free_bytes=10485760 reserve_bytes=4194304`,
		`level=ERROR msg="storage: insufficient storage, writes are refused until space is freed" dir=/data/badger free_bytes=4194303 reserve_bytes=4194304`,
		`level=INFO msg="storage: disk space is back, writes resume" dir=/data/badger free_bytes=4718592 reserve_bytes=4194304`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(logs.String()), "\n")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}

	free = 1 << 20
	err := g.allow()
	if want := "Insufficient storage: 1.00 MiB free on the filesystem of /data/badger, 4.00 MiB needed to accept writes; writes are refused until space is freed"; err == nil || err.Error() != want {
		t.Errorf("message = %v, want %q", err, want)
	}
	if g.roomFor(0) {
		t.Error("roomFor(0) with 1 MiB free and a 4 MiB reserve")
	}
	free = 8 << 20
	if g.roomFor(4<<20 + 1) {
		t.Error("roomFor over the free space above the reserve")
	}
	if !g.roomFor(4 << 20) {
		t.Error("roomFor refused what fits")
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestSpaceReserve: the reserve of a real database counts the margin and
// the write-ahead log a flush turns into a table; Writable, AdmitWrite and
// SpaceState answer from it.
func TestSpaceReserve(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	empty := s.spaceNeeded()
	if empty < spaceMargin {
		t.Fatalf("reserve %d, want at least the margin %d", empty, spaceMargin)
	}
	for i := 0; i < 200; i++ {
		if err := s.update(context.Background(), func(txn *badger.Txn) error {
			return txn.Set([]byte{'z', byte(i)}, bytes.Repeat([]byte{'v'}, 512))
		}); err != nil {
			t.Fatal(err)
		}
	}
	wal := memtablesToFlush(s.dir)
	if wal < 200*512 {
		t.Fatalf("write-ahead log holds %d bytes after 100 KiB of writes", wal)
	}
	if got := s.spaceNeeded(); got < empty+wal {
		t.Errorf("reserve %d after writes, want at least %d + %d", got, empty, wal)
	}
	if err := s.Writable(); err != nil {
		t.Errorf("Writable: %v", err)
	}
	if err := s.AdmitWrite(1 << 62); !errors.Is(err, onboarding.ErrInsufficientStorage) {
		t.Errorf("AdmitWrite of more than the disk: %v", err)
	}
	if free, reserve, refused := s.SpaceState(); free <= 0 || reserve < spaceMargin || !refused {
		t.Errorf("SpaceState = %d, %d, %v after a refusal", free, reserve, refused)
	}
	if err := s.Writable(); err != nil {
		t.Errorf("Writable after the refused write: %v", err)
	}
}
