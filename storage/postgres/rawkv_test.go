package postgres

import (
	"context"
	"testing"

	"onboard/storage/postgres/pgtest"
)

// TestRawKV: a value put is read back, a missing key is not found, a put
// replaces, and Close drops the table.
func TestRawKV(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	kv, err := OpenRawKV(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := kv.Get("a"); ok || err != nil {
		t.Fatalf("Get(missing) = ok %v, %v", ok, err)
	}
	for _, v := range []string{"one", "two"} {
		if err := kv.Put("a", []byte(v)); err != nil {
			t.Fatal(err)
		}
		got, ok, err := kv.Get("a")
		if !ok || err != nil || string(got) != v {
			t.Fatalf("Get = %q, %v, %v; want %q", got, ok, err, v)
		}
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'onboard_ceiling_kv'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("ceiling table left after Close: %d, %v", n, err)
	}
}
