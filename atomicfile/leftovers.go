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
	return RemoveLeftovers(filepath.Dir(path), tempPattern(path)[:len(tempPattern(path))-1])
}

// RemoveLeftovers removes, in dir, the files and directories named prefix
// followed by the digits that os.CreateTemp and os.MkdirTemp put for the
// "*" of the pattern prefix+"*", that this user owns and that no process
// holds with Lock: what writers that were killed left. Anything else (a
// symbolic link, a name with more after the digits, another user's file, a
// file being written) is left alone. It returns the paths it removed, and
// the first error met, having tried every candidate.
func RemoveLeftovers(dir, prefix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var first error
	for _, e := range entries {
		if !isLeftoverName(e.Name(), prefix) {
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

// isLeftoverName reports whether name is prefix followed by one or more
// decimal digits.
func isLeftoverName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
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
