package backup

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"onboard/onboarding"
)

// spoolPrefix starts the name of the temporary file that holds a backup's
// records, in the data directory, while its manifest is made.
const spoolPrefix = ".backup-records-"

// Maker makes backup archives of an open data directory: in the server's
// process, through the admin socket, while the server runs; in the CLI's
// when no server holds the directory. Both run Backup.
type Maker struct {
	store   Records
	files   Files // the Service's blob store
	dataDir string
	// spoolDir is where the records are spooled: the data directory, or
	// the system's temporary directory for a shared backend.
	spoolDir string
	// readSecrets reads the generated secrets, name → content: the data
	// directory's secrets/, or the shared backend's (NewShared).
	readSecrets func(ctx context.Context) (map[string][]byte, error)
	version     string // onboard's version, recorded in the manifest
	log         *slog.Logger

	mu sync.Mutex // one backup at a time, so that a spool found at the start is stale
}

// Files is the blob store a Maker copies files from: the Service's,
// guarded (blobs.Guard) so that a backup can hold deletions off.
type Files interface {
	// Open opens blob id; a missing one is an error wrapping
	// onboarding.ErrNotFound.
	Open(id string) (onboarding.BlobFile, error)
	// Hold holds deletions off until release is called, which carries
	// out those asked for meanwhile.
	Hold() (release func() error)
}

// New returns the Maker of the data directory dataDir, whose records are in
// store and whose files are behind files (the Service's guarded blob
// store); version is the onboard version the manifests record.
func New(store Records, files Files, dataDir, version string, log *slog.Logger) *Maker {
	b := &Maker{store: store, files: files, dataDir: dataDir, spoolDir: dataDir, version: version, log: log}
	b.readSecrets = b.dirSecrets
	return b
}

// SecretSource is a shared backend's store of generated secrets.
type SecretSource interface {
	// Secrets returns every generated secret, name → value: the same
	// bytes as the file secrets/NAME of a data directory holds.
	Secrets(ctx context.Context) (map[string][]byte, error)
}

// NewShared returns the Maker of a shared backend (PostgreSQL records,
// files in a bucket or a local blob store): its records in store, its
// files behind files, its generated secrets in secrets. It spools in the
// system's temporary directory, as the data directory may not exist.
func NewShared(store Records, files Files, secrets SecretSource, version string, log *slog.Logger) *Maker {
	return &Maker{store: store, files: files, spoolDir: os.TempDir(), readSecrets: secrets.Secrets, version: version, log: log}
}

// Backup writes an archive (archive.go) of the data directory to w:
// a snapshot of the records at one read timestamp, every blob those
// records refer to, and the generated secrets, while writes go on.
//
// Consistency: blobs are immutable, and a blob is written before the
// record that refers to it commits, so every blob the snapshot refers to
// exists when the snapshot is taken. One can vanish afterwards only by
// deletion (a replaced or removed upload, deleted once the record that
// dropped it has committed), so the Guard holds deletions off from before
// the snapshot until every blob is copied. It costs nothing while no
// backup runs; during one, the Service goes on as before and only the
// removal of files no record refers to any more waits (if the process
// dies meanwhile, those files stay as orphans, as after a failed delete).
// The alternatives are worse: stopping writes for the whole copy, or
// finding a blob gone and having to start over.
//
// The manifest comes first in the archive but holds the records' checksum
// and every blob's, so the records are spooled to a temporary file in the
// data directory and the blobs are read twice: once for their checksums,
// once into the archive. Nothing reaches w before the archive starts, so
// an error before then leaves w untouched.
func (b *Maker) Backup(ctx context.Context, w io.Writer) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeStaleSpools()
	release := b.files.Hold()
	defer func() {
		if rerr := release(); rerr != nil {
			b.log.Warn("delete files whose deletion the backup held off", "err", rerr)
		}
	}()

	m := &Manifest{
		Format: archiveFormat, FormatVersion: archiveVersion, OnboardVersion: b.version,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond), MissingBlobs: []string{},
	}
	spool, err := os.CreateTemp(b.spoolDir, spoolPrefix+"*")
	if err != nil {
		return fmt.Errorf("spool records: %w", err)
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()
	records, blobIDs, err := b.snapshot(ctx, spool, m)
	if err != nil {
		return err
	}
	secrets, err := b.secrets(ctx, m)
	if err != nil {
		return err
	}
	if err := b.sumBlobs(ctx, blobIDs, m); err != nil {
		return err
	}

	aw, err := newArchiveWriter(w, m)
	if err != nil {
		return err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spool records: %w", err)
	}
	if err := aw.add(recordsName, records.Bytes, bufio.NewReaderSize(spool, 1<<20)); err != nil {
		return err
	}
	for _, f := range m.Files[1:] {
		if err := ctx.Err(); err != nil {
			return err
		}
		if content, ok := secrets[f.Path]; ok {
			err = aw.add(f.Path, f.Bytes, content)
		} else {
			err = b.addBlob(aw, f)
		}
		if err != nil {
			return err
		}
	}
	return aw.close()
}

