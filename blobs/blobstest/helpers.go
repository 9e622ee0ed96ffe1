package blobstest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// put stores content with a generous limit and returns the blob's id.
func put(t *testing.T, s Blobs, content []byte) string {
	t.Helper()
	id, size, err := s.Put(context.Background(), bytes.NewReader(content), int64(len(content))+1<<20)
	if err != nil {
		t.Fatalf("Put(%d bytes): %v", len(content), err)
	}
	if size != int64(len(content)) {
		t.Fatalf("Put(%d bytes) size = %d", len(content), size)
	}
	return id
}

// read returns the whole content of blob id, read in order.
func read(t *testing.T, s Blobs, id string) []byte {
	t.Helper()
	f, err := s.Open(id)
	if err != nil {
		t.Fatalf("Open(%q): %v", id, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("reading blob %s: %v", id, err)
	}
	return b
}

// walked returns the ids Walk reports, sorted, with their times.
func walked(t *testing.T, s Blobs) ([]string, map[string]time.Time) {
	t.Helper()
	times := map[string]time.Time{}
	err := s.Walk(func(id string, modified time.Time) error {
		if _, dup := times[id]; dup {
			t.Errorf("Walk reported %s twice", id)
		}
		times[id] = modified
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	ids := make([]string, 0, len(times))
	for id := range times {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, times
}

// empty fails t unless Walk finds no blob: what a failed Put must leave.
func empty(t *testing.T, s Blobs) {
	t.Helper()
	if ids, _ := walked(t, s); len(ids) != 0 {
		t.Errorf("blobs stored after a failed Put: %v", ids)
	}
}

// countingReader yields an endless stream of 'x' and counts what it yields.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

// errBroken is the failure of a failingReader.
var errBroken = errors.New("broken reader")

// failingReader yields n bytes and then fails with errBroken.
type failingReader struct{ n int }

func (e *failingReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errBroken
	}
	n := min(len(p), e.n)
	for i := range p[:n] {
		p[i] = 'y'
	}
	e.n -= n
	return n, nil
}

// cancellingReader yields endless data and, once it has yielded after
// bytes, cancels its context: a client that goes away mid-upload. It
// counts the reads made after the cancellation.
type cancellingReader struct {
	after     int64
	cancel    context.CancelFunc
	n         int64
	cancelled bool
	late      int // reads after the one that cancelled
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if c.cancelled {
		c.late++
	}
	n := len(p)
	if rest := c.after - c.n; rest > 0 && int64(n) > rest {
		n = int(rest)
	}
	for i := range p[:n] {
		p[i] = 'z'
	}
	c.n += int64(n)
	if c.n >= c.after && !c.cancelled {
		c.cancelled = true
		c.cancel()
	}
	return n, nil
}

// modifiedNear fails t unless modified lies between before and after,
// allowing for stores that keep times to the second.
func modifiedNear(t *testing.T, what string, modified, before, after time.Time) {
	t.Helper()
	if modified.Before(before.Truncate(time.Second).Add(-time.Second)) || modified.After(after.Add(time.Second)) {
		t.Errorf("%s modified %s; want between %s and %s", what, modified, before, after)
	}
}

// sorted returns a sorted copy of ids.
func sorted(ids []string) []string {
	return slices.Sorted(slices.Values(ids))
}
