package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var idempotencyCases = []suiteCase{
	{"OutcomeCommitsWithTheWork", testOutcomeCommitsWithTheWork},
	{"SaveResponse", testSaveResponse},
}

// responses returns s as a ResponseStore, or skips t.
func responses(t *testing.T, s onboarding.Store) ResponseStore {
	t.Helper()
	r, ok := s.(ResponseStore)
	if !ok {
		t.Skip("the store keeps no idempotency records")
	}
	return r
}

// save saves record with SaveResponse and waits for its outcome.
func save(t *testing.T, r ResponseStore, clientID, key string, record json.RawMessage) {
	t.Helper()
	done := make(chan error, 1)
	r.SaveResponse(clientID, key, record, onboarding.IdempotencyTTL, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatalf("SaveResponse(%s): %v", key, err)
	}
}

// testOutcomeCommitsWithTheWork: each write that takes Changes stores the
// outcome of the request with an Idempotency-Key under its key, in its own
// transaction: it is there after a restart, a write that is refused
// leaves none, and the response saved afterwards replaces it.
func testOutcomeCommitsWithTheWork(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	responses(t, s)
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
	if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Idempotent: outcome("refused update", app.ID)}, errors.New("refused")
	}); err == nil {
		t.Fatal("a refused update succeeded")
	}
	s = reopen(t, open, s, nil)
	r := responses(t, s)
	for _, w := range writes {
		rec, err := r.SavedResponse(ctx, "client", w.key)
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
	}
	for _, key := range []string{"refused create", "refused update"} {
		_, err := r.SavedResponse(ctx, "client", key)
		wantNotFound(t, key, err)
	}
	save(t, r, "client", "create application", json.RawMessage(`{"Status":201}`))
	if rec, err := r.SavedResponse(ctx, "client", "create application"); err != nil || string(rec) != `{"Status":201}` {
		t.Errorf("after the response was saved: %s, %v; want the response", rec, err)
	}
}

// testSaveResponse: a saved record reads back by client and key, a later
// save replaces it, and keys of other clients are apart.
func testSaveResponse(t *testing.T, open Opener) {
	ctx := context.Background()
	r := responses(t, fresh(t, open))
	save(t, r, "c1", "k", json.RawMessage(`{"a":1}`))
	save(t, r, "c2", "k", json.RawMessage(`{"b":2}`))
	for _, tt := range []struct{ client, want string }{{"c1", `{"a":1}`}, {"c2", `{"b":2}`}} {
		if rec, err := r.SavedResponse(ctx, tt.client, "k"); err != nil || string(rec) != tt.want {
			t.Errorf("SavedResponse(%s) = %s, %v; want %s", tt.client, rec, err, tt.want)
		}
	}
	save(t, r, "c1", "k", json.RawMessage(`{"a":2}`))
	if rec, err := r.SavedResponse(ctx, "c1", "k"); err != nil || string(rec) != `{"a":2}` {
		t.Errorf("SavedResponse after a second save = %s, %v", rec, err)
	}
	_, err := r.SavedResponse(ctx, "c1", "other")
	wantNotFound(t, "SavedResponse(unknown key)", err)
	_, err = r.SavedResponse(ctx, "c3", "k")
	wantNotFound(t, "SavedResponse(unknown client)", err)
}
