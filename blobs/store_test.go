package blobs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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

// TestPutLayout: a blob is a file at dir/ab/cd/id holding its content,
// and no put, kept or refused, leaves a file in tmp/. The behaviour seen
// through the store is blobstest's (TestConformance).
func TestPutLayout(t *testing.T) {
	s, dir := openStore(t)
	ctx := context.Background()
	for _, n := range []int{0, 100, 1<<20 + 7} {
		id, _, err := s.Put(ctx, bytes.NewReader(randomBytes(n, uint64(n))), int64(n))
		if err != nil {
			t.Fatalf("Put(%d bytes): %v", n, err)
		}
		p := filepath.Join(dir, id[0:2], id[2:4], id)
		if info, err := os.Stat(p); err != nil {
			t.Errorf("blob not at its sharded path: %v", err)
		} else if info.Size() != int64(n) || info.Mode().Perm() != 0o600 {
			t.Errorf("stored file is %d bytes, mode %v; want %d, 0600", info.Size(), info.Mode(), n)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, put := range []func() error{
		func() error { _, _, err := s.Put(ctx, bytes.NewReader(randomBytes(2000, 1)), 1000); return err },
		func() error { _, _, err := s.Put(cancelled, strings.NewReader("x"), 1000); return err },
		func() error { _, _, err := s.Put(ctx, &errReader{n: 70_000}, 1<<20); return err },
	} {
		if err := put(); err == nil {
			t.Fatal("a put that must fail succeeded")
		}
	}
	if tmp := files(t, filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("files left in tmp/: %v", tmp)
	}
}

// errReader fails after yielding some bytes.
type errReader struct{ n int }

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errors.New("broken reader")
	}
	n := min(len(p), e.n)
	e.n -= n
	return n, nil
}

// TestInvalidIDsReachNoFile: ids that would reach a file outside the
// shards, if they reached the file system, neither open nor remove it.
func TestInvalidIDsReachNoFile(t *testing.T) {
	s, dir := openStore(t)
	outside := filepath.Join(filepath.Dir(dir), "x")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", "x"), []byte("temp"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../x", "tmp/x", outside, filepath.Join("..", "x")} {
		if f, err := s.Open(bad); !errors.Is(err, onboarding.ErrNotFound) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%q) error = %v; want ErrNotFound", bad, err)
		}
		if err := s.Delete(bad); err != nil {
			t.Errorf("Delete(%q) = %v", bad, err)
		}
	}
	for _, p := range []string{outside, filepath.Join(dir, "tmp", "x")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestOpenDirectory: a directory where a blob would be is not a blob.
func TestOpenDirectory(t *testing.T) {
	s, dir := openStore(t)
	id := uuid.NewString()
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
