package blobs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// Walk calls fn with the id and modification time of every blob in the
// store (its files at dir/xx/yy/id; tmp/ and anything that is not a blob
// are skipped), in no particular order. An error from fn stops the walk
// and is returned. A blob removed while the walk runs may or may not be
// seen.
func (s *Store) Walk(fn func(id string, modified time.Time) error) error {
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		if d.IsDir() {
			if path == s.tmp {
				return filepath.SkipDir
			}
			return nil
		}
		id := d.Name()
		if !d.Type().IsRegular() || !ValidID(id) {
			return nil
		}
		if want, _ := s.path(id); want != path {
			return nil // a blob's name in the wrong shard is not one of ours
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(id, info.ModTime())
	})
	if err != nil {
		return fmt.Errorf("blobs: walk: %w", err)
	}
	return nil
}
