package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/dgraph-io/badger/v4"
)

// RawKV is a bare key-value database opened with the options of the
// Store (synchronous writes included), without records, indexes or
// transactions of several keys: what one point read or one durable insert
// costs on this machine, the ceiling onboard bench compares the API with.
type RawKV struct {
	db *badger.DB
}

// OpenRawKV opens (creating when needed) a raw database in dir, with the
// options every database of a data directory is opened with.
func OpenRawKV(dir string, log *slog.Logger) (*RawKV, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create database directory: %w", err)
	}
	db, err := badger.Open(badgerOptions(dir, log))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", dir, err)
	}
	return &RawKV{db: db}, nil
}

// Get returns the value stored under key; ok is false when there is none.
func (k *RawKV) Get(key string) (value []byte, ok bool, err error) {
	err = k.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		value, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return value, true, nil
}

// Put stores value under key in one transaction, whose commit is synced
// to disk before Put returns.
func (k *RawKV) Put(key string, value []byte) error {
	return translateConflict(k.db.Update(func(txn *badger.Txn) error {
		return txn.Set([]byte(key), value)
	}))
}

// Close closes the database.
func (k *RawKV) Close() error { return k.db.Close() }
