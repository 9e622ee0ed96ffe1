package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"onboard/backup"
)

// BackupCmd writes a backup archive of the data directory.
type BackupCmd struct {
	Out string `help:"Archive to write (a gzip-compressed tar); replaced atomically when it exists." required:"" placeholder:"FILE"`
}

// Run makes the archive, through the running server's admin socket or
// from the store opened directly, checks it as it arrives (every entry
// against the manifest's checksums, as restore will) and only then puts it
// at --out. A summary goes to stderr.
func (c *BackupCmd) Run(e *env) error {
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		var m *backup.Manifest
		err := writeFileAtomically(c.Out, func(w io.Writer) error {
			var err error
			m, err = backup.Checked(ctx, a, w)
			return err
		})
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		fmt.Fprintf(e.stderr, "Backup written to %s: %d keys (%s of records), %d files (%s), %d secrets.\n",
			c.Out, m.Counts.Keys, byteSize(m.Counts.RecordBytes), m.Counts.Blobs, byteSize(m.Counts.BlobBytes), m.Counts.Secrets)
		if len(m.MissingBlobs) > 0 {
			fmt.Fprintf(e.stderr, "Warning: the data directory had already lost %d of the files the records refer to: %s.\n",
				len(m.MissingBlobs), strings.Join(m.MissingBlobs, ", "))
		}
		return nil
	})
}

// writeFileAtomically writes a new file at path (mode 0600) with write: to
// a temporary file beside it, synced and then renamed over path, so that
// path holds either its old content or the complete new one. When write
// fails, path is left as it was. A link is followed (the file it points to
// is replaced), and a device or a pipe is written in place (resolveOut).
func writeFileAtomically(path string, write func(io.Writer) error) (err error) {
	target, err := resolveOut(path)
	if err != nil {
		return err
	}
	if target.stream {
		return writeStream(target, write)
	}
	path = target.path
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
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

// syncDir fsyncs directory dir, making the entries created or removed in
// it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
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
