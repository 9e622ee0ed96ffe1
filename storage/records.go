package storage

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// listNewestFirst reads a page of records through a listing index: the
// entries under prefix end in a creation ULID and hold the record's UUID,
// and read reads the record with it. It walks the index backwards
// from before (the newest when zero), reading limit+1 entries at most, so
// its cost depends on the page size, not on how many records exist; more
// reports whether entries remain.
func listNewestFirst[T any](s *Store, prefix []byte, before ulid.ULID, limit int, read func(*badger.Txn, uuid.UUID) (*T, error)) (page []*T, more bool, err error) {
	o := scanOpts{reverse: true, keysOnly: true}
	if before != (ulid.ULID{}) {
		o.after = append(bytes.Clone(prefix), before[:]...)
	}
	page = make([]*T, 0, max(limit, 0))
	err = s.view(func(txn *badger.Txn) error {
		for item := range scanPrefix(txn, prefix, o) {
			if len(page) == limit {
				more = true
				return nil
			}
			var u uuid.UUID
			if err := item.Value(func(v []byte) error {
				if len(v) != len(u) {
					return fmt.Errorf("index entry %x: bad value", item.Key())
				}
				copy(u[:], v)
				return nil
			}); err != nil {
				return err
			}
			rec, err := read(txn, u)
			if err != nil {
				return fmt.Errorf("index entry %x → %s: %w", item.Key(), u, err)
			}
			page = append(page, rec)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return page, more, nil
}

// recordByIndex reads the record an index entry names: the entry at ix
// holds the record's UUID, and read reads the record with it. A
// missing entry is onboarding.ErrNotFound.
func recordByIndex[T any](s *Store, ix []byte, read func(*badger.Txn, uuid.UUID) (*T, error)) (*T, error) {
	var rec *T
	err := s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(ix)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return onboarding.ErrNotFound
		}
		if err != nil {
			return err
		}
		var id uuid.UUID
		if err := item.Value(func(b []byte) error {
			if len(b) != len(id) {
				return fmt.Errorf("index entry %x has %d bytes", ix, len(b))
			}
			copy(id[:], b)
			return nil
		}); err != nil {
			return err
		}
		rec, err = read(txn, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// rewriteIndexes deletes the index entries of oldIx that newIx lacks and
// writes those of newIx that oldIx lacks: a record's index entries after
// an update changed what they are made of.
func rewriteIndexes(txn *badger.Txn, oldIx, newIx map[string][]byte) error {
	for k := range oldIx {
		if _, keep := newIx[k]; !keep {
			if err := txn.Delete([]byte(k)); err != nil {
				return err
			}
		}
	}
	for k, v := range newIx {
		if _, had := oldIx[k]; !had {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordAt reads the record at key(id), decoding it each time.
func recordAt[T any](key func(uuid.UUID) []byte) func(*badger.Txn, uuid.UUID) (*T, error) {
	return func(txn *badger.Txn, id uuid.UUID) (*T, error) {
		rec := new(T)
		if err := getRecord(txn, key(id), rec); err != nil {
			return nil, err
		}
		return rec, nil
	}
}

// insertRecord writes a new record at key and its index entries ix, after
// checking that none of key, extra and the index keys exists yet: a
// duplicate id or link slug is errDuplicate, and nothing is written.
func insertRecord(txn *badger.Txn, what string, key, rec []byte, ix map[string][]byte, extra ...[]byte) error {
	if err := absent(txn, what, key, ix, extra...); err != nil {
		return err
	}
	return putRecord(txn, key, rec, ix)
}

// absent checks that none of key, extra and the index keys ix exists yet:
// a duplicate id or link slug is errDuplicate.
func absent(txn *badger.Txn, what string, key []byte, ix map[string][]byte, extra ...[]byte) error {
	for _, k := range append(append([][]byte{key}, extra...), keysOf(ix)...) {
		if _, err := txn.Get(k); err == nil {
			return fmt.Errorf("create %s: %w", what, errDuplicate)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
	}
	return nil
}

// putRecord writes rec at key and its index entries ix.
func putRecord(txn *badger.Txn, key, rec []byte, ix map[string][]byte) error {
	if err := txn.Set(key, rec); err != nil {
		return err
	}
	for k, v := range ix {
		if err := txn.Set([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}
