// Package backup makes, checks and restores backup archives of a data
// directory: the archive format and its manifest, the snapshot of a
// running store, and the restore into a new directory.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"regexp"
	"strings"
	"time"

	"onboard/blobs"
	"onboard/storage/dump"
)

// The backup archive (onboard backup and restore, docs/operations.md) is a
// tar stream compressed with gzip (at BestSpeed: documents are mostly PDFs
// and images, which do not compress further, and the records compress well
// even so). The standard library writes and reads it, with no new
// dependency, and any system lists it (tar tzf).
//
// Its first entry is manifest.json (manifest); then come the entries the
// manifest's files list, in that order: the records, the data
// directory's generated secrets (secrets/NAME), and every blob the records
// refer to (blobs/ab/cd/ID, as the blob store lays them out). Each file's
// size and SHA-256 checksum are in the manifest, so a reader checks every
// byte against it, and nothing else may be in the archive.
//
// The records of format version 2 are records.ndjson: one JSON object per
// line, a dump.Line each (records.go), which either store backend loads,
// so a backup of one restores into the other. Those of version 1 were
// records.badger, the embedded store's snapshot in Badger's backup format,
// which only that backend restores; this onboard still reads them.
const (
	archiveFormat  = "onboard-backup"
	archiveVersion = 2
	manifestName   = "manifest.json"
	recordsName    = "records.ndjson"
	// badgerRecordsName is the records of a version 1 archive.
	badgerRecordsName = "records.badger"
	// maxManifest bounds the manifest a reader accepts: an entry is about
	// 150 bytes, so this admits well over a million blobs.
	maxManifest = 256 << 20
)

// recordsFile is the name of the records of an archive of format version
// v.
func recordsFile(v int) string {
	if v == 1 {
		return badgerRecordsName
	}
	return recordsName
}

// Manifest describes a backup archive.
type Manifest struct {
	Format         string    `json:"format"`         // archiveFormat
	FormatVersion  int       `json:"format_version"` // archiveVersion
	CreatedAt      time.Time `json:"created_at"`     // when the records' snapshot was taken
	OnboardVersion string    `json:"onboard_version"`
	Counts         Counts    `json:"counts"`
	// Files are the archive's entries after the manifest, in order.
	Files []File `json:"files"`
	// MissingBlobs are blobs the records refer to that the data directory
	// had already lost when the backup was taken: a restore answers for
	// them as the original did (file not found).
	MissingBlobs []string `json:"missing_blobs"`
}

// Counts sums up what an archive holds.
type Counts struct {
	Keys int `json:"keys,omitempty"` // version 1: live keys in records.badger
	// Records is the number of lines of records.ndjson (version 2), and
	// Kinds their number per kind.
	Records     int            `json:"records,omitempty"`
	Kinds       map[string]int `json:"kinds,omitempty"`
	RecordBytes int64          `json:"record_bytes"` // size of the records file
	Blobs       int            `json:"blobs"`
	BlobBytes   int64          `json:"blob_bytes"`
	Secrets     int            `json:"secrets"`
}

// File is one entry of an archive after the manifest.
type File struct {
	Path   string `json:"path"` // slash-separated, relative to the data directory
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // lower-case hex
}

// secretName is the form of a secret's file name: a plain name, so that no
// archive can name a path outside secrets/.
var secretName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// blobPath is where blob id is in an archive and in a data directory.
func blobPath(id string) string { return path.Join("blobs", id[0:2], id[2:4], id) }

// fileKind says what a path of an archive of format version v is:
// "records", "secret" or "blob"; "" for a path no archive may hold.
func fileKind(v int, p string) string {
	switch {
	case p == recordsFile(v):
		return "records"
	case strings.HasPrefix(p, "secrets/"):
		if secretName.MatchString(strings.TrimPrefix(p, "secrets/")) {
			return "secret"
		}
	case strings.HasPrefix(p, "blobs/"):
		id := path.Base(p)
		if blobs.ValidID(id) && p == blobPath(id) {
			return "blob"
		}
	}
	return ""
}

