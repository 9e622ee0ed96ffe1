package blobstest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"onboard/onboarding"
)

// testSeek: Seek from each origin moves where Read reads, also past the
// end, and refuses a negative position.
func testSeek(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	const size = 100_000
	content := randomBytes(size, 3)
	id := put(t, s, content)
	type seek struct {
		offset int64
		whence int
	}
	tests := []struct {
		name  string
		seeks []seek // each followed by a read of up to 10 bytes
		want  []int64
	}{
		{"start", []seek{{0, io.SeekStart}}, []int64{0}},
		{"middle", []seek{{5000, io.SeekStart}}, []int64{5000}},
		{"current after a read", []seek{{10, io.SeekStart}, {5, io.SeekCurrent}}, []int64{10, 25}},
		{"back", []seek{{50_000, io.SeekStart}, {-100, io.SeekCurrent}}, []int64{50_000, 49_910}},
		{"from the end", []seek{{-10, io.SeekEnd}}, []int64{size - 10}},
		{"near the end", []seek{{-3, io.SeekEnd}}, []int64{size - 3}},
		{"at the end", []seek{{0, io.SeekEnd}}, []int64{size}},
		{"past the end", []seek{{size + 50, io.SeekStart}}, []int64{size + 50}},
		{"end then start, as ServeContent does", []seek{{0, io.SeekEnd}, {0, io.SeekStart}}, []int64{size, 0}},
		{"forwards in small steps", []seek{{100, io.SeekStart}, {1000, io.SeekCurrent}, {30_000, io.SeekCurrent}}, []int64{100, 1110, 31_120}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := s.Open(id)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for i, sk := range tt.seeks {
				pos, err := f.Seek(sk.offset, sk.whence)
				if err != nil || pos != tt.want[i] {
					t.Fatalf("Seek(%d, %d) = %d, %v; want %d", sk.offset, sk.whence, pos, err, tt.want[i])
				}
				buf := make([]byte, 10)
				n, err := io.ReadFull(f, buf)
				want := content[min(pos, size):min(pos+10, size)]
				if !bytes.Equal(buf[:n], want) {
					t.Errorf("read at %d = %x; want %x", pos, buf[:n], want)
				}
				if len(want) < 10 && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("read at %d: %v; want the end of the blob", pos, err)
				}
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		f, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, sk := range []seek{{-1, io.SeekStart}, {-size - 1, io.SeekEnd}} {
			if _, err := f.Seek(sk.offset, sk.whence); err == nil {
				t.Errorf("Seek(%d, %d) succeeded; want an error", sk.offset, sk.whence)
			}
		}
	})
}

// testReadAt: ReadAt reads at any offset, short with io.EOF at the end,
// and leaves the offset of Read alone.
func testReadAt(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	const size = 100_000
	content := randomBytes(size, 4)
	id := put(t, s, content)
	f, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		off     int64
		n       int
		wantN   int
		wantEOF bool // io.EOF required; at exactly the end, nil or io.EOF
	}{
		{0, 10, 10, false},
		{50_000, 1000, 1000, false},
		{100, 10, 10, false}, // backwards
		{0, size, size, false},
		{size - 10, 10, 10, false},
		{size - 5, 10, 5, true},
		{size, 1, 0, true},
		{size + 1000, 1, 0, true},
		{40_000, 0, 0, false},
		{1000, 60_000, 60_000, false},
		{60_000, 60_000, size - 60_000, true},
	}
	for _, tt := range tests {
		buf := make([]byte, tt.n)
		n, err := f.ReadAt(buf, tt.off)
		if n != tt.wantN {
			t.Errorf("ReadAt(%d bytes, %d) = %d bytes; want %d", tt.n, tt.off, n, tt.wantN)
		}
		if tt.wantEOF && err != io.EOF || !tt.wantEOF && err != nil && !(err == io.EOF && tt.off+int64(n) == size) {
			t.Errorf("ReadAt(%d bytes, %d) error = %v; want EOF %v", tt.n, tt.off, err, tt.wantEOF)
		}
		if want := content[min(tt.off, size):min(tt.off+int64(n), size)]; !bytes.Equal(buf[:n], want) {
			t.Errorf("ReadAt(%d bytes, %d) content differs", tt.n, tt.off)
		}
	}
	if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at -1 succeeded; want an error")
	}
	// Read keeps its own offset, whatever ReadAt read.
	head := make([]byte, 10)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, content[:10]) {
		t.Fatalf("Read after ReadAt = %x, %v; want the first bytes", head, err)
	}
	if _, err := f.ReadAt(make([]byte, 100), 70_000); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, content[10:20]) {
		t.Errorf("Read after ReadAt = %x, %v; want bytes 10 to 20", head, err)
	}
}

// testConcurrentReaders: ReadAt from several goroutines on one open blob,
// and several opens of one blob read in order at once, each see the
// content.
func testConcurrentReaders(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	const size = 300_000
	content := randomBytes(size, 5)
	id := put(t, s, content)
	f, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 5 {
				off := int64((w*5+i)*9_973) % size
				buf := make([]byte, 4096)
				n, err := f.ReadAt(buf, off)
				if err != nil && err != io.EOF {
					t.Errorf("ReadAt(%d): %v", off, err)
					return
				}
				if !bytes.Equal(buf[:n], content[off:min(off+4096, size)]) {
					t.Errorf("ReadAt(%d): content differs", off)
				}
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			g, err := s.Open(id)
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			defer g.Close()
			got, err := io.ReadAll(g)
			if err != nil || !bytes.Equal(got, content) {
				t.Errorf("concurrent read: %d bytes, %v", len(got), err)
			}
		})
	}
	wg.Wait()
}

