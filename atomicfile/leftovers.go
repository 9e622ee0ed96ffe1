package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A process killed while writing leaves its temporary file (or a restore
// its temporary directory) behind. Writers hold an exclusive flock on what
// they write into for as long as they write (Lock), and the kernel drops
// it when they die, so RemoveLeftovers can tell what a writer that is gone
// left from what one still running is writing: it removes only what it
// can lock.

// Lock takes the exclusive flock that marks f, a temporary file or
// directory that os.CreateTemp or os.MkdirTemp has just made, as in use,
// so that RemoveLeftovers leaves it alone; it lasts until f is closed or
// the process ends. It reports false when a RemoveLeftovers found f
// unlocked and removed it before the lock was taken: the caller closes f
// and makes another. On a file system without flock, nothing is locked
// and RemoveLeftovers, unable to lock either, removes nothing there.
func Lock(f *os.File) (bool, error) {
	if err := flock(f, syscall.LOCK_EX); err != nil {
		if noFlock(err) {
			return true, nil
		}
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	named, err := os.Lstat(f.Name())
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, named), nil
}

// RemoveStale removes the temporary files that writers of path (Create)
// killed mid-way left beside it, and returns their paths.
func RemoveStale(path string) ([]string, error) {
	return RemoveLeftovers(filepath.Dir(path), Numbered(strings.TrimSuffix(tempPattern(path, "tmp"), "*")))
}

// RemoveLeftovers removes the files and directories of dir whose names
// match, that this user owns and that no process holds with Lock: what
// writers that were killed left. Anything else (a symbolic link, another
// user's file, a file being written) is left alone. It returns the paths
// it removed, and the first error met, having tried every candidate.
func RemoveLeftovers(dir string, match func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var first error
	for _, e := range entries {
		if !match(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		ok, err := removeUnlocked(p)
		if ok {
			removed = append(removed, p)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return removed, first
}

// Numbered matches the names that os.CreateTemp and os.MkdirTemp give for
// the pattern prefix+"*": prefix, then one or more decimal digits.
func Numbered(prefix string) func(name string) bool {
	return func(name string) bool {
		rest, ok := strings.CutPrefix(name, prefix)
		return ok && digits(rest)
	}
}

// Tagged matches the names of CreateTagged's temporary files with tag,
// whatever file they were for: ".NAME.TAG-NNN", NAME not empty.
func Tagged(tag string) func(name string) bool {
	suffix := "." + tag + "-"
	return func(name string) bool {
		i := strings.LastIndex(name, suffix)
		return i > 1 && name[0] == '.' && digits(name[i+len(suffix):])
	}
}

// digits reports whether s is one or more decimal digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeUnlocked removes p, a regular file or a directory of this user,
// if it can take its lock; removed is false, with no error, when p is not
// such a thing or a writer holds it.
func removeUnlocked(p string) (removed bool, err error) {
	info, err := os.Lstat(p)
	if err != nil || !(info.Mode().IsRegular() || info.IsDir()) || !ownedByMe(info) {
		return false, nil
	}
	// O_NONBLOCK: should p have become a FIFO since, opening it must not
	// wait for a writer.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil || !os.SameFile(info, opened) {
		return false, nil
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil // held by its writer, or no flock here
	}
	if info.IsDir() {
		err = os.RemoveAll(p)
	} else {
		err = os.Remove(p)
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// ownedByMe reports whether this process's user owns the file of info.
func ownedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// flock applies how to f's lock, retrying when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// noFlock reports whether err says that the file system has no flock.
func noFlock(err error) bool {
	return errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOLCK)
}
