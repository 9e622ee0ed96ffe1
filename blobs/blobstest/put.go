package blobstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/blobs"
	"onboard/onboarding"
)

// testRoundTrip puts content of sizes around the read buffer and the part
// size and reads each back: a new random id, the size, Stat's size, name
// and time, the content, and the same time from Walk.
func testRoundTrip(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	for _, n := range []int{0, 1, 100, 32<<10 - 1, 32 << 10, 32<<10 + 1, 1<<20 + 7, part - 1, part, part + 1, 2*part + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			want := randomBytes(n, uint64(n))
			before := time.Now()
			id, size, err := s.Put(context.Background(), bytes.NewReader(want), int64(n))
			after := time.Now()
			if err != nil {
				t.Fatalf("Put(%d bytes, max %d): %v", n, n, err)
			}
			if size != int64(n) {
				t.Errorf("Put size = %d; want %d", size, n)
			}
			u, err := uuid.Parse(id)
			if err != nil || u.String() != id || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
				t.Errorf("Put id = %q; want a canonical lower-case version 4 UUID", id)
			}
			if !blobs.ValidID(id) {
				t.Errorf("ValidID(%q) = false for an id Put returned", id)
			}
			f, err := s.Open(id)
			if err != nil {
				t.Fatalf("Open(%q): %v", id, err)
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if info.Size() != int64(n) || info.Name() != id || !info.Mode().IsRegular() || info.IsDir() {
				t.Errorf("Stat() = name %q, size %d, mode %v; want %q, %d, a regular file", info.Name(), info.Size(), info.Mode(), id, n)
			}
			modifiedNear(t, "Stat", info.ModTime(), before, after)
			got, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("content read back differs from content stored (%d vs %d bytes)", len(got), len(want))
			}
			_, times := walked(t, s)
			if w, ok := times[id]; !ok {
				t.Errorf("Walk does not report %s", id)
			} else if !w.Truncate(time.Second).Equal(info.ModTime().Truncate(time.Second)) {
				t.Errorf("Walk's time %s differs from Stat's %s", w, info.ModTime())
			}
		})
	}
}

// testEmptyBlob: an empty blob is stored and read as such, in order, at
// an offset and after seeking to its end.
func testEmptyBlob(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	id, size, err := s.Put(context.Background(), strings.NewReader(""), 0)
	if err != nil || size != 0 {
		t.Fatalf("Put(empty, max 0) = %q, %d, %v; want size 0", id, size, err)
	}
	f, err := s.Open(id)
	if err != nil {
		t.Fatalf("Open(%q): %v", id, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() != 0 {
		t.Errorf("Stat() = %v, %v; want size 0", info, err)
	}
	if n, err := f.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Errorf("ReadAt(1 byte, 0) = %d, %v; want 0, EOF", n, err)
	}
	if pos, err := f.Seek(0, io.SeekEnd); pos != 0 || err != nil {
		t.Errorf("Seek(0, end) = %d, %v; want 0", pos, err)
	}
	if n, err := f.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Errorf("Read = %d, %v; want 0, EOF", n, err)
	}
	if ids, _ := walked(t, s); !cmp.Equal(ids, []string{id}) {
		t.Errorf("Walk = %v; want the empty blob", ids)
	}
}

func testSizeLimit(t *testing.T, open func(t *testing.T) Blobs) {
	tests := []struct {
		name     string
		size     int
		max      int64
		tooLarge bool
	}{
		{"empty with zero limit", 0, 0, false},
		{"one byte over zero limit", 1, 0, true},
		{"exactly at limit", 1000, 1000, false},
		{"one byte over limit", 1001, 1000, true},
		{"far over limit", 100_000, 1000, true},
		{"under limit", 10, 1000, false},
		{"exactly at a buffer-sized limit", 32 << 10, 32 << 10, false},
		{"one over a buffer-sized limit", 32<<10 + 1, 32 << 10, true},
		{"exactly at a part-sized limit", part, part, false},
		{"one over a part-sized limit", part + 1, part, true},
		{"over a limit past the first part", 2*part + 1000, part + 100, true},
		{"over a limit past the second part", 3 * part, 2*part + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			id, size, err := s.Put(context.Background(), bytes.NewReader(randomBytes(tt.size, 1)), tt.max)
			if !tt.tooLarge {
				if err != nil {
					t.Fatalf("Put(%d bytes, max %d): %v", tt.size, tt.max, err)
				}
				if size != int64(tt.size) {
					t.Errorf("size = %d; want %d", size, tt.size)
				}
				if ids, _ := walked(t, s); !cmp.Equal(ids, []string{id}) {
					t.Errorf("Walk = %v; want just the blob %s", ids, id)
				}
				return
			}
			if !errors.Is(err, onboarding.ErrFileTooLarge) {
				t.Fatalf("Put(%d bytes, max %d) = %q, %d, %v; want an error wrapping ErrFileTooLarge", tt.size, tt.max, id, size, err)
			}
			if id != "" || size != 0 {
				t.Errorf("Put returned id %q, size %d with its error; want none", id, size)
			}
			empty(t, s)
		})
	}
}

// testReadsAtMostMaxPlusOne: the size is bounded while streaming, not
// after: an endless reader is read max+1 bytes far.
func testReadsAtMostMaxPlusOne(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	for _, max := range []int64{100_000, part + 100_000} {
		r := &countingReader{}
		_, _, err := s.Put(context.Background(), r, max)
		if !errors.Is(err, onboarding.ErrFileTooLarge) {
			t.Fatalf("Put(endless, %d) error = %v; want ErrFileTooLarge", max, err)
		}
		if r.n != max+1 {
			t.Errorf("Put(endless, %d) read %d bytes; want max+1 = %d", max, r.n, max+1)
		}
	}
	empty(t, s)
}

