// Package atomicfile writes files so that a crash, or a reader, finds
// either the old content or the new one, never part of it: the content goes
// to a temporary file in the same directory, is fsynced, and is renamed (or
// linked) into place, and then the directory is fsynced so that the new
// name is durable too.
//
// Errors are those of the os package's calls, unwrapped, so that callers
// word their messages as they need.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// tempPattern is the name pattern of the temporary file of path:
// ".NAME.TAG-*", in path's directory, starting with a dot so that listings
// of the directory that skip hidden files skip it. Create's tag is "tmp".
func tempPattern(path, tag string) string {
	return "." + filepath.Base(path) + "." + tag + "-*"
}

// WriteFile replaces the file at path (or creates it) with data, with mode
// perm, as the package says: durable when WriteFile returns. path's
// directory must exist.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// File is the new content of a file being written: a temporary file in the
// directory of its path, which Commit puts in place and Abort removes. A
// File is not safe for concurrent use.
type File struct {
	f    *os.File
	path string
	done bool
}

// Create starts writing new content for the file at path, with mode perm,
// in a temporary file in path's directory, which must exist. Nothing is at
// path before Commit. The temporary file is locked (Lock) until Commit or
// Abort, so that RemoveStale leaves it alone while it is written.
func Create(path string, perm os.FileMode) (*File, error) {
	return CreateTagged(path, perm, "tmp")
}

// CreateTagged is Create with the temporary file named ".NAME.TAG-NNN"
// (NNN digits) instead of ".NAME.tmp-NNN": a writer whose temporary files
// must be told from others' (RemoveLeftovers with Tagged) gives its own
// tag.
func CreateTagged(path string, perm os.FileMode, tag string) (*File, error) {
	f, err := createLocked(path, tag)
	if err != nil {
		return nil, err
	}
	if perm != 0o600 {
		if err := f.Chmod(perm); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
	}
	return &File{f: f, path: path}, nil
}

// createLocked creates a temporary file for path, mode 0600, and locks
// it, making another when a RemoveStale removed the first before the lock.
func createLocked(path, tag string) (*os.File, error) {
	for {
		f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path, tag))
		if err != nil {
			return nil, err
		}
		ok, err := Lock(f)
		if ok {
			return f, nil
		}
		f.Close()
		if err != nil {
			os.Remove(f.Name())
			return nil, err
		}
	}
}

// Write writes p to the new content.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Commit makes what was written the content of the file at path, replacing
// any file there: it fsyncs and closes the temporary file, renames it to
// path and fsyncs the directory. On an error the temporary file is removed
// and path keeps what it had (unless only the directory's fsync failed).
func (f *File) Commit() error { return f.commit(false, true) }

// CommitNew is Commit for a file that must not replace another: it links
// the temporary file at path and fails with an error wrapping fs.ErrExist,
// leaving the existing file alone, when something is at path already (a
// file that a concurrent writer created). On a file system without hard
// links it renames, as Commit does.
func (f *File) CommitNew() error { return f.commit(true, true) }

// commit puts the temporary file at path: linked when noReplace, else
// renamed; with sync, the file is fsynced before and the directory after.
// It is put in place before it is closed, while its lock still keeps
// RemoveStale away from it.
func (f *File) commit(noReplace, sync bool) error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	f.done = true
	tmp := f.f.Name()
	var err error
	if sync {
		err = f.f.Sync()
	}
	if err == nil {
		if noReplace {
			err = linkNew(tmp, f.path)
			os.Remove(tmp) // linked, or not placed at all
		} else {
			err = os.Rename(tmp, f.path)
		}
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	return Sync(filepath.Dir(f.path))
}

// linkNew links tmp at path, which must not exist; where the file system
// has no hard links it renames tmp to path instead.
func linkNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Rename(tmp, path)
}

// Abort drops what was written, leaving path as it is. It does nothing
// after Commit or a first Abort, so that a deferred Abort cleans up after
// whatever went wrong before Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// Sync fsyncs the file or directory at path. For a directory, that makes
// the entries created, renamed or removed in it durable.
func Sync(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
