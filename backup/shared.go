package backup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"onboard/atomicfile"
	"onboard/storage/dump"
)

// Restoring into a shared backend: records into PostgreSQL, files into
// its blob store, generated secrets into the database. Nothing is
// written there until the whole archive has been read and has matched
// its checksums (it is spooled to a scratch directory meanwhile) and
// every line of its records has the shape of its kind; then the files and
// secrets go first and the records last, so that records never refer to
// files that are not there yet. A load the database refuses (a row twice)
// leaves it without records, and the files put before it for the blob
// sweep to remove.

// Target is a shared backend a restore fills.
type Target struct {
	// Records loads the records; Load must find the store empty.
	Records interface {
		Loader
		// Empty reports whether the store holds no record, so that a
		// restore into one that does is refused before anything is
		// written.
		Empty(ctx context.Context) (bool, error)
	}
	// Files stores each file under its own id.
	Files BlobWriter
	// Secrets keeps each generated secret.
	Secrets SecretWriter
}

// BlobWriter stores files under the ids an archive gives them.
type BlobWriter interface {
	// PutBlob stores the size bytes r yields as blob id, replacing one
	// there already (a restore tried before).
	PutBlob(ctx context.Context, id string, r io.Reader, size int64) error
}

// SecretWriter keeps generated secrets.
type SecretWriter interface {
	// PutSecret keeps value as the secret name, replacing one there
	// already (the target created its own before the restore).
	PutSecret(ctx context.Context, name string, value []byte) error
}

// ErrNotEmpty refuses a restore into a store that holds records already.
var ErrNotEmpty = errors.New("the database already holds records; restore into an empty database")

// versionOneShared is the error of an archive of format version 1 whose
// restore into a shared backend was asked for.
const versionOneShared = "a backup of format version 1, which holds the embedded store's own files and restores into it only. " +
	"To move it to PostgreSQL, restore it into a new data directory with storage.backend = \"badger\", " +
	"run onboard backup there to make an archive of the current format, and restore that"

// RestoreTo restores the archive read from r into the shared backend t,
// spooling it in a new directory under scratch (removed at the end) while
// it is checked. It returns the manifest and the number of records
// restored. An archive of format version 1 is refused with an
// ArchiveError saying how to convert it, before anything is spooled; a
// store holding records already, with ErrNotEmpty, before anything is
// written.
func RestoreTo(ctx context.Context, r io.Reader, scratch string, t Target) (*Manifest, int, error) {
	empty, err := t.Records.Empty(ctx)
	if err != nil {
		return nil, 0, err
	}
	if !empty {
		return nil, 0, ErrNotEmpty
	}
	dir, err := os.MkdirTemp(scratch, ".onboard-restore-*")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	written := &syncList{dirs: map[string]bool{}}
	m, err := ReadArchive(r, func(f File, content io.Reader) error {
		if f.Path == badgerRecordsName {
			return ArchiveError(versionOneShared)
		}
		return written.write(dir, f.Path, content)
	})
	if err != nil {
		return nil, 0, err
	}
	if err := checkLines(filepath.Join(dir, recordsName), m.Counts); err != nil {
		return nil, 0, err
	}
	for _, f := range m.Files[1:] {
		if err := putFile(ctx, dir, f, t); err != nil {
			return nil, 0, err
		}
	}
	records, err := os.Open(filepath.Join(dir, recordsName))
	if err != nil {
		return nil, 0, err
	}
	defer records.Close()
	rr := newRecordsReader(records, m.Counts)
	if err := t.Records.Load(ctx, rr.next); errors.Is(err, dump.ErrNotEmpty) {
		return nil, 0, ErrNotEmpty // filled since the check
	} else if err != nil {
		return nil, 0, lineError(err)
	}
	return m, rr.n, nil
}

// putFile passes the spooled file f to the blob store or the secrets.
func putFile(ctx context.Context, dir string, f File, t Target) error {
	content, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return err
	}
	defer content.Close()
	name := path.Base(f.Path)
	if strings.HasPrefix(f.Path, "secrets/") {
		value, err := io.ReadAll(content)
		if err == nil {
			err = t.Secrets.PutSecret(ctx, name, value)
		}
		if err != nil {
			return fmt.Errorf("restore secret %s: %w", name, err)
		}
		return nil
	}
	if err := t.Files.PutBlob(ctx, name, bufio.NewReaderSize(content, 1<<20), f.Bytes); err != nil {
		return fmt.Errorf("restore file %s: %w", name, err)
	}
	return nil
}

// LocalFiles is the BlobWriter of the local blob store whose directory it
// names (the data directory's blobs/), laying files out as that store
// does (blobs/ab/cd/ID). Each file is written whole, then renamed into
// place, then made durable, so a failed restore leaves no partial file.
type LocalFiles string

// PutBlob writes blob id.
func (root LocalFiles) PutBlob(ctx context.Context, id string, r io.Reader, size int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name := filepath.Join(string(root), filepath.FromSlash(strings.TrimPrefix(blobPath(id), "blobs/")))
	for _, dir := range []string{string(root), filepath.Dir(filepath.Dir(name)), filepath.Dir(name)} {
		err := os.Mkdir(dir, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue // made durable by whoever made it
		}
		if err == nil {
			err = atomicfile.Sync(filepath.Dir(dir))
		}
		if err != nil {
			return err
		}
	}
	f, err := atomicfile.Create(name, 0o600)
	if err != nil {
		return err
	}
	defer f.Abort()
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes read, %d expected", n, size)
	}
	if err != nil {
		return err
	}
	return f.Commit()
}

// checkLines reads the records file at p through, checking every line's
// shape and their counts (recordsReader).
func checkLines(p string, want Counts) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	rr := newRecordsReader(f, want)
	for {
		if _, err := rr.next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