// snapshot writes the records' snapshot to spool, as records.ndjson, and
// lists it in m; it returns the blobs the records refer to, sorted.
func (b *Maker) snapshot(ctx context.Context, spool *os.File, m *Manifest) (File, []string, error) {
	h := sha256.New()
	counter := &countingWriter{}
	rw := newRecordsWriter(io.MultiWriter(spool, h, counter))
	err := b.store.Dump(ctx, rw.write)
	if err == nil {
		err = rw.flush()
	}
	if err != nil {
		return File{}, nil, fmt.Errorf("back up records: %w", err)
	}
	f := File{Path: recordsName, Bytes: counter.n, SHA256: fmt.Sprintf("%x", h.Sum(nil))}
	m.Files = append(m.Files, f)
	m.Counts.Records, m.Counts.Kinds, m.Counts.RecordBytes = rw.records(), rw.kinds, f.Bytes
	return f, slices.Sorted(maps.Keys(rw.blobs)), nil
}

// secrets reads the generated secrets (small) and lists them in m, in
// name order; a secret whose name could not be restored is left out.
func (b *Maker) secrets(ctx context.Context, m *Manifest) (map[string]io.Reader, error) {
	all, err := b.readSecrets(ctx)
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	out := map[string]io.Reader{}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		p := path.Join("secrets", name)
		if fileKind(archiveVersion, p) != "secret" {
			continue
		}
		f, err := fileSum(p, bytes.NewReader(all[name]), sha256.New(), nil)
		if err != nil {
			return nil, err
		}
		out[p] = bytes.NewReader(all[name])
		m.Files = append(m.Files, f)
		m.Counts.Secrets++
	}
	return out, nil
}

// dirSecrets reads the data directory's secrets/: its regular files.
func (b *Maker) dirSecrets(context.Context) (map[string][]byte, error) {
	dir := filepath.Join(b.dataDir, "secrets")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = content
	}
	return out, nil
}

// sumBlobs lists every blob in m with its checksum, or among the missing
// ones when the data directory has lost it already.
func (b *Maker) sumBlobs(ctx context.Context, ids []string, m *Manifest) error {
	h := sha256.New()
	buf := make([]byte, 256<<10)
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := b.files.Open(id)
		if errors.Is(err, onboarding.ErrNotFound) {
			m.MissingBlobs = append(m.MissingBlobs, id)
			b.log.Warn("backup: a file the records refer to is missing", "blob_id", id)
			continue
		}
		if err != nil {
			return err
		}
		sum, err := fileSum(blobPath(id), f, h, buf)
		f.Close()
		if err != nil {
			return fmt.Errorf("read blob %s: %w", id, err)
		}
		m.Files = append(m.Files, sum)
		m.Counts.Blobs++
		m.Counts.BlobBytes += sum.Bytes
	}
	return nil
}

// addBlob copies the blob at f.Path into the archive.
func (b *Maker) addBlob(aw *archiveWriter, f File) error {
	file, err := b.files.Open(path.Base(f.Path))
	if err != nil {
		return fmt.Errorf("copy blob: %w", err)
	}
	defer file.Close()
	return aw.add(f.Path, f.Bytes, file)
}

// removeStaleSpools removes the spools of backups that a crash
// interrupted: b.mu is held, and only the process holding the data
// directory makes backups, so no spool present now is in use.
func (b *Maker) removeStaleSpools() {
	if b.dataDir == "" {
		return // a shared backend's, in the temporary directory other processes share
	}
	entries, _ := os.ReadDir(b.dataDir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), spoolPrefix) {
			continue
		}
		p := filepath.Join(b.dataDir, e.Name())
		if err := os.Remove(p); err != nil {
			b.log.Warn("remove the spool of an interrupted backup", "path", p, "err", err)
		}
	}
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
