package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes a new file at path (mode perm) with data, unnamed
// (open with O_TMPFILE in path's directory) and then linked at path: one
// change to the directory instead of writeRenamed's two (a create and a
// rename), and a crash before the link
// leaves nothing behind (an unnamed file that is not linked vanishes when
// it is closed). It fails when path exists, and where the file system has
// no O_TMPFILE or the system no /proc.
func writeUnnamed(path string, data []byte, perm os.FileMode) error {
	fd, err := unix.Open(filepath.Dir(path), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return &os.PathError{Op: "open O_TMPFILE", Path: filepath.Dir(path), Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	_, err = f.Write(data)
	if err == nil {
		// linkat with AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH; the
		// descriptor's /proc link needs nothing (open(2), O_TMPFILE).
		if lerr := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW); lerr != nil {
			err = &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: lerr}
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
