package blobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/blobs"
	"onboard/onboarding"
)

// openStore opens a store in a fresh temporary directory.
func openStore(t testing.TB) (*blobs.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := blobs.Open(dir)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	return s, dir
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// files lists the regular files under dir, relative to it, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readBlob returns the content of blob id.
func readBlob(t *testing.T, s *blobs.Store, id string) []byte {
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

func TestOpenCreatesDirectories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "blobs")
	if _, err := blobs.Open(dir); err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "tmp")} {
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !info.IsDir() || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v; want a directory with mode 0700", d, info.Mode())
		}
	}
	if _, err := blobs.Open(""); err == nil {
		t.Error(`Open("") succeeded; want an error`)
	}
}

func TestPutOpenRoundTrip(t *testing.T) {
	s, dir := openStore(t)
	for _, n := range []int{0, 1, 100, 32<<10 - 1, 32 << 10, 32<<10 + 1, 1<<20 + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			want := randomBytes(n, uint64(n))
			id, size, err := s.Put(context.Background(), bytes.NewReader(want), int64(n))
			if err != nil {
				t.Fatalf("Put(%d bytes): %v", n, err)
			}
			if size != int64(n) {
				t.Errorf("Put size = %d; want %d", size, n)
			}
			u, err := uuid.Parse(id)
			if err != nil || u.String() != id || u.Version() != 4 {
				t.Errorf("Put id = %q; want a canonical lower-case version 4 UUID", id)
			}
			if !blobs.ValidID(id) {
				t.Errorf("ValidID(%q) = false for an id Put returned", id)
			}
			// The blob is at dir/ab/cd/id.
			p := filepath.Join(dir, id[0:2], id[2:4], id)
			if info, err := os.Stat(p); err != nil {
				t.Errorf("blob not at its sharded path: %v", err)
			} else if info.Size() != int64(n) {
				t.Errorf("stored file is %d bytes; want %d", info.Size(), n)
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
			if info.Size() != int64(n) {
				t.Errorf("Stat().Size() = %d; want %d", info.Size(), n)
			}
			got, err := io.ReadAll(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("content read back differs from content stored (%d vs %d bytes)", len(got), len(want))
			}
		})
	}
	if tmp := files(t, filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("files left in tmp/: %v", tmp)
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

func TestPutSizeLimit(t *testing.T) {
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := openStore(t)
			id, size, err := s.Put(context.Background(), bytes.NewReader(randomBytes(tt.size, 1)), tt.max)
			if !tt.tooLarge {
				if err != nil {
					t.Fatalf("Put(%d bytes, max %d): %v", tt.size, tt.max, err)
				}
				if size != int64(tt.size) {
					t.Errorf("size = %d; want %d", size, tt.size)
				}
				if got := files(t, dir); len(got) != 1 {
					t.Errorf("files in store = %v; want just the blob", got)
				}
				return
			}
			if !errors.Is(err, onboarding.ErrFileTooLarge) {
				t.Fatalf("Put(%d bytes, max %d) = %q, %d, %v; want an error wrapping ErrFileTooLarge", tt.size, tt.max, id, size, err)
			}
			if id != "" || size != 0 {
				t.Errorf("Put returned id %q, size %d with its error; want none", id, size)
			}
			if got := files(t, dir); len(got) != 0 {
				t.Errorf("files left after a refused Put: %v", got)
			}
		})
	}
}

func TestPutReadsAtMostMaxPlusOne(t *testing.T) {
	s, _ := openStore(t)
	const max = 100_000
	r := &countingReader{}
	_, _, err := s.Put(context.Background(), r, max)
	if !errors.Is(err, onboarding.ErrFileTooLarge) {
		t.Fatalf("Put(endless, %d) error = %v; want ErrFileTooLarge", max, err)
	}
	if r.n != max+1 {
		t.Errorf("Put read %d bytes from an endless reader; want max+1 = %d", r.n, max+1)
	}
}

func TestPutNegativeLimit(t *testing.T) {
	s, dir := openStore(t)
	if _, _, err := s.Put(context.Background(), strings.NewReader(""), -1); err == nil {
		t.Error("Put with max -1 succeeded; want an error")
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("files left: %v", got)
	}
}

// errReader fails after yielding some bytes.
type errReader struct{ n int }

var errBroken = errors.New("broken reader")

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errBroken
	}
	n := min(len(p), e.n)
	e.n -= n
	return n, nil
}

