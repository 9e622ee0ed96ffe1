package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/server/web"
	"onboard/storage"
)

// newReplays returns replays over a real store and a clock the test moves.
func newReplays(t *testing.T) (*replays, *time.Time) {
	t.Helper()
	store, err := storage.Open(filepath.Join(t.TempDir(), "badger"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := testNow
	return &replays{store: store, now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler), inflight: map[string]*flight{}}, &now
}

// TestReplays drives begin as a retried request would: what it replays,
// refuses or saves.
func TestReplays(t *testing.T) {
	const token, other = "svc_client.secret", "svc_client.another-secret"
	fp, otherFP := []byte("fingerprint"), []byte("another request")
	first := []byte(`{"application_id":"a1"}`)
	tests := []struct {
		name    string
		status  int           // the first request's outcome; 0 saves nothing
		advance time.Duration // between the two requests
		key     string        // the retry's key
		token   string        // the retry's API key
		fp      []byte        // the retry's fingerprint
		wantErr error         // nil: a replay or a fresh run, as wantBody says
		// wantFail is an unexpected failure (500): the saved body cannot
		// be opened.
		wantFail bool
		// wantBody is the replayed body; nil means the retry runs afresh.
		wantBody []byte
	}{
		{name: "a saved 201 is replayed", status: 201, key: "k1", token: token, fp: fp, wantBody: first},
		{name: "the quoted form is the same key", status: 201, key: `"k1"`, token: token, fp: fp, wantBody: first},
		{name: "just before 24 hours", status: 201, advance: idempotencyTTL - time.Second, key: "k1", token: token, fp: fp, wantBody: first},
		{name: "after 24 hours the key is free", status: 201, advance: idempotencyTTL, key: "k1", token: token, fp: fp},
		{name: "another request with the key", status: 201, key: "k1", token: token, fp: otherFP, wantErr: errIdempotencyMismatch},
		{name: "a failed request saves nothing", status: 0, key: "k1", token: token, fp: fp},
		{name: "a 4xx saves nothing", status: 400, key: "k1", token: token, fp: fp},
		{name: "another API key's secret cannot open it", status: 201, key: "k1", token: other, fp: fp, wantFail: true},
		{name: "an invalid key", status: 201, key: "with space", token: token, fp: fp, wantErr: errIdempotencyKeyInvalid},
		{name: "an empty quoted key", status: 201, key: `""`, token: token, fp: fp, wantErr: errIdempotencyKeyInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, now := newReplays(t)
			ctx := context.Background()
			a, err := r.begin(ctx, "client", token, "k1", fp)
			if err != nil || a.saved != nil {
				t.Fatalf("first begin = %v, %v; want a fresh run", a.saved, err)
			}
			a.finish(tt.status, first)
			*now = now.Add(tt.advance)

			a, err = r.begin(ctx, "client", tt.token, tt.key, tt.fp)
			saved, finish := a.saved, a.finish
			switch {
			case tt.wantFail:
				if err == nil || web.FailureOf(err).Status != 500 {
					t.Fatalf("begin = %v, %v; want an unexpected failure", saved, err)
				}
				return
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("begin error = %v, want %v", err, tt.wantErr)
			case err != nil:
				return
			}
			if tt.wantBody == nil {
				if saved != nil || finish == nil {
					t.Fatalf("begin = replay %v; want a fresh run", saved)
				}
				finish(0, nil)
				return
			}
			if saved == nil {
				t.Fatal("begin ran afresh; want a replay")
			}
			if diff := cmp.Diff(string(tt.wantBody), string(saved.Body)); diff != "" || saved.Status != tt.status {
				t.Errorf("replayed %d (-want +got):\n%s", saved.Status, diff)
			}
		})
	}
}

