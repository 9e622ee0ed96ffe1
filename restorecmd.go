package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	"onboard/backup"
)

// RestoreCmd unpacks a backup archive into a new data directory.
type RestoreCmd struct {
	In string `help:"Archive to restore, as onboard backup wrote it." required:"" placeholder:"FILE"`
}

// Run restores --in into the data directory (--data-dir, or the
// configuration's data_dir), which must not exist or be empty. It needs no
// server: the target is a new directory. A summary goes to stderr. It
// first removes the directories that restores into the same data
// directory killed midway left beside it.
func (c *RestoreCmd) Run(e *env) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	if sharedBackend(cfg) {
		return errors.New("restore: onboard restore fills a new data directory of the embedded backend only: use a configuration with storage.backend = \"badger\" and blobs.backend = \"local\"")
	}
	removed, err := backup.RemoveInterrupted(cfg.DataDir)
	for _, p := range removed {
		fmt.Fprintf(e.stderr, "Removed a partial restore left by an interrupted run: %s\n", p)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "Warning: a partial restore left by an interrupted run could not be removed: %v\n", err)
	}
	in, err := os.Open(c.In)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	m, keys, err := backup.Restore(bufio.NewReaderSize(in, 1<<20), cfg.DataDir)
	var ae backup.ArchiveError
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("restore: %s is %w; nothing was restored", c.In, err)
	case err != nil:
		return fmt.Errorf("restore: %w; nothing was restored", err)
	}
	fmt.Fprintf(e.stderr, "Restored %s (taken %s by onboard %s) into %s: %d keys, %d files (%s), %d secrets.\n",
		c.In, m.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), m.OnboardVersion, cfg.DataDir, keys, m.Counts.Blobs, byteSize(m.Counts.BlobBytes), m.Counts.Secrets)
	return nil
}
