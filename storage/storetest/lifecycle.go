package storetest

import (
	"context"
	"testing"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var lifecycleCases = []suiteCase{
	{"PingAndClose", testPingAndClose},
}

// pingCloser is a store with a readiness check and a Close.
type pingCloser interface {
	Ping(ctx context.Context) error
	Close() error
}

// testPingAndClose: an open store answers Ping; once closed it answers
// that it is closed (the readiness check's message), and a second Close
// is no error.
func testPingAndClose(t *testing.T, open Opener) {
	s := fresh(t, open)
	pc, ok := s.(pingCloser)
	if !ok {
		t.Skip("the store has no Ping and Close")
	}
	fixture.StoredApp(t, s, "acme", 1, onboarding.StatusCreated)
	if err := pc.Ping(context.Background()); err != nil {
		t.Errorf("Ping of an open store = %v", err)
	}
	if err := pc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pc.Ping(context.Background()); err == nil || err.Error() != "the store is closed" {
		t.Errorf("Ping of a closed store = %v, want \"the store is closed\"", err)
	}
	if err := pc.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
