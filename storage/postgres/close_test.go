package postgres

import (
	"context"
	"errors"
	"testing"
)

// TestPingAfterClose: a closed store says so, and a second Close is no
// error.
func TestPingAfterClose(t *testing.T) {
	s, _ := openTest(t, Options{})
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Ping(context.Background()); !errors.Is(err, errClosed) || err.Error() != "the store is closed" {
		t.Errorf("Ping after Close = %v", err)
	}
}
