package storetest

import (
	"context"
	"testing"

	"onboard/storage"
	"onboard/storage/postgres"
)

// RawKV is a bare table of keys and values on a test store's backend: the
// ceiling a benchmark of the API compares its operations with, a point read
// and a durable insert with nothing else.
type RawKV interface {
	// Get returns the value under key; ok is false when there is none.
	Get(key string) (value []byte, ok bool, err error)
	// Put stores value under key durably.
	Put(key string, value []byte) error
}

// OpenRawKV opens a raw table for t on the backend EnvStore names (on a
// database of its own with PostgreSQL), closed when t ends.
func OpenRawKV(t testing.TB) RawKV {
	t.Helper()
	d := NewData(t)
	switch d.Backend {
	case BackendPostgres:
		kv, err := postgres.OpenRawKV(context.Background(), d.Location, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		return kv
	default:
		kv, err := storage.OpenRawKV(d.Location, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		return kv
	}
}
