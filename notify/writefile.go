package notify

import (
	"os"
	"path/filepath"
)

// writeFileRenamed writes data to path through a temporary file in the
// same directory: create (0600), write, close, rename. Readers never see
// part of a message; a crash between the create and the rename leaves the
// temporary file, whose name starts with a dot (the outbox's prune skips
// such names). writeFileAtomic uses it where the system offers nothing
// better.
func writeFileRenamed(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*.eml") // CreateTemp uses mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
