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
	"github.com/google/go-cmp/cmp/cmpopts"
)

// smapsResident is how many bytes of the files under dir are resident in
// this process's mappings, from /proc/self/smaps.
func smapsResident(t *testing.T, dir string) int64 {
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

	before := smapsResident(t, real)
	if before < n*size/2 {
		t.Fatalf("%d KiB of the database's files resident after writing and reading %d KiB: the test measures nothing", before>>10, n*size>>10)
	}
	advised, err := s.PageOut()
	if errors.Is(err, ErrPageOutUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after := smapsResident(t, real)
	t.Logf("resident: %d KiB before, %d KiB after paging out %d KiB of mappings", before>>10, after>>10, advised>>10)
	if advised < before {
		t.Errorf("advised %d KiB of mappings, less than the %d KiB resident", advised>>10, before>>10)
	}
	if after > before/4 {
		t.Errorf("%d KiB still resident of %d", after>>10, before>>10)
	}
	readAll()

	// Trim pages nothing out within its limit, and over it as much as it
	// must to keep what it is told to.
	before = smapsResident(t, real)
	if b, a, err := s.Trim(4*before, 0); err != nil || a != b {
		t.Errorf("Trim within the limit: %d KiB before, %d KiB after, %v", b>>10, a>>10, err)
	}
	if got := smapsResident(t, real); got < before/2 {
		t.Errorf("Trim within the limit: %d KiB resident of %d", got>>10, before>>10)
	}
	b, a, err := s.Trim(1<<20, 1<<20)
	if err != nil || b < before/2 || a > 1<<20 {
		t.Errorf("Trim(1 MiB, 1 MiB) = %d KiB before, %d KiB after, %v; /proc/self/smaps said %d KiB before", b>>10, a>>10, err, before>>10)
	}
	if got := smapsResident(t, real); got > before/4 {
		t.Errorf("after Trim(1 MiB, 1 MiB): %d KiB resident of %d", got>>10, before>>10)
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
		{start: 0x7f0000000000, end: 0x7f0004000000, path: "/data/db/000001.vlog"},
		{start: 0x7f0004000000, end: 0x7f0004200000, path: "/data/db/000003.sst (deleted)"},
		{start: 0x7f0004400000, end: 0x7f0004600000, path: "/data/db/sub dir/a b.mem"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mapping{})); diff != "" {
		t.Errorf("mappingsUnder (-want +got):\n%s", diff)
	}
}

// TestResidentUnder: each mapping of a file under the directory comes with
// its Rss line; the figures' lines are not taken for mappings.
func TestResidentUnder(t *testing.T) {
	smaps := strings.Join([]string{
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/onboard",
		"Size:                328 kB",
		"Rss:                 300 kB",
		"7f0000000000-7f0004000000 rw-s 00000000 08:02 1001       /data/db/000001.vlog",
		"Size:              65536 kB",
		"KernelPageSize:        4 kB",
		"Rss:                1024 kB",
		"Pss:                1024 kB",
		"7f0004000000-7f0004200000 r--s 00000000 08:02 1002       /data/db/000003.sst",
		"Size:               2048 kB",
		"Rss:                   0 kB",
		"VmFlags: rd sh mr mw me ms sd",
		"",
	}, "\n")
	got := residentUnder([]byte(smaps), "/data/db")
	want := []mapping{
		{start: 0x7f0000000000, end: 0x7f0004000000, path: "/data/db/000001.vlog", resident: 1 << 20},
		{start: 0x7f0004000000, end: 0x7f0004200000, path: "/data/db/000003.sst"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mapping{})); diff != "" {
		t.Errorf("residentUnder (-want +got):\n%s", diff)
	}
}

// TestTrimPlan: nothing is paged out within the limit; over it, deleted
// files go first, then memtable logs, tables and the value log, each
// oldest first, until what is left is within keep.
func TestTrimPlan(t *testing.T) {
	ms := []mapping{
		{path: "/d/000010.vlog", resident: 40},
		{path: "/d/000009.vlog", resident: 30},
		{path: "/d/000120.sst", resident: 5},
		{path: "/d/000007.sst", resident: 5},
		{path: "/d/00003.mem", resident: 8},
		{path: "/d/00002.mem", resident: 0},
		{path: "/d/DISCARD", resident: 1},
		{path: "/d/000011.sst (deleted)", resident: 2},
	} // 91 resident
	paths := func(plan []mapping) []string {
		var out []string
		for _, m := range plan {
			out = append(out, m.path)
		}
		return out
	}
	tests := []struct {
		limit, keep int64
		want        []string
	}{
		{limit: 91, keep: 0, want: nil},
		{limit: 90, keep: 89, want: []string{"/d/000011.sst (deleted)"}},
		{limit: 90, keep: 75, want: []string{"/d/000011.sst (deleted)", "/d/00003.mem", "/d/000007.sst", "/d/000120.sst"}},
		{limit: 60, keep: 45, want: []string{"/d/000011.sst (deleted)", "/d/00003.mem", "/d/000007.sst", "/d/000120.sst", "/d/000009.vlog"}},
		{limit: 0, keep: 0, want: []string{"/d/000011.sst (deleted)", "/d/00003.mem", "/d/000007.sst", "/d/000120.sst", "/d/000009.vlog", "/d/000010.vlog", "/d/DISCARD"}},
	}
	for _, tt := range tests {
		got := paths(trimPlan(ms, tt.limit, tt.keep))
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("trimPlan(limit %d, keep %d) (-want +got):\n%s", tt.limit, tt.keep, diff)
		}
	}
}