// testServeContentRanges serves a blob as downloads do (http.ServeContent
// on a freshly opened blob) with and without ranges.
func testServeContentRanges(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	const size = 200_000
	content := randomBytes(size, 6)
	id := put(t, s, content)
	tests := []struct {
		rng        string
		wantStatus int
		wantParts  [][2]int // byte ranges [from, to) of the answer's parts
	}{
		{"", http.StatusOK, [][2]int{{0, size}}},
		{"bytes=0-9", http.StatusPartialContent, [][2]int{{0, 10}}},
		{"bytes=150000-", http.StatusPartialContent, [][2]int{{150_000, size}}},
		{"bytes=-100", http.StatusPartialContent, [][2]int{{size - 100, size}}},
		{"bytes=100000-100999", http.StatusPartialContent, [][2]int{{100_000, 101_000}}},
		{"bytes=0-0,5000-5009,199990-", http.StatusPartialContent, [][2]int{{0, 1}, {5000, 5010}, {199_990, size}}},
		{"bytes=300000-", http.StatusRequestedRangeNotSatisfiable, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.rng), func(t *testing.T) {
			f, err := s.Open(id)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, "/files/"+id, nil)
			if tt.rng != "" {
				req.Header.Set("Range", tt.rng)
			}
			rec := httptest.NewRecorder()
			http.ServeContent(rec, req, "", info.ModTime(), f)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d; want %d", rec.Code, tt.wantStatus)
			}
			var parts [][]byte
			mediaType, params, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
			switch {
			case tt.wantParts == nil:
				return
			case mediaType == "multipart/byteranges":
				mr := multipart.NewReader(rec.Body, params["boundary"])
				for {
					p, err := mr.NextPart()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					b, err := io.ReadAll(p)
					if err != nil {
						t.Fatal(err)
					}
					parts = append(parts, b)
				}
			default:
				parts = [][]byte{rec.Body.Bytes()}
			}
			if len(parts) != len(tt.wantParts) {
				t.Fatalf("%d parts; want %d", len(parts), len(tt.wantParts))
			}
			for i, r := range tt.wantParts {
				if !bytes.Equal(parts[i], content[r[0]:r[1]]) {
					t.Errorf("part %d: %d bytes differ from bytes %d to %d", i, len(parts[i]), r[0], r[1])
				}
			}
		})
	}
}

// testOpenMissing: a blob never stored is not found.
func testOpenMissing(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	id := uuid.NewString()
	if f, err := s.Open(id); !errors.Is(err, onboarding.ErrNotFound) {
		if f != nil {
			f.Close()
		}
		t.Errorf("Open(missing %q) error = %v; want ErrNotFound", id, err)
	}
}

// testInvalidIDs: anything but a canonical lower-case UUID is a blob that
// does not exist: not found to Open, nothing to Delete, and no way to
// reach another blob.
func testInvalidIDs(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	id := put(t, s, []byte("secret"))
	shard := id[0:2] + "/" + id[2:4]
	ids := []string{
		"", ".", "..", "../x", "..\\x", "tmp/x", "/etc/passwd",
		shard + "/" + id, shard, id[0:2], "/" + id, "./" + id, "x/../" + id,
		strings.ToUpper(id), upperFirstLetter(id), strings.ReplaceAll(id, "-", ""),
		"{" + id + "}", "urn:uuid:" + id, id + "\n", " " + id, id + "/", id + "*",
		id[:35], id + "0", "../" + id, "00000000-0000-0000-0000-00000000000g",
		id[:35] + "?", id[:35] + "%",
	}
	for _, bad := range ids {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
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
	if got := string(read(t, s, id)); got != "secret" {
		t.Errorf("blob content = %q after deletes of invalid ids; want %q", got, "secret")
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

// testDelete: a deleted blob is gone and others stay; deleting it again,
// or one never stored, is not an error.
func testDelete(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	keep, gone := put(t, s, []byte("keep")), put(t, s, []byte("gone"))
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
	if got := string(read(t, s, keep)); got != "keep" {
		t.Errorf("kept blob = %q", got)
	}
	if ids, _ := walked(t, s); len(ids) != 1 || ids[0] != keep {
		t.Errorf("Walk after Delete = %v; want [%s]", ids, keep)
	}
}

// testWalk: Walk reports exactly the stored blobs, each once with its
// time, and no deleted one.
func testWalk(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	if ids, _ := walked(t, s); len(ids) != 0 {
		t.Fatalf("Walk of a new store = %v; want nothing", ids)
	}
	before := time.Now()
	var want []string
	for i := range 5 {
		want = append(want, put(t, s, randomBytes(100*i, uint64(i))))
	}
	after := time.Now()
	ids, times := walked(t, s)
	if !slices.Equal(sorted(want), ids) {
		t.Errorf("Walk = %v; want %v", ids, sorted(want))
	}
	for id, m := range times {
		modifiedNear(t, "blob "+id, m, before, after)
	}
	if err := s.Delete(want[1]); err != nil {
		t.Fatal(err)
	}
	ids, _ = walked(t, s)
	if w := sorted(append(append([]string{}, want[:1]...), want[2:]...)); !slices.Equal(w, ids) {
		t.Errorf("Walk after a Delete = %v; want %v", ids, w)
	}
}

// testWalkStops: an error from fn stops the walk and comes back from it.
func testWalkStops(t *testing.T, open func(t *testing.T) Blobs) {
	s := open(t)
	for i := range 3 {
		put(t, s, []byte{byte(i)})
	}
	stop := errors.New("stop")
	calls := 0
	err := s.Walk(func(string, time.Time) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Walk = %v after %d calls; want the error of fn after 1", err, calls)
	}
}
