package backup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"onboard/atomicfile"
	"onboard/storage"
)

// Restore restores the archive read from r into the data directory
// target, which must not exist or be empty. Everything is written into a
// new directory beside target, and that directory is renamed to target
// only once every entry has matched its checksum and the records have
// loaded, so a failure leaves target as it was and nothing beside it. A
// restore killed midway leaves that directory, which RemoveInterrupted
// removes.
// It returns the manifest and the number of records restored (of keys,
// for an archive of format version 1).
func Restore(r io.Reader, target string) (*Manifest, int, error) {
	target = filepath.Clean(target)
	if err := checkEmptyTarget(target); err != nil {
		return nil, 0, err
	}
	tmp, lock, err := restoreDir(target)
	if err != nil {
		return nil, 0, err
	}
	defer lock.Close()
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	written := &syncList{dirs: map[string]bool{tmp: true}}
	m, err := ReadArchive(r, func(f File, content io.Reader) error {
		return written.write(tmp, f.Path, content)
	})
	if err != nil {
		return nil, 0, err
	}
	var keys int
	if m.FormatVersion == 1 {
		keys, err = loadRecords(tmp)
	} else {
		keys, err = loadDump(tmp, m.Counts)
	}
	if err != nil {
		return nil, 0, err
	}
	if err := written.syncAll(); err != nil {
		return nil, 0, err
	}
	// rename(2) itself, not os.Rename, which refuses to replace any
	// directory: an empty target is replaced atomically, one that has
	// filled up meanwhile is refused.
	if err := syscall.Rename(tmp, target); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return nil, 0, fmt.Errorf("data directory %s is no longer empty", target)
		}
		return nil, 0, &os.LinkError{Op: "rename", Old: tmp, New: target, Err: err}
	}
	done = true
	return m, keys, atomicfile.Sync(filepath.Dir(target))
}

// restorePrefix starts the name of the directory beside target that a
// restore writes into before renaming it to target.
func restorePrefix(target string) string { return "." + filepath.Base(target) + ".restore-" }

// restoreDir makes the directory a restore into target writes into, and
// holds its lock (atomicfile.Lock) until lock is closed, so that
// RemoveInterrupted run meanwhile leaves it alone.
func restoreDir(target string) (dir string, lock *os.File, err error) {
	for {
		dir, err := os.MkdirTemp(filepath.Dir(target), restorePrefix(target)+"*")
		if err != nil {
			return "", nil, err
		}
		f, err := os.Open(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by a RemoveInterrupted already
		}
		if err != nil {
			os.Remove(dir)
			return "", nil, err
		}
		ok, err := atomicfile.Lock(f)
		if ok {
			return dir, f, nil
		}
		f.Close()
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
}

// RemoveInterrupted removes the directories that restores into target
// killed midway left beside it (each holds up to a whole data directory,
// secrets included), sparing any that a running restore holds, and
// returns their paths.
func RemoveInterrupted(target string) ([]string, error) {
	target = filepath.Clean(target)
	removed, err := atomicfile.RemoveLeftovers(filepath.Dir(target), atomicfile.Numbered(restorePrefix(target)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no parent directory: Restore says so
	}
	return removed, err
}

// checkEmptyTarget refuses a target that exists and is not an empty
// directory, or whose parent directory does not exist.
func checkEmptyTarget(target string) error {
	info, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Dir(target)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the directory %s, in which to create the data directory, does not exist", filepath.Dir(target))
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", target)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("data directory %s is not empty; restore into a new or empty directory", target)
	}
	return nil
}

// syncList writes a restore's files and then makes them durable together:
// an fsync per file as it is written has a restore of many files wait on
// the disk once per file in a row, while many fsyncs in flight share the
// file system's journal commits. sync(2) is not used: it flushes every
// file system of the machine and reports no error.
type syncList struct {
	files []string
	dirs  map[string]bool // every directory a file was written in, and its parents up to the root
}

// write writes content to a new file (mode 0600, its directories 0700) at
// the slash-separated path p under root, and lists it for syncAll.
func (l *syncList) write(root, p string, content io.Reader) error {
	name := filepath.Join(root, filepath.FromSlash(p))
	for dir := filepath.Dir(name); dir != root && !l.dirs[dir]; dir = filepath.Dir(dir) {
		l.dirs[dir] = true
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if p != recordsName && p != badgerRecordsName { // loaded into badger/, then removed
		l.files = append(l.files, name)
	}
	if _, err := io.Copy(f, content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncAll fsyncs every file written, then every directory, 32 at a time.
func (l *syncList) syncAll() error {
	dirs := make([]string, 0, len(l.dirs))
	for d := range l.dirs {
		dirs = append(dirs, d)
	}
	for _, names := range [][]string{l.files, dirs} {
		next := make(chan string)
		errs := make(chan error, 32)
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for name := range next {
					if err := atomicfile.Sync(name); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		var failed error
	feed:
		for _, name := range names {
			select {
			case next <- name:
			case failed = <-errs:
				break feed
			}
		}
		close(next)
		wg.Wait()
		close(errs)
		if failed == nil {
			failed = <-errs
		}
		if failed != nil {
			return failed
		}
	}
	return nil
}

// loadRecords loads the restored records.badger of dir (an archive of
// format version 1) into dir/badger and
// removes the file, returning the number of keys loaded. Records that are
// not a store's (a forged archive whose checksums match) make the archive
// not a backup.
func loadRecords(dir string) (int, error) {
	p := filepath.Join(dir, badgerRecordsName)
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	keys, err := storage.Restore(filepath.Join(dir, "badger"), bufio.NewReaderSize(f, 1<<20))
	f.Close()
	var re storage.RecordsError
	if errors.As(err, &re) {
		return 0, notBackup("its records " + string(re))
	}
	if err != nil {
		return 0, err
	}
	return keys, os.Remove(p)
}

// loadDump loads the restored records.ndjson of dir into a new embedded
// store in dir/badger and removes the file, returning the number of
// records loaded; want is the manifest's count of them.
func loadDump(dir string, want Counts) (int, error) {
	p := filepath.Join(dir, recordsName)
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s, err := storage.Open(filepath.Join(dir, "badger"), storage.Options{})
	if err != nil {
		return 0, err
	}
	rr := newRecordsReader(f, want)
	err = lineError(s.Load(context.Background(), rr.next))
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return rr.n, os.Remove(p)
}