// archiveWriter writes an archive: the manifest first, then its files.
type archiveWriter struct {
	gz      *gzip.Writer
	tw      *tar.Writer
	modTime time.Time
}

// newArchiveWriter starts an archive on w with the manifest m.
func newArchiveWriter(w io.Writer, m *Manifest) (*archiveWriter, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	a := &archiveWriter{gz: gz, tw: tar.NewWriter(gz), modTime: m.CreatedAt}
	return a, a.add(manifestName, int64(len(b)), strings.NewReader(string(b)))
}

// add writes an entry of size bytes read from r; r must yield exactly that
// many.
func (a *archiveWriter) add(name string, size int64, r io.Reader) error {
	err := a.tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: a.modTime, Format: tar.FormatPAX,
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	n, err := io.Copy(a.tw, r)
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes read, %d expected", n, size)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// close ends the tar stream and the gzip stream.
func (a *archiveWriter) close() error {
	if err := a.tw.Close(); err != nil {
		return err
	}
	return a.gz.Close()
}

// ArchiveError is a reason an archive cannot be used. Its text completes
// a sentence whose subject is the archive: "backup.tar.gz is truncated".
type ArchiveError string

func (e ArchiveError) Error() string { return string(e) }

func damaged(format string, a ...any) error {
	return ArchiveError("damaged: " + fmt.Sprintf(format, a...))
}

func notBackup(why string) error {
	return ArchiveError("not an onboard backup (" + why + ")")
}

// sourceReader remembers the first error of the reader under the gzip
// stream, other than EOF, so that a failure to read the archive is told
// apart from damage found in what was read.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// readError explains err, met while reading the archive: the source's own
// failure as it is, an early end as truncation, anything else as damage.
func (s *sourceReader) readError(err error) error {
	switch {
	case s.err != nil:
		return s.err
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return ArchiveError("truncated")
	default:
		return damaged("%v", err)
	}
}

// ReadArchive reads an archive from r and checks it against its manifest
// as it goes: the manifest's format and version, then each entry's path,
// size and SHA-256 checksum in the manifest's order, that none is missing
// and none is extra, and the gzip stream's own checksum at its end. It
// passes the content of each entry to entry (nil: read and discard); a
// file entry wrote is known good only once ReadArchive has returned
// without error. Errors about the archive are archiveErrors.
func ReadArchive(r io.Reader, entry func(f File, content io.Reader) error) (*Manifest, error) {
	src := &sourceReader{r: r}
	gz, err := gzip.NewReader(src)
	if err != nil {
		if src.err != nil {
			return nil, src.err
		}
		if errors.Is(err, io.EOF) {
			return nil, ArchiveError("empty")
		}
		return nil, notBackup("not gzip-compressed")
	}
	tr := tar.NewReader(gz)
	m, err := readManifest(tr, src)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 256<<10)
	for _, f := range m.Files {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) && src.err == nil {
			return nil, damaged("%s is missing", f.Path)
		}
		if err != nil {
			return nil, src.readError(err)
		}
		if hdr.Name != f.Path {
			return nil, damaged("found %s where the manifest names %s", hdr.Name, f.Path)
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size != f.Bytes {
			return nil, damaged("%s has %d bytes; the manifest says %d", f.Path, hdr.Size, f.Bytes)
		}
		h := sha256.New()
		content := &entryReader{r: io.TeeReader(tr, h)}
		if entry != nil {
			if err := entry(f, content); err != nil && content.err == nil {
				return nil, err
			}
		}
		if content.err == nil {
			_, content.err = io.CopyBuffer(io.Discard, content, buf)
		}
		if content.err != nil {
			return nil, src.readError(content.err)
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
			return nil, damaged("%s does not match its SHA-256 checksum", f.Path)
		}
	}
	hdr, err := tr.Next()
	if err == nil {
		return nil, damaged("%s is not in the manifest", hdr.Name)
	}
	if !errors.Is(err, io.EOF) {
		return nil, src.readError(err)
	}
	// The rest is the tar stream's padding and the gzip trailer, which
	// holds the checksum of everything decompressed.
	if _, err := io.CopyBuffer(io.Discard, gz, buf); err != nil {
		return nil, src.readError(err)
	}
	return m, nil
}

