package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestResident: the resident memory of a file mapped and read counts
// under its directory, and not of another's.
func TestResident(t *testing.T) {
	dir := t.TempDir()
	const size = 1 << 20
	f, err := os.Create(filepath.Join(dir, "mapped"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Repeat([]byte{1}, size)); err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	sum := 0
	for i := 0; i < size; i += 4096 {
		sum += int(m[i])
	}
	if sum != size/4096 {
		t.Fatalf("read %d pages", sum)
	}
	r := resident(dir)
	if r.under < size || r.total < r.under || r.anonymous <= 0 || r.anonymous > r.total-r.under {
		t.Errorf("%+v; want the 1 MiB mapped under %s, and anonymous memory besides", r, dir)
	}
	if other := resident(t.TempDir()); other.under != 0 || other.total <= 0 {
		t.Errorf("%+v for an empty directory; want nothing under it", other)
	}
}
