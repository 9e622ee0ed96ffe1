package postgres

import (
	"context"
	"errors"
	"testing"
	"time"
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

// TestSaveResponseAfterClose: a save asked of a closed store fails at
// once, saying so.
func TestSaveResponseAfterClose(t *testing.T) {
	s, _ := openTest(t, Options{})
	s.Close()
	done := make(chan error, 1)
	s.SaveResponse("c", "k", []byte(`{}`), time.Hour, func(err error) { done <- err })
	if err := <-done; !errors.Is(err, errClosed) {
		t.Errorf("SaveResponse after Close = %v, want errClosed", err)
	}
}
