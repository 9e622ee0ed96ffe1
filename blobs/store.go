package blobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"onboard/atomicfile"
	"onboard/onboarding"
)

// staleTemp is the age after which Open removes a file left in tmp/: no
// upload takes that long, so such a file is a leftover from a crash.
const staleTemp = time.Hour

// Store keeps blobs in a directory. It implements onboarding.Blobs and is
// safe for concurrent use.
type Store struct {
	dir string // the store's root
	tmp string // dir/tmp, where uploads are written before they are renamed
	// durable holds the shard directories (both levels) whose entry in
	// their parent this process knows to be on disk: it fsynced the parent
	// after the directory existed. See makeShard.
	durable sync.Map
	// space, when set, admits each chunk of an upload (WithSpace).
	space Space
}

// Space is the guard of the filesystem's free space that the blob store
// asks before each chunk it writes: the database's, whose memory-mapped
// files must not find the disk full (storage.Store.AdmitWrite).
type Space interface {
	// AdmitWrite returns nil when n more bytes may be written now, and an
	// error matching onboarding.ErrInsufficientStorage otherwise.
	AdmitWrite(n int64) error
}

// WithSpace makes s ask space before each chunk it writes, and returns s.
// Call it before s is used.
func (s *Store) WithSpace(space Space) *Store {
	s.space = space
	return s
}

var _ onboarding.Blobs = (*Store)(nil)

// Open returns the store kept in dir, creating dir and dir/tmp (mode 0700)
// when they are missing. It also removes, best effort, temporary files older
// than an hour that an interrupted Put left behind.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("blobs: open: empty directory name")
	}
	s := &Store{dir: dir, tmp: filepath.Join(dir, "tmp")}
	if err := os.MkdirAll(s.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("blobs: open: %w", err)
	}
	s.removeStaleTemps(time.Now().Add(-staleTemp))
	return s, nil
}

// removeStaleTemps removes the files in tmp/ last modified before cutoff.
// Errors are ignored: a file that cannot be removed now is tried again on
// the next Open, and it never affects a stored blob.
func (s *Store) removeStaleTemps(cutoff time.Time) {
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		_ = os.Remove(filepath.Join(s.tmp, e.Name()))
	}
}

// Put stores what r yields as a new blob and returns its id and size. It
// reads at most max+1 bytes: content over max fails with an error wrapping
// onboarding.ErrFileTooLarge and leaves nothing behind. A cancelled ctx stops
// the copy between reads and fails with ctx's error. The blob is on disk
// (file and directory entry fsynced) when Put returns.
func (s *Store) Put(ctx context.Context, r io.Reader, max int64) (id string, size int64, err error) {
	u, err := uuid.NewRandom()
	if err != nil {
		return "", 0, fmt.Errorf("blobs: put: new id: %w", err)
	}
	id = u.String()
	size, shard, err := s.put(ctx, r, max, id)
	if err != nil {
		return "", 0, err
	}
	if err = atomicfile.Sync(shard); err != nil {
		return "", 0, fmt.Errorf("blobs: put: %w", err)
	}
	return id, size, nil
}

// put stores what r yields as blob id, as Put says, but leaves the fsync
// of the blob's directory entry to its caller: it writes the content to a
// temporary file, fsyncs it, and only then renames it into its shard, so
// that the blob is absent or complete also after a crash; it returns the
// shard, whose fsync makes the blob's name durable.
func (s *Store) put(ctx context.Context, r io.Reader, max int64, id string) (size int64, shard string, err error) {
	if max < 0 {
		return 0, "", fmt.Errorf("blobs: put: negative size limit %d", max)
	}
	if err := ctx.Err(); err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	f, err := os.CreateTemp(s.tmp, "put-*")
	if err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	tmpName := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // a second Close only reports os.ErrClosed
			_ = os.Remove(tmpName)
		}
		if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, onboarding.ErrInsufficientStorage) {
			err = fmt.Errorf("%w (%w)", onboarding.ErrInsufficientStorage, err)
		}
	}()

	limit := max
	if limit < math.MaxInt64 {
		limit++
	}
	var w io.Writer = f
	if s.space != nil {
		w = admittedWriter{w: f, space: s.space}
	}
	size, err = io.Copy(w, io.LimitReader(ctxReader{ctx: ctx, r: r}, limit))
	if err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	if size > max {
		return 0, "", fmt.Errorf("blobs: put: content over %d bytes: %w", max, onboarding.ErrFileTooLarge)
	}
	if err = f.Sync(); err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	if err = f.Close(); err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	shard, err = s.makeShard(id)
	if err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	if err = os.Rename(tmpName, filepath.Join(shard, id)); err != nil {
		return 0, "", fmt.Errorf("blobs: put: %w", err)
	}
	return size, shard, nil
}

// admittedWriter writes to w what space admits, chunk by chunk.
type admittedWriter struct {
	w     io.Writer
	space Space
}

func (a admittedWriter) Write(p []byte) (int, error) {
	if err := a.space.AdmitWrite(int64(len(p))); err != nil {
		return 0, err
	}
	return a.w.Write(p)
}

// makeShard creates the shard directories of id (dir/ab and dir/ab/cd) when
// they are missing and returns the shard's path. Each directory's entry in
// its parent is made durable (the parent fsynced) before the first blob of
// this process goes in, whoever created it: a writer that finds a
// directory another has just created cannot tell whether its creator has
// fsynced the parent yet, so it does so itself, once per directory and
// process (durable).
func (s *Store) makeShard(id string) (string, error) {
	parent := s.dir
	for _, name := range [2]string{id[0:2], id[2:4]} {
		d := filepath.Join(parent, name)
		if _, ok := s.durable.Load(d); !ok {
			if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
			if err := atomicfile.Sync(parent); err != nil {
				return "", err
			}
			s.durable.Store(d, struct{}{})
		}
		parent = d
	}
	return parent, nil
}

// Open returns blob id opened for reading; the caller closes it and learns
// the size from its Stat. A missing blob, or an id that is not a canonical
// lower-case UUID, fails with an error wrapping onboarding.ErrNotFound.
func (s *Store) Open(id string) (onboarding.BlobFile, error) {
	p, ok := s.path(id)
	if !ok {
		return nil, fmt.Errorf("blobs: open blob: invalid id: %w", onboarding.ErrNotFound)
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blobs: open blob %s: %w", id, onboarding.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blobs: open blob: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blobs: open blob: %w", err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("blobs: open blob %s: not a regular file: %w", id, onboarding.ErrNotFound)
	}
	return f, nil
}

// Delete removes blob id. A missing blob is not an error, and neither is an
// id that is not a canonical lower-case UUID: no such blob can exist.
func (s *Store) Delete(id string) error {
	p, ok := s.path(id)
	if !ok {
		return nil
	}
	err := os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blobs: delete %s: %w", id, err)
	}
	if err := atomicfile.Sync(filepath.Dir(p)); err != nil {
		return fmt.Errorf("blobs: delete %s: %w", id, err)
	}
	return nil
}

// path returns the file of blob id, or false when id is not a canonical
// lower-case UUID. It is the only place an outside id becomes a path.
func (s *Store) path(id string) (string, bool) {
	if !ValidID(id) {
		return "", false
	}
	return filepath.Join(s.dir, id[0:2], id[2:4], id), true
}

// ValidID reports whether id has the form of a blob id: a UUID in canonical
// lower-case form (8-4-4-4-12 hex digits), exactly the ids for which
// uuid.Parse succeeds and String gives id back. Only such ids are ever
// turned into paths.
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// ctxReader is a reader that fails with ctx's error, once ctx is done,
// before each read of r.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
