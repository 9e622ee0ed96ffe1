package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"onboard/backup"
	"onboard/config"
	"onboard/outfile"
)

// BackupCmd writes a backup archive of the data directory.
type BackupCmd struct {
	Out string `help:"Archive to write (a gzip-compressed tar); replaced atomically when it exists." required:"" placeholder:"FILE"`
}

// Run makes the archive, through the running server's admin socket or
// from the store opened directly, checks it as it arrives (every entry
// against the manifest's checksums, as restore will) and only then puts it
// at --out. A summary goes to stderr. It first removes the partial
// archives that backups killed midway left beside --out.
func (c *BackupCmd) Run(e *env) error {
	outfile.ReportStale(e.stderr, c.Out, outfile.KindBackup)
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		var m *backup.Manifest
		err := outfile.WriteAtomically(c.Out, outfile.KindBackup, func(w io.Writer) error {
			var err error
			m, err = backup.Checked(ctx, a, w)
			return err
		})
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		fmt.Fprintf(e.stderr, "Backup written to %s: %d records (%s), %d files (%s), %d secrets.\n",
			c.Out, m.Counts.Records, byteSize(m.Counts.RecordBytes), m.Counts.Blobs, byteSize(m.Counts.BlobBytes), m.Counts.Secrets)
		if len(m.MissingBlobs) > 0 {
			fmt.Fprintf(e.stderr, "Warning: the data directory had already lost %d of the files the records refer to: %s.\n",
				len(m.MissingBlobs), strings.Join(m.MissingBlobs, ", "))
		}
		return nil
	})
}

// byteSize renders n bytes for people: "512 B", "3.4 MiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// backupMaker returns the Maker of the stores st: the data directory's on
// the embedded store, the database's and the blob store's on PostgreSQL.
func backupMaker(cfg config.Config, st *stores, log *slog.Logger) *backup.Maker {
	if st.badger != nil {
		return backup.New(st.badger, st.files.guard, cfg.DataDir, version(), log)
	}
	return backup.NewShared(st.pg, st.files.guard, st.pg, version(), log)
}
