// Package outfile writes the files commands make with --out (apps export,
// backup): a regular file replaced whole once complete, or a device or a
// pipe written in place.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"onboard/atomicfile"
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

// WriteAtomically writes a new file at path (mode 0600) with write: to
// a temporary file beside it, tagged with kind (RemoveStale), synced and
// then renamed over path, so that
// path holds either its old content or the complete new one. When write
// fails, path is left as it was. A link is followed (the file it points to
// is replaced), and a device or a pipe is written in place (resolveOut).
func WriteAtomically(path, kind string, write func(io.Writer) error) (err error) {
	target, err := resolveOut(path)
	if err != nil {
		return err
	}
	if target.stream {
		return writeStream(target, write)
	}
	path = target.path
	f, err := atomicfile.CreateTagged(path, 0o600, kind+"-tmp")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// writeStream writes to a device or a pipe with write, as it is.
func writeStream(target outTarget, write func(io.Writer) error) error {
	f, err := target.openStream()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Kinds of --out file. A kind tags the temporary files of its writes
// (".NAME.KIND-tmp-NNN"), so that the next run of the same command, to
// whichever file in the same directory (a nightly backup names each
// archive by its date), finds what one killed midway left.
const (
	KindBackup = "backup"
	KindExport = "export"
)

// RemoveStale removes, in the directory of --out path, the partial files
// that runs of kind killed while writing left (their temporary files, which
// no running writer holds), and returns their paths. For a device or a
// pipe, which are written in place, there is nothing to remove; an --out
// that cannot be written is left for the write to report.
func RemoveStale(path, kind string) ([]string, error) {
	target, err := resolveOut(path)
	if err != nil || target.stream {
		return nil, nil
	}
	tagged := atomicfile.Tagged(kind + "-tmp")
	// Also atomicfile's plain temporary files of this very --out
	// (".NAME.tmp-NNN"): nothing but a write of it makes them.
	plain := atomicfile.Numbered("." + filepath.Base(target.path) + ".tmp-")
	removed, err := atomicfile.RemoveLeftovers(filepath.Dir(target.path), func(name string) bool {
		return tagged(name) || plain(name)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no directory: the write reports it
	}
	return removed, err
}

// ReportStale removes what RemoveStale removes and says so on w, one line
// a file ("Removed a partial backup left by an interrupted run: PATH"); a
// failure to remove is a warning.
func ReportStale(w io.Writer, path, kind string) {
	removed, err := RemoveStale(path, kind)
	for _, p := range removed {
		fmt.Fprintf(w, "Removed a partial %s left by an interrupted run: %s\n", kind, p)
	}
	if err != nil {
		fmt.Fprintf(w, "Warning: a partial %s left by an interrupted run could not be removed: %v\n", kind, err)
	}
}