// cancellingReader yields endless data and cancels its context after the
// first read, as a client that goes away mid-upload.
type cancellingReader struct {
	cancel context.CancelFunc
	reads  int
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	c.reads++
	c.cancel()
	return len(p), nil
}

func TestPutFailuresLeaveNothing(t *testing.T) {
	tests := []struct {
		name    string
		put     func(s *blobs.Store) error
		wantErr error
	}{
		{
			name: "context cancelled before Put",
			put: func(s *blobs.Store) error {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, _, err := s.Put(ctx, strings.NewReader("hello"), 100)
				return err
			},
			wantErr: context.Canceled,
		},
		{
			name: "context cancelled during the copy",
			put: func(s *blobs.Store) error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				r := &cancellingReader{cancel: cancel}
				_, _, err := s.Put(ctx, r, 1<<30)
				if r.reads != 1 {
					return fmt.Errorf("reader read %d times after cancellation; want 1", r.reads)
				}
				return err
			},
			wantErr: context.Canceled,
		},
		{
			name: "context past its deadline",
			put: func(s *blobs.Store) error {
				ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				defer cancel()
				_, _, err := s.Put(ctx, strings.NewReader("hello"), 100)
				return err
			},
			wantErr: context.DeadlineExceeded,
		},
		{
			name: "reader error",
			put: func(s *blobs.Store) error {
				_, _, err := s.Put(context.Background(), &errReader{n: 70_000}, 1<<20)
				return err
			},
			wantErr: errBroken,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := openStore(t)
			if err := tt.put(s); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Put error = %v; want %v", err, tt.wantErr)
			}
			if got := files(t, dir); len(got) != 0 {
				t.Errorf("files left after a failed Put: %v", got)
			}
		})
	}
}

func TestInvalidIDsAreNotFound(t *testing.T) {
	s, dir := openStore(t)
	id, _, err := s.Put(context.Background(), strings.NewReader("secret"), 100)
	if err != nil {
		t.Fatal(err)
	}
	// Targets that a traversing id could reach, if it reached the file system.
	outside := filepath.Join(filepath.Dir(dir), "x")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", "x"), []byte("temp"), 0o600); err != nil {
		t.Fatal(err)
	}
	shard := id[0:2] + "/" + id[2:4]
	ids := []string{
		"",
		".",
		"..",
		"../x",
		"..\\x",
		"tmp/x",
		outside,
		"/etc/passwd",
		shard + "/" + id,
		shard,
		id[0:2],
		strings.ToUpper(id),
		upperFirstLetter(id),
		strings.ReplaceAll(id, "-", ""),
		"{" + id + "}",
		"urn:uuid:" + id,
		id + "\n",
		" " + id,
		id + "/",
		id[:35],
		id + "0",
		"../" + id,
		"00000000-0000-0000-0000-00000000000g",
	}
	for _, bad := range ids {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			if blobs.ValidID(bad) {
				t.Errorf("ValidID(%q) = true; want false", bad)
			}
			f, err := s.Open(bad)
			if err == nil {
				f.Close()
				t.Fatalf("Open(%q) succeeded; want not found", bad)
			}
			if !errors.Is(err, onboarding.ErrNotFound) {
				t.Errorf("Open(%q) error = %v; want one wrapping ErrNotFound", bad, err)
			}
			if err := s.Delete(bad); err != nil {
				t.Errorf("Delete(%q) = %v; want nil (an invalid id is a missing blob)", bad, err)
			}
		})
	}
	// Nothing was deleted through an invalid id.
	if got := string(readBlob(t, s, id)); got != "secret" {
		t.Errorf("blob content = %q after deletes of invalid ids; want %q", got, "secret")
	}
	for _, p := range []string{outside, filepath.Join(dir, "tmp", "x")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// upperFirstLetter upper-cases the first of id's hex letters.
func upperFirstLetter(id string) string {
	i := strings.IndexAny(id, "abcdef")
	if i < 0 { // all 31 random digits decimal: practically impossible
		return "X" + id[1:]
	}
	return id[:i] + strings.ToUpper(id[i:i+1]) + id[i+1:]
}

func TestOpenMissing(t *testing.T) {
	s, dir := openStore(t)
	id := uuid.NewString()
	if _, err := s.Open(id); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Open(missing %q) error = %v; want ErrNotFound", id, err)
	}
	// A directory where a blob would be is not a blob.
	if err := os.MkdirAll(filepath.Join(dir, id[0:2], id[2:4], id), 0o700); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Open(id); !errors.Is(err, onboarding.ErrNotFound) {
		if f != nil {
			f.Close()
		}
		t.Errorf("Open(directory %q) error = %v; want ErrNotFound", id, err)
	}
}

