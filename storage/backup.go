package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
)

// Backup and restore of the records (onboard backup and restore, docs/operations.md).
//
// Backup writes Badger's own backup format, which DB.Load (and the badger
// command's restore) reads, from a Stream that iterates with one goroutine.
// Badger's Stream opens one read transaction per goroutine: only with one
// goroutine is the whole stream a single snapshot, at one read timestamp.
// (DB.Backup runs the default eight, each at its own timestamp, so under
// concurrent writes its output is no snapshot at all: TestBackupIsOneSnapshot
// fails with it.) Stream.Backup supplies the format; the stream's
// KeyToListWithThreadId, which takes precedence over the KeyToList that
// Stream.Backup sets, turns each key into its latest version only (Badger's
// would copy every older version not yet compacted away), reads each value
// once, and collects the blobs the application and RFI request records
// refer to, so that the blobs a backup copies are exactly those of its
// snapshot. Stream logs and skips a key whose KeyToList fails; the chooser
// keeps the first failure and fails the backup with it instead, so a
// backup is never silently incomplete.

// Snapshot describes the records one Backup wrote.
type Snapshot struct {
	Keys    int      // live keys written
	BlobIDs []string // the blobs the records refer to, sorted, each once
}

// Backup writes the latest version of every live key of one consistent
// snapshot of the database to w, in Badger's backup format, and returns
// the number of keys and the blobs the snapshot's records refer to. Writes
// go on meanwhile; none that commits after the snapshot is taken is in it.
func (s *Store) Backup(ctx context.Context, w io.Writer) (Snapshot, error) {
	s.rlockDB()
	defer s.dbMu.RUnlock()
	stream := s.db.NewStream()
	stream.LogPrefix = "onboard backup"
	stream.NumGo = 1 // one goroutine, one transaction: one snapshot
	c := snapshotChooser{ctx: ctx, blobs: map[string]bool{}}
	stream.ChooseKey = c.chooseKey
	stream.UseKeyToListWithThreadId = true
	stream.KeyToListWithThreadId = c.keyToList
	stream.FinishThread = func(int) (*pb.KVList, error) { return &pb.KVList{}, nil }
	if _, err := stream.Backup(w, 0); err != nil {
		return Snapshot{}, fmt.Errorf("back up records: %w", err)
	}
	if c.err != nil {
		return Snapshot{}, fmt.Errorf("back up records: %w", c.err)
	}
	ids := make([]string, 0, len(c.blobs))
	for id := range c.blobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return Snapshot{Keys: c.keys, BlobIDs: ids}, nil
}

// snapshotChooser picks and converts the keys of a backup's Stream. The
// Stream calls it from its one goroutine, so it needs no lock.
type snapshotChooser struct {
	ctx   context.Context
	keys  int
	blobs map[string]bool
	err   error // the first failure; every key after it is skipped
}

// chooseKey keeps every live key of the snapshot until a failure or the
// end of ctx.
func (c *snapshotChooser) chooseKey(item *badger.Item) bool {
	if c.err != nil || item.IsDeletedOrExpired() {
		return false
	}
	if c.keys%1024 == 0 {
		c.err = c.ctx.Err()
	}
	return c.err == nil
}

// keyToList returns the latest version of the key, at which the iterator
// stands, noting the blobs an application or RFI request record refers to.
func (c *snapshotChooser) keyToList(key []byte, it *badger.Iterator, _ int) (*pb.KVList, error) {
	item := it.Item()
	value, err := item.ValueCopy(nil)
	if err == nil {
		err = c.noteBlobs(key, value)
	}
	if err != nil {
		c.err = fmt.Errorf("key %q: %w", key, err)
		return nil, c.err
	}
	c.keys++
	return &pb.KVList{Kv: []*pb.KV{{
		Key: key, Value: value, UserMeta: []byte{item.UserMeta()},
		Version: item.Version(), ExpiresAt: item.ExpiresAt(),
	}}}, nil
}

// noteBlobs adds the blobs the record at key refers to.
func (c *snapshotChooser) noteBlobs(key, value []byte) error {
	return noteBlobRefs(c.blobs, key, value)
}

// Restore loads records that Backup wrote, read from r, into a new
// database in dir, which must not exist yet. Records that are not
// Backup's are refused with an error wrapping a RecordsError
// (checkedRecords). It then opens the database as Open does, which checks
// its schema version (refusing one newer than this onboard reads) and
// migrates an older one, and closes it. It returns the number of live keys
// the database holds.
func Restore(dir string, r io.Reader) (int, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, fmt.Errorf("restore records: %w", err)
	}
	db, err := badger.Open(badgerOptions(dir, slog.New(slog.DiscardHandler)))
	if err != nil {
		return 0, fmt.Errorf("restore records: %w", err)
	}
	err = db.Load(&checkedRecords{r: r}, 256)
	if err == nil {
		err = db.View(func(txn *badger.Txn) error {
			_, err := txn.Get([]byte(keySchema))
			if errors.Is(err, badger.ErrKeyNotFound) {
				return RecordsError("hold no schema version, so they are not onboard's")
			}
			return err
		})
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	var re RecordsError
	if errors.As(err, &re) {
		return 0, fmt.Errorf("restore records: they %w", err)
	}
	if err != nil {
		return 0, fmt.Errorf("restore records: %w", err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.view(func(txn *badger.Txn) error {
		for range scanPrefix(txn, nil, scanOpts{keysOnly: true}) {
			n++
		}
		return nil
	})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return n, err
}
