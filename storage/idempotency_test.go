package storage

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestOutcomeCommitsWithTheWork: each write that takes Changes stores the
// outcome of the request with an Idempotency-Key under its key, in its
// own transaction: it is there after the store is closed and reopened
// (nothing else was saved), it expires as a saved response does, a write
// that is refused leaves none, and the response saved afterwards replaces
// it.
func TestOutcomeCommitsWithTheWork(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "db")
	s := openTestStore(t, dir)
	outcome := func(key, id string) *onboarding.IdempotentOutcome {
		return &onboarding.IdempotentOutcome{ClientID: "client", Key: key, Fingerprint: []byte(key), CreatedAt: t0, ID: id}
	}
	app := fixture.App("acme", 1, onboarding.StatusSent)
	rfi := fixture.RFI("acme", 2, onboarding.RFIActive)
	writes := []struct {
		key   string
		id    string
		write func(o *onboarding.IdempotentOutcome) error
	}{
		{"create application", app.ID, func(o *onboarding.IdempotentOutcome) error {
			return s.CreateApplication(ctx, app, onboarding.Changes{Idempotent: o})
		}},
		{"update application", app.ID, func(o *onboarding.IdempotentOutcome) error {
			_, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				a.Status = onboarding.StatusInProgress
				return onboarding.Changes{Idempotent: o}, nil
			})
			return err
		}},
		{"create rfi request", rfi.ID, func(o *onboarding.IdempotentOutcome) error {
			return s.CreateRFIRequest(ctx, rfi, onboarding.Changes{Idempotent: o})
		}},
		{"update rfi request", rfi.ID, func(o *onboarding.IdempotentOutcome) error {
			_, err := s.UpdateRFIRequest(ctx, rfi.ID, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
				r.UpdatedAt = t0
				return onboarding.Changes{Idempotent: o}, nil
			})
			return err
		}},
	}
	for _, w := range writes {
		if err := w.write(outcome(w.key, w.id)); err != nil {
			t.Fatalf("%s: %v", w.key, err)
		}
	}
	// Refused: the application exists already; the change fails.
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Idempotent: outcome("refused create", app.ID)}); err == nil {
		t.Fatal("a second create of the same application succeeded")
	}
	_, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Idempotent: outcome("refused update", app.ID)}, errors.New("refused")
	})
	if err == nil {
		t.Fatal("a refused update succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTestStore(t, dir)
	defer s.Close()
	for _, w := range writes {
		rec, err := s.SavedResponse(ctx, "client", w.key)
		if err != nil {
			t.Fatalf("%s: %v", w.key, err)
		}
		var got onboarding.IdempotentOutcome
		if err := json.Unmarshal(rec, &got); err != nil {
			t.Fatal(err)
		}
		want := *outcome(w.key, w.id)
		want.ClientID, want.Key = "", "" // they name the record
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: outcome (-want +got):\n%s", w.key, diff)
		}
		var expires uint64
		if err := s.db.View(func(txn *badger.Txn) error {
			item, err := txn.Get(idempotencyKey("client", w.key))
			if err == nil {
				expires = item.ExpiresAt()
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if left := time.Until(time.Unix(int64(expires), 0)); left <= 0 || left > onboarding.IdempotencyTTL {
			t.Errorf("%s: expires in %v, want within %v", w.key, left, onboarding.IdempotencyTTL)
		}
	}
	for _, key := range []string{"refused create", "refused update"} {
		if _, err := s.SavedResponse(ctx, "client", key); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("%s: saved %v, want nothing", key, err)
		}
	}
	saved := make(chan error, 1)
	s.SaveResponse("client", "create application", json.RawMessage(`{"Status":201}`), onboarding.IdempotencyTTL, func(err error) { saved <- err })
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if rec, err := s.SavedResponse(ctx, "client", "create application"); err != nil || string(rec) != `{"Status":201}` {
		t.Errorf("after the response was saved: %s, %v; want the response", rec, err)
	}
}
