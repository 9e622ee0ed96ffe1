package storage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRawKV(t *testing.T) {
	dir := t.TempDir()
	kv, err := OpenRawKV(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := kv.Get("a"); ok || err != nil {
		t.Fatalf("Get of a missing key = %v, %v; want not found", ok, err)
	}
	if err := kv.Put("a", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	// The write survives a reopen.
	kv, err = OpenRawKV(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	got, ok, err := kv.Get("a")
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if diff := cmp.Diff(`{"n":1}`, string(got)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
}
