//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// writeUnnamed fails outside Linux, so that WriteFileNoSync writes through
// a renamed temporary file (writeRenamed).
func writeUnnamed(string, []byte, os.FileMode) error {
	return errors.New("atomicfile: no O_TMPFILE on this system")
}
