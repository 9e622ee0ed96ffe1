package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// outTarget is where a command's --out goes (apps export, backup): a
// regular file, new or replaced whole (a temporary file beside it, renamed
// over it once complete), or a stream written in place.
type outTarget struct {
	// path is the file to write: for a regular file, --out with its
	// symbolic links resolved, so that a link to a file keeps pointing at
	// it, the file replaced; for a stream, --out as given.
	path string
	// stream is set for what is not a regular file or a directory: a
	// character device (/dev/stdout, /dev/null, a terminal), a named pipe.
	// Renaming a file over one would delete the device or the pipe (as
	// root, `--out /dev/full` deleted the device node); it is opened and
	// written instead, and a failed write fails the command.
	stream bool
}

// resolveOut says how to write --out path; a directory, or a link to
// nothing, is an error.
func resolveOut(path string) (outTarget, error) {
	info, err := os.Stat(path) // through links, as opening it would go
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return outTarget{}, fmt.Errorf("%s is a symbolic link to nothing", path)
		}
		return outTarget{path: path}, nil // a new file; a missing directory fails its create
	case err != nil:
		return outTarget{}, err
	case info.IsDir():
		return outTarget{}, fmt.Errorf("%s is a directory", path)
	case !info.Mode().IsRegular():
		// Opened by its own name: /dev/stdout on a pipe is a link that
		// only the kernel follows (to "pipe:[…]" in /proc).
		return outTarget{path: path, stream: true}, nil
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return outTarget{}, err
	}
	return outTarget{path: resolved}, nil
}

// openStream opens a stream target for writing, as it is: no create, no
// truncation, no change of mode.
func (t outTarget) openStream() (*os.File, error) {
	return os.OpenFile(t.path, os.O_WRONLY, 0)
}
