package storage

import (
	"context"
	"testing"
)

func TestPing(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("Ping of an open store = %v, want nil", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(context.Background()); err == nil || err.Error() != "the store is closed" {
		t.Errorf("Ping of a closed store = %v, want \"the store is closed\"", err)
	}
}
