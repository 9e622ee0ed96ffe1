package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"onboard/backup"
	"onboard/config"
	"onboard/storage/postgres"
)

// RestoreCmd unpacks a backup archive into a new data directory, or into
// the PostgreSQL database the configuration names.
type RestoreCmd struct {
	In string `help:"Archive to restore, as onboard backup wrote it." required:"" placeholder:"FILE"`
}

// Run restores --in. On the embedded store it restores into the data
// directory (--data-dir, or the configuration's data_dir), which must not
// exist or be empty; it first removes the directories that restores into
// the same data directory killed midway left beside it. With
// storage.backend = "postgres" it restores into the database, which must
// hold no records (restoreShared). It needs no server. A summary goes to
// stderr.
func (c *RestoreCmd) Run(e *env) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	switch {
	case cfg.Storage.Backend == config.StoragePostgres:
		return c.restoreShared(e, cfg)
	case cfg.Blobs.Backend == config.BlobsS3:
		return errors.New(`restore: onboard restore fills a new data directory of the embedded store with its files, or a PostgreSQL database: ` +
			`with storage.backend = "badger", use blobs.backend = "local"`)
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
	m, n, err := backup.Restore(bufio.NewReaderSize(in, 1<<20), cfg.DataDir)
	var ae backup.ArchiveError
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("restore: %s is %w; nothing was restored", c.In, err)
	case err != nil:
		return fmt.Errorf("restore: %w; nothing was restored", err)
	}
	unit := "records"
	if m.FormatVersion == 1 {
		unit = "keys"
	}
	fmt.Fprintf(e.stderr, "Restored %s (taken %s by onboard %s) into %s: %d %s, %d files (%s), %d secrets.\n",
		c.In, m.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), m.OnboardVersion, cfg.DataDir, n, unit, m.Counts.Blobs, byteSize(m.Counts.BlobBytes), m.Counts.Secrets)
	return nil
}

// restoreShared restores --in into the PostgreSQL database of
// storage.postgres_url, which must hold no records: the records and the
// generated secrets into the database, the files into the blob store
// blobs.backend names (the data directory's blobs/, or the bucket). The
// archive is spooled in the data directory (created when missing) while
// it is checked, and nothing is written to the database or the blob store
// before it has passed (backup.RestoreTo).
func (c *RestoreCmd) restoreShared(e *env, cfg config.Config) error {
	ctx := context.Background()
	in, err := os.Open(c.In)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	pg, err := postgres.Open(ctx, cfg.Storage.PostgresURL, postgres.Options{MaxConnections: cfg.Storage.MaxConnections})
	if err != nil {
		return fmt.Errorf("restore: %w", postgresProblem(err))
	}
	defer pg.Close()
	var files backup.BlobWriter = backup.LocalFiles(filepath.Join(cfg.DataDir, "blobs"))
	if cfg.Blobs.Backend == config.BlobsS3 {
		b, err := openBucket(ctx, cfg)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		files = b
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("restore: create data directory: %w", err)
	}
	m, n, err := backup.RestoreTo(ctx, bufio.NewReaderSize(in, 1<<20), cfg.DataDir, backup.Target{Records: pg, Files: files, Secrets: pg})
	var ae backup.ArchiveError
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("restore: %s is %w; nothing was restored", c.In, err)
	case errors.Is(err, backup.ErrNotEmpty):
		return fmt.Errorf("restore: %w; nothing was restored", err)
	case err != nil:
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(e.stderr, "Restored %s (taken %s by onboard %s) into PostgreSQL: %d records, %d files (%s), %d secrets.\n",
		c.In, m.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), m.OnboardVersion, n, m.Counts.Blobs, byteSize(m.Counts.BlobBytes), m.Counts.Secrets)
	return nil
}
