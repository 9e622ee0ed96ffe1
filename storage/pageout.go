package storage

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Badger reads its tables and value log, and writes its value log and its
// memtables' logs, through memory mappings of the database's files. Every
// page it touches stays mapped into the process, and counts in its
// resident set, until the kernel needs the memory: after a few minutes of
// writes that is most of serve's RSS. PageOut hands those pages
// back.

// madvPageout is MADV_PAGEOUT (Linux 5.4, include/uapi/asm-generic/
// mman-common.h), which the syscall package does not name: reclaim the
// range's pages now. Unlike MADV_DONTNEED it never discards data. A clean
// file page is dropped (the next read faults it back in from the file); a
// dirty one is unmapped and stays in the page cache until it is written
// back (a commit's msync writes it); an anonymous page goes to swap or
// stays. So a range that another goroutine unmaps, and the kernel reuses
// for something else, between reading /proc/self/maps and the advice, is
// at worst swapped out: nothing is lost.
const madvPageout = 21

// ErrPageOutUnsupported is returned by PageOut when the kernel has no
// MADV_PAGEOUT (Linux before 5.4) or no /proc/self/maps.
var ErrPageOutUnsupported = errors.New(
	"storage: this kernel cannot page out mapped files (MADV_PAGEOUT needs Linux 5.4)")

// PageOut asks the kernel to reclaim the pages of the database's files
// mapped into this process (tables, value log, memtable logs), and returns
// how many bytes of mappings it advised. Nothing is lost and nothing
// waits: later reads fault the pages they need back in from the files,
// which makes them slower until they have. It is safe to call at any time,
// concurrently with reads and writes.
func (s *Store) PageOut() (int64, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrPageOutUnsupported, err)
	}
	var advised int64
	for _, m := range mappingsUnder(maps, s.dir) {
		if err := pageOut(m); err != nil {
			return advised, err
		}
		advised += int64(m.end - m.start)
	}
	return advised, nil
}

// Trim keeps the database's files resident in this process's mappings
// under limit: when more are, it pages out whole files, least useful
// first, until at most keep bytes of them are left. It reports the bytes
// resident before and after (equal when it paged nothing out). The order
// (pageOutOrder) keeps the newest records, the ones most likely to be read
// next, for last.
func (s *Store) Trim(limit, keep int64) (before, after int64, err error) {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrPageOutUnsupported, err)
	}
	ms := residentUnder(smaps, s.dir)
	for _, m := range ms {
		before += m.resident
	}
	after = before
	for _, m := range trimPlan(ms, limit, keep) {
		if err := pageOut(m); err != nil {
			return before, after, err
		}
		after -= m.resident
	}
	return before, after, nil
}

// trimPlan is what Trim pages out of ms: nothing when their resident bytes
// are within limit, else the resident mappings in pageOutOrder until at
// most keep bytes are left.
func trimPlan(ms []mapping, limit, keep int64) []mapping {
	var left int64
	for _, m := range ms {
		left += m.resident
	}
	if left <= limit {
		return nil
	}
	ms = slices.Clone(ms)
	slices.SortStableFunc(ms, func(a, b mapping) int {
		return cmp.Compare(pageOutOrder(a.path), pageOutOrder(b.path))
	})
	var plan []mapping
	for _, m := range ms {
		if left <= keep {
			break
		}
		if m.resident > 0 {
			plan = append(plan, m)
			left -= m.resident
		}
	}
	return plan
}

// pageOut advises the kernel to reclaim m's pages.
func pageOut(m mapping) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, madvPageout)
	switch errno {
	case 0, syscall.ENOMEM:
		// ENOMEM: unmapped since it was listed (Badger closed the file).
		return nil
	case syscall.EINVAL:
		// Advice unknown to an old kernel (a locked range would be too,
		// but Badger locks none).
		return ErrPageOutUnsupported
	default:
		return fmt.Errorf("page out %s: %w", m.path, errno)
	}
}

// pageOutOrder ranks a database file for Trim, lowest first:
//   - files deleted since they were mapped: nothing will read them;
//   - memtable logs (.mem): written once, read only to recover after a
//     crash (the memtable itself is in the heap);
//   - tables (.sst), oldest first: reads go through Badger's block and
//     index caches, and the tables' pages are read again only on a miss;
//   - value-log files (.vlog), oldest first: every read of a record the
//     decoded-applications cache misses reads its page, and the newest
//     file holds the records just written, the likeliest to be read next;
//   - anything else last (Badger maps nothing else of size).
//
// Badger numbers each kind of file in the order it creates them (the
// rank is in the high bits, the number in the low 48).
func pageOutOrder(path string) int64 {
	if strings.HasSuffix(path, " (deleted)") {
		return 0
	}
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	n, err := strconv.ParseInt(strings.TrimSuffix(base, ext), 10, 64)
	if err != nil || n < 0 || n >= 1<<48 {
		n = 0
	}
	rank := int64(4)
	switch ext {
	case ".mem":
		rank = 1
	case ".sst":
		rank = 2
	case ".vlog":
		rank = 3
	}
	return rank<<48 | n
}

// mapping is one line of /proc/self/maps: [start, end) maps path; from
// /proc/self/smaps, resident of its bytes are in memory.
type mapping struct {
	start, end uintptr
	path       string
	resident   int64
}

// mappingsUnder returns the mappings in maps (the text of /proc/self/maps)
// of files under dir, which must be absolute and free of symbolic links,
// as the kernel names files there. A file deleted since it was mapped
// still counts ("path (deleted)").
func mappingsUnder(maps []byte, dir string) []mapping {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		if m, ok := parseMapping(sc.Text()); ok && strings.HasPrefix(m.path, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// residentUnder is mappingsUnder for the text of /proc/self/smaps, where
// each mapping's line is followed by lines of its figures, Rss among them.
func residentUnder(smaps []byte, dir string) []mapping {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	var out []mapping
	in := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok {
			if in {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err == nil {
					out[len(out)-1].resident = kb << 10
				}
			}
			continue
		}
		if m, ok := parseMapping(line); ok {
			in = strings.HasPrefix(m.path, prefix)
			if in {
				out = append(out, m)
			}
		}
	}
	return out
}

// parseMapping parses a line of /proc/self/maps: "start-end perms offset
// dev inode   path", the path padded to a column and possibly holding
// spaces. The figures' lines of /proc/self/smaps ("Rss:      4 kB") are
// not mappings.
func parseMapping(line string) (mapping, bool) {
	f := strings.SplitN(line, " ", 6)
	if len(f) < 6 {
		return mapping{}, false
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return mapping{}, false
	}
	return mapping{start: uintptr(start), end: uintptr(end), path: strings.TrimLeft(f[5], " ")}, true
}
