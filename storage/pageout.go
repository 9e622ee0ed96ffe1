package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Badger reads its tables and value log, and writes its value log and its
// memtables' logs, through memory mappings of the database's files. Every
// page it touches stays mapped into the process, and counts in its
// resident set, until the kernel needs the memory: after a few minutes of
// writes that is most of serve's RSS (issue 15). PageOut hands those pages
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
var ErrPageOutUnsupported = errors.New("storage: this kernel cannot page out mapped files (MADV_PAGEOUT needs Linux 5.4)")

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
		_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, madvPageout)
		switch errno {
		case 0:
			advised += int64(m.end - m.start)
		case syscall.EINVAL:
			// Unknown advice (an old kernel), or a locked range.
			if advised == 0 {
				return 0, ErrPageOutUnsupported
			}
		case syscall.ENOMEM:
			// Unmapped since maps was read: Badger closed the file.
		default:
			return advised, fmt.Errorf("page out %s: %w", m.path, errno)
		}
	}
	return advised, nil
}

// Mapped is how many bytes of the database's files are resident in this
// process's mappings, from /proc/self/smaps (which walks every mapping's
// page table: about a millisecond for a few hundred mappings).
func (s *Store) Mapped() (int64, error) {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrPageOutUnsupported, err)
	}
	prefix := s.dir + string(filepath.Separator)
	var total int64
	in := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok {
			if in {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("/proc/self/smaps: Rss %q", rest)
				}
				total += kb << 10
			}
			continue
		}
		// A mapping's first line is /proc/self/maps's; its fields' lines
		// start with a name and a colon.
		if f := strings.SplitN(line, " ", 6); len(f) == 6 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(strings.TrimLeft(f[5], " "), prefix)
		}
	}
	return total, nil
}

// mapping is one line of /proc/self/maps: [start, end) maps path.
type mapping struct {
	start, end uintptr
	path       string
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
		// "start-end perms offset dev inode   path", the path padded to a
		// column and possibly holding spaces.
		f := strings.SplitN(sc.Text(), " ", 6)
		if len(f) < 6 {
			continue
		}
		path := strings.TrimLeft(f[5], " ")
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{start: uintptr(start), end: uintptr(end), path: path})
	}
	return out
}
