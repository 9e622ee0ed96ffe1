package atomicfile

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// unnamedWriter is writeUnnamed, for TestWriteFileNoSync; the test is
// skipped where the temporary directory's filesystem has no O_TMPFILE
// (Linux before 3.11, or a filesystem without it), which WriteFileNoSync
// falls back from.
func unnamedWriter(t *testing.T) func(string, []byte) error {
	fd, err := unix.Open(t.TempDir(), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		t.Skipf("no O_TMPFILE here (%v): WriteFileNoSync falls back to writeRenamed", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.Close(fd)
	return func(path string, data []byte) error { return writeUnnamed(path, data, 0o600) }
}