func testNegativeLimit(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	if _, _, err := s.Put(context.Background(), strings.NewReader(""), -1); err == nil {
		t.Error("Put with max -1 succeeded; want an error")
	}
	empty(t, s)
}

// testFailedPutsLeaveNothing: a Put whose context ends, or whose reader
// fails, before or after the first part, fails with that error and stores
// nothing; a cancelled Put reads no more once it has seen the cancellation.
func testFailedPutsLeaveNothing(t *testing.T, open func(t *testing.T) Blobs) {
	cancelledAfter := func(after int64) func(s Blobs) error {
		return func(s Blobs) error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &cancellingReader{after: after, cancel: cancel}
			_, _, err := s.Put(ctx, r, 1<<30)
			if r.late != 0 {
				return fmt.Errorf("reader read %d times after the cancellation; want none", r.late)
			}
			return err
		}
	}
	tests := []struct {
		name    string
		put     func(s Blobs) error
		wantErr error
	}{
		{
			name: "context cancelled before Put",
			put: func(s Blobs) error {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, _, err := s.Put(ctx, strings.NewReader("hello"), 100)
				return err
			},
			wantErr: context.Canceled,
		},
		{name: "context cancelled at the first read", put: cancelledAfter(0), wantErr: context.Canceled},
		{name: "context cancelled within the first part", put: cancelledAfter(100_000), wantErr: context.Canceled},
		{name: "context cancelled within the second part", put: cancelledAfter(part + 100_000), wantErr: context.Canceled},
		{
			name: "context past its deadline",
			put: func(s Blobs) error {
				ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				defer cancel()
				_, _, err := s.Put(ctx, strings.NewReader("hello"), 100)
				return err
			},
			wantErr: context.DeadlineExceeded,
		},
		{
			name: "reader error within the first part",
			put: func(s Blobs) error {
				_, _, err := s.Put(context.Background(), &failingReader{n: 70_000}, 1<<30)
				return err
			},
			wantErr: errBroken,
		},
		{
			name: "reader error within the second part",
			put: func(s Blobs) error {
				_, _, err := s.Put(context.Background(), &failingReader{n: part + 70_000}, 1<<30)
				return err
			},
			wantErr: errBroken,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if err := tt.put(s); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Put error = %v; want %v", err, tt.wantErr)
			}
			empty(t, s)
		})
	}
}

// testConcurrentPuts: puts from several goroutines get distinct ids and
// keep their own content.
func testConcurrentPuts(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	const workers, each = 8, 4
	type stored struct {
		id      string
		content []byte
	}
	results := make([][]stored, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				content := randomBytes(1000+w*each+i, uint64(w*each+i))
				id, _, err := s.Put(context.Background(), bytes.NewReader(content), 1<<20)
				if err != nil {
					t.Errorf("worker %d: Put: %v", w, err)
					return
				}
				results[w] = append(results[w], stored{id, content})
			}
		})
	}
	wg.Wait()
	var want []string
	for _, rs := range results {
		for _, r := range rs {
			want = append(want, r.id)
			if !bytes.Equal(read(t, s, r.id), r.content) {
				t.Errorf("blob %s: content differs", r.id)
			}
		}
	}
	if len(want) != workers*each {
		t.Errorf("%d blobs stored; want %d", len(want), workers*each)
	}
	ids, _ := walked(t, s)
	if diff := cmp.Diff(sorted(want), ids); diff != "" {
		t.Errorf("Walk (-want +got):\n%s", diff)
	}
}

// testBatch: a store that batches puts keeps a batch's blobs, readable
// before and after Sync, and a refused Put in a batch leaves nothing.
func testBatch(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	batcher, ok := s.(onboarding.BlobBatcher)
	if !ok {
		t.Skipf("%T is not an onboarding.BlobBatcher", s)
	}
	b := batcher.Batch()
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync of an empty batch: %v", err)
	}
	want := map[string][]byte{}
	for i := range 4 {
		content := randomBytes(1000+i, uint64(i))
		if i == 2 {
			if _, _, err := b.Put(context.Background(), bytes.NewReader(content), 10); !errors.Is(err, onboarding.ErrFileTooLarge) {
				t.Fatalf("batch Put over the limit: %v, want ErrFileTooLarge", err)
			}
			continue
		}
		id, size, err := b.Put(context.Background(), bytes.NewReader(content), 1<<20)
		if err != nil || size != int64(len(content)) || !blobs.ValidID(id) {
			t.Fatalf("batch Put = %q, %d, %v", id, size, err)
		}
		want[id] = content
		if got := read(t, s, id); !bytes.Equal(got, content) {
			t.Errorf("blob %s before Sync: %d bytes, want %d", id, len(got), len(content))
		}
	}
	if err := b.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	var ids []string
	for id, content := range want {
		ids = append(ids, id)
		if got := read(t, s, id); !bytes.Equal(got, content) {
			t.Errorf("blob %s after Sync: %d bytes, want %d", id, len(got), len(content))
		}
	}
	got, _ := walked(t, s)
	if diff := cmp.Diff(sorted(ids), got); diff != "" {
		t.Errorf("Walk (-want +got):\n%s", diff)
	}
}