// entryReader reads an entry's content, remembering the first read error,
// so that ReadArchive tells a failure to read the archive apart from one
// of entry's own.
type entryReader struct {
	r   io.Reader
	err error
}

func (e *entryReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// readManifest reads the archive's first entry and checks the manifest.
func readManifest(tr *tar.Reader, src *sourceReader) (*Manifest, error) {
	hdr, err := tr.Next()
	if errors.Is(err, io.EOF) && src.err == nil {
		return nil, notBackup("no manifest")
	}
	if err != nil {
		return nil, src.readError(err)
	}
	if hdr.Name != manifestName || hdr.Typeflag != tar.TypeReg {
		return nil, notBackup("its first entry is not " + manifestName)
	}
	if hdr.Size > maxManifest {
		return nil, damaged("its manifest has %d bytes, over the limit of %d", hdr.Size, maxManifest)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		return nil, src.readError(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, damaged("its manifest is not valid JSON: %v", err)
	}
	if m.Format != archiveFormat {
		return nil, notBackup(fmt.Sprintf("its manifest's format is %q", m.Format))
	}
	if m.FormatVersion < 1 || m.FormatVersion > archiveVersion {
		return nil, ArchiveError(fmt.Sprintf("a backup of format version %d; this onboard reads versions 1 to %d", m.FormatVersion, archiveVersion))
	}
	return &m, checkManifest(&m)
}

// checkManifest checks that the manifest lists the records first, then
// secrets and blobs under valid, distinct paths with plausible sizes and
// checksums, and that its counts add up.
func checkManifest(m *Manifest) error {
	records := recordsFile(m.FormatVersion)
	if len(m.Files) == 0 || m.Files[0].Path != records {
		return damaged("its manifest does not list %s first", records)
	}
	c := Counts{Keys: m.Counts.Keys, Records: m.Counts.Records}
	seen := make(map[string]bool, len(m.Files))
	for i, f := range m.Files {
		kind := fileKind(m.FormatVersion, f.Path)
		if kind == "" || kind == "records" && i > 0 || seen[f.Path] {
			return damaged("its manifest lists an invalid or repeated path %q", f.Path)
		}
		seen[f.Path] = true
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size || f.SHA256 != strings.ToLower(f.SHA256) || f.Bytes < 0 {
			return damaged("its manifest has an invalid size or checksum for %s", f.Path)
		}
		switch kind {
		case "records":
			c.RecordBytes = f.Bytes
		case "secret":
			c.Secrets++
		case "blob":
			c.Blobs++
			c.BlobBytes += f.Bytes
		}
	}
	sum := 0
	for kind, n := range m.Counts.Kinds {
		if !dump.Known(kind) || n < 0 {
			return damaged("its manifest counts %d records of the unknown kind %q", n, kind)
		}
		sum += n
	}
	if c.RecordBytes != m.Counts.RecordBytes || c.Secrets != m.Counts.Secrets || c.Blobs != m.Counts.Blobs ||
		c.BlobBytes != m.Counts.BlobBytes || sum != m.Counts.Records {
		return damaged("its manifest's counts do not match its files")
	}
	return nil
}

// fileSum returns the archive entry of r's content at p: its size and
// SHA-256 checksum.
func fileSum(p string, r io.Reader, h hash.Hash, buf []byte) (File, error) {
	h.Reset()
	n, err := io.CopyBuffer(h, r, buf)
	if err != nil {
		return File{}, err
	}
	return File{Path: p, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