// TestReplaysInFlight: while a request with a key runs, a retry is
// refused; once it finishes, the key is free again.
func TestReplaysInFlight(t *testing.T) {
	r, _ := newReplays(t)
	ctx := context.Background()
	first, err := r.begin(ctx, "client", "t", "k", []byte("fp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.begin(ctx, "client", "t", "k", []byte("fp")); !errors.Is(err, errIdempotencyInProgress) {
		t.Errorf("retry while running = %v, want %v", err, errIdempotencyInProgress)
	}
	if a, err := r.begin(ctx, "another client", "t", "k", []byte("fp")); err != nil {
		t.Errorf("the same key of another API key = %v, want its own run", err)
	} else {
		a.finish(0, nil)
	}
	first.finish(0, nil)
	if a, err := r.begin(ctx, "client", "t", "k", []byte("fp")); err != nil {
		t.Errorf("retry after the first finished = %v, want a fresh run", err)
	} else {
		a.finish(0, nil)
	}
}

// heldSaves is a ResponseStore whose saves reach the disk (the real store)
// but report done only once the test lets them.
type heldSaves struct {
	*storage.Store
	let chan struct{}
}

func (h heldSaves) SaveResponse(clientID, key string, record json.RawMessage, ttl time.Duration, done func(error)) {
	h.Store.SaveResponse(clientID, key, record, ttl, func(err error) {
		<-h.let
		done(err)
	})
}

// TestReplaysWhileSaving: the first request answers without waiting for
// its response to be saved. A retry that comes in meanwhile is not
// refused as still running: it waits for the save and replays it.
func TestReplaysWhileSaving(t *testing.T) {
	r, _ := newReplays(t)
	held := heldSaves{Store: r.store.(*storage.Store), let: make(chan struct{})}
	r.store = held
	ctx := context.Background()
	first, err := r.begin(ctx, "client", "svc_client.secret", "k", []byte("fp"))
	if err != nil {
		t.Fatal(err)
	}
	first.finish(201, []byte(`{"application_id":"a1"}`)) // returns before the save is done
	type result struct {
		saved *savedResponse
		err   error
	}
	retried := make(chan result, 1)
	go func() {
		a, err := r.begin(ctx, "client", "svc_client.secret", "k", []byte("fp"))
		if a.finish != nil {
			a.finish(0, nil)
		}
		retried <- result{a.saved, err}
	}()
	close(held.let)
	got := <-retried
	if got.err != nil || got.saved == nil || string(got.saved.Body) != `{"application_id":"a1"}` {
		t.Fatalf("retry during the save = %+v, %v; want the replay", got.saved, got.err)
	}
}

// TestReplaysWithoutStore: a server built without a ResponseStore fails
// such requests instead of crashing.
func TestReplaysWithoutStore(t *testing.T) {
	r := &replays{now: time.Now, log: slog.New(slog.DiscardHandler), inflight: map[string]*flight{}}
	if _, err := r.begin(context.Background(), "client", "t", "k", nil); !errors.Is(err, errNoResponseStore) {
		t.Errorf("begin without a store = %v, want %v", err, errNoResponseStore)
	}
}

// TestSavedResponseLayout: the record the server saves keeps the layout
// that the storage golden pins, so saved responses replay across an
// upgrade.
func TestSavedResponseLayout(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	b, err := json.Marshal(&savedResponse{Fingerprint: []byte{7}, Status: 201, Body: []byte{1, 2}, CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("..", "storage", "testdata", "idempotent_response.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(golden, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("saved response layout (-golden +server):\n%s", diff)
	}
}

// TestSavedOutcomeLayout: the outcome a request's transaction commits
// under its key (the storage golden pins its layout) reads back as an
// outcome, with the saved response's Fingerprint and CreatedAt.
func TestSavedOutcomeLayout(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "storage", "testdata", "idempotent_outcome.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	saved, outcome, err := decodeSaved(golden)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	if diff := cmp.Diff(&savedResponse{Fingerprint: []byte{7}, CreatedAt: at}, saved); diff != "" {
		t.Errorf("saved response of an outcome (-want +got):\n%s", diff)
	}
	want := &onboarding.IdempotentOutcome{Fingerprint: []byte{7}, CreatedAt: at, ID: "e6dacf7e-ad57-49c6-995a-093d1c6825e5", DecisionID: "d1",
		ApplicationStatus: onboarding.StatusSent, Mail: onboarding.MailFailed, SealedCode: []byte{1, 2}, ExpiresAt: &later, AlreadyVerified: true}
	if diff := cmp.Diff(want, outcome); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}
