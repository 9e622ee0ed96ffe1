package storage

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestAppLocksSpreadOverTwoBytes: updates of two applications whose ids
// end in the same byte do not wait for each other (lockStripe uses the last
// two bytes): with the first's lock held, the second's update completes.
func TestAppLocksSpreadOverTwoBytes(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	a, b := fixture.App("acme", 1, onboarding.StatusSent), fixture.App("acme", 2, onboarding.StatusSent)
	ua, ub := uuid.MustParse(a.ID), uuid.MustParse(a.ID) // b: a copy of a's id
	ub[14]++                                             // same last byte, next lock
	b.ID = ub.String()
	for _, app := range []*onboarding.Application{a, b} {
		if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}
	if s.appLock(ua) == s.appLock(ub) {
		t.Fatalf("%s and %s share a lock", ua, ub)
	}

	held := s.appLock(ua)
	held.Lock()
	defer held.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := s.UpdateApplication(ctx, b.ID, func(app *onboarding.Application) (onboarding.Changes, error) {
			app.Status = onboarding.StatusInProgress
			return onboarding.Changes{}, nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the update of the second application waited for the first's lock")
	}
	if got := len(s.appLocks); got < 1024 {
		t.Errorf("%d application locks: 32 concurrent updates would often share one", got)
	}
}
