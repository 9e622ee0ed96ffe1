package storage

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"
)

// residentUnder is how many bytes of the files under dir are resident in
// this process's mappings, from /proc/self/smaps.
func residentUnder(t *testing.T, dir string) int64 {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	var total int64
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case !strings.HasSuffix(f[0], ":"):
			in = len(f) >= 6 && strings.HasPrefix(strings.Join(f[5:], " "), prefix)
		case in && f[0] == "Rss:":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			total += kb << 10
		}
	}
	return total
}

// TestPageOut: after writing and reading 16 MiB of records, most of the
// value log is resident in the store's mappings; PageOut hands those pages
// back, and every record still reads whole. The store is opened through a
// symbolic link, as a data directory may be, which /proc/self/maps names
// by its real path.
func TestPageOut(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := openTestStore(t, link)
	defer s.Close()

	const n, size = 2048, 8 << 10 // values of 8 KiB go to the value log
	want := make([][]byte, n)
	for i := range want {
		want[i] = make([]byte, size)
		rand.Read(want[i])
	}
	for lo := 0; lo < n; lo += 256 {
		err := s.db.Update(func(txn *badger.Txn) error {
			for i := lo; i < lo+256; i++ {
				if err := txn.Set(fmt.Appendf(nil, "test/%04d", i), want[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() {
		t.Helper()
		err := s.db.View(func(txn *badger.Txn) error {
			for i := range want {
				item, err := txn.Get(fmt.Appendf(nil, "test/%04d", i))
				if err != nil {
					return err
				}
				got, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if string(got) != string(want[i]) {
					return fmt.Errorf("record %d changed", i)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	readAll()

	before := residentUnder(t, real)
	if before < n*size/2 {
		t.Fatalf("%d KiB of the database's files resident after writing and reading %d KiB: the test measures nothing", before>>10, n*size>>10)
	}
	if mapped, err := s.Mapped(); err != nil || mapped < before/2 || mapped > 2*before {
		t.Errorf("Mapped() = %d KiB, %v; /proc/self/smaps says %d KiB", mapped>>10, err, before>>10)
	}
	advised, err := s.PageOut()
	if errors.Is(err, ErrPageOutUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after := residentUnder(t, real)
	t.Logf("resident: %d KiB before, %d KiB after paging out %d KiB of mappings", before>>10, after>>10, advised>>10)
	if advised < before {
		t.Errorf("advised %d KiB of mappings, less than the %d KiB resident", advised>>10, before>>10)
	}
	if after > before/4 {
		t.Errorf("%d KiB still resident of %d", after>>10, before>>10)
	}
	if mapped, err := s.Mapped(); err != nil || mapped > before/4 {
		t.Errorf("Mapped() = %d KiB, %v after paging out; %d KiB before", mapped>>10, err, before>>10)
	}
	readAll()
}

// TestMappingsUnder: only the files under the directory count, by their
// path as /proc/self/maps prints it.
func TestMappingsUnder(t *testing.T) {
	maps := strings.Join([]string{
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/onboard",
		"7f0000000000-7f0004000000 rw-s 00000000 08:02 1001       /data/db/000001.vlog",
		"7f0004000000-7f0004200000 r--s 00000000 08:02 1002       /data/db/000003.sst (deleted)",
		"7f0004200000-7f0004400000 r--s 00000000 08:02 1003       /data/db2/000004.sst",
		"7f0004400000-7f0004600000 r--s 00000000 08:02 1004       /data/db/sub dir/a b.mem",
		"7f0004600000-7f0004800000 rw-p 00000000 00:00 0 ",
		"7f0004800000-7f0004a00000 rw-p 00000000 00:00 0                          [heap]",
		"zzzz-7f0004c00000 r--s 00000000 08:02 1005       /data/db/bad.sst",
		"7f0004c00000-7f0004b00000 r--s 00000000 08:02 1006       /data/db/backwards.sst",
		"truncated line",
		"",
	}, "\n")
	got := mappingsUnder([]byte(maps), "/data/db/")
	want := []mapping{
		{0x7f0000000000, 0x7f0004000000, "/data/db/000001.vlog"},
		{0x7f0004000000, 0x7f0004200000, "/data/db/000003.sst (deleted)"},
		{0x7f0004400000, 0x7f0004600000, "/data/db/sub dir/a b.mem"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mapping{})); diff != "" {
		t.Errorf("mappingsUnder (-want +got):\n%s", diff)
	}
}