func TestDelete(t *testing.T) {
	s, dir := openStore(t)
	ctx := context.Background()
	keep, _, err := s.Put(ctx, strings.NewReader("keep"), 100)
	if err != nil {
		t.Fatal(err)
	}
	gone, _, err := s.Put(ctx, strings.NewReader("gone"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(gone); err != nil {
		t.Fatalf("Delete(%q): %v", gone, err)
	}
	if _, err := s.Open(gone); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Open(deleted) error = %v; want ErrNotFound", err)
	}
	if err := s.Delete(gone); err != nil {
		t.Errorf("second Delete(%q) = %v; want nil", gone, err)
	}
	if err := s.Delete(uuid.NewString()); err != nil {
		t.Errorf("Delete(never stored) = %v; want nil", err)
	}
	want := []string{keep[0:2] + "/" + keep[2:4] + "/" + keep}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("files after Delete (-want +got):\n%s", diff)
	}
}

func TestConcurrentPuts(t *testing.T) {
	s, dir := openStore(t)
	const workers, each = 8, 16
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
	seen := map[string]bool{}
	for _, rs := range results {
		for _, r := range rs {
			if seen[r.id] {
				t.Errorf("id %s returned twice", r.id)
			}
			seen[r.id] = true
			if !bytes.Equal(readBlob(t, s, r.id), r.content) {
				t.Errorf("blob %s: content differs", r.id)
			}
		}
	}
	if len(seen) != workers*each {
		t.Errorf("%d blobs stored; want %d", len(seen), workers*each)
	}
	if tmp := files(t, filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("files left in tmp/: %v", tmp)
	}
}

func TestReopen(t *testing.T) {
	s, dir := openStore(t)
	want := randomBytes(5000, 7)
	id, _, err := s.Put(context.Background(), bytes.NewReader(want), 10_000)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := blobs.Open(dir)
	if err != nil {
		t.Fatalf("reopening %s: %v", dir, err)
	}
	if !bytes.Equal(readBlob(t, s2, id), want) {
		t.Error("blob read through the reopened store differs")
	}
}

func TestOpenRemovesStaleTemps(t *testing.T) {
	_, dir := openStore(t)
	tmp := filepath.Join(dir, "tmp")
	now := time.Now()
	ages := map[string]time.Duration{
		"put-stale":   2 * time.Hour,
		"put-old":     61 * time.Minute,
		"put-recent":  59 * time.Minute,
		"put-running": 0,
	}
	for name, age := range ages {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := blobs.Open(dir); err != nil {
		t.Fatal(err)
	}
	want := []string{"put-recent", "put-running"}
	if diff := cmp.Diff(want, files(t, tmp)); diff != "" {
		t.Errorf("tmp/ after Open (-want +got):\n%s", diff)
	}
}

func BenchmarkPut(b *testing.B) {
	s, _ := openStore(b)
	content := randomBytes(1<<20, 1)
	r := bytes.NewReader(content)
	ctx := context.Background()
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(content)
		id, _, err := s.Put(ctx, r, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Delete(id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// validIDReference is the definition of a valid id: uuid.Parse accepts it
// and String spells it back unchanged.
func validIDReference(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

func TestValidID(t *testing.T) {
	id := uuid.NewString()
	for _, s := range []string{
		id, "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
		strings.ToUpper(id), "", "x", id[:35], id + "a", strings.ReplaceAll(id, "-", ""),
		"{" + id + "}", "urn:uuid:" + id, "0000000000000-0000-0000-000000000000",
		"00000000-0000-0000-0000-00000000000g", "00000000_0000-0000-0000-000000000000",
		"../00000000-0000-0000-0000-000000000", "00000000-0000-0000-0000-0000000000/0",
	} {
		if got, want := blobs.ValidID(s), validIDReference(s); got != want {
			t.Errorf("ValidID(%q) = %v; want %v", s, got, want)
		}
	}
}

func FuzzValidID(f *testing.F) {
	f.Add(uuid.NewString())
	f.Add(strings.ToUpper(uuid.NewString()))
	f.Add("../x")
	f.Add("urn:uuid:" + uuid.NewString())
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := blobs.ValidID(s), validIDReference(s); got != want {
			t.Errorf("ValidID(%q) = %v; reference says %v", s, got, want)
		}
	})
}
