package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// clock is a settable clock for a Store.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestOutcomeCommitsWithTheWork: each write that takes Changes stores the
// outcome of the request with an Idempotency-Key under its key, in its
// own transaction: another instance reads it, it expires as a saved
// response does, a write that is refused leaves none, and the response
// saved afterwards replaces it.
func TestOutcomeCommitsWithTheWork(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: t0}
	s, url := openTest(t, Options{Now: clk.Now})
	outcome := func(key, id string) *onboarding.IdempotentOutcome {
		return &onboarding.IdempotentOutcome{ClientID: "client", Key: key, Fingerprint: []byte(key), CreatedAt: t0, ID: id}
	}
	app := newApp(t, "acme", 1, onboarding.StatusSent)
	rfi := newRFI(t, "acme", 2, onboarding.RFIActive)
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
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Idempotent: outcome("refused create", app.ID)}); err == nil {
		t.Fatal("a second create of the same application succeeded")
	}
	if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Idempotent: outcome("refused update", app.ID)}, errors.New("refused")
	}); err == nil {
		t.Fatal("a refused update succeeded")
	}

	other := openOn(t, url, Options{Now: clk.Now})
	for _, w := range writes {
		rec, err := other.SavedResponse(ctx, "client", w.key)
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
		if _, err := s.SavedResponse(ctx, "client", key); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("%s: saved %v, want nothing", key, err)
		}
	}
	if got := rows(t, s, `SELECT key, expires_at = $1 FROM idempotency`, t0.Add(onboarding.IdempotencyTTL)); len(got) != len(writes) {
		t.Errorf("idempotency rows = %v", got)
	} else {
		for _, r := range got {
			if r[len(r)-4:] != "true" {
				t.Errorf("row %s does not expire IdempotencyTTL after the write", r)
			}
		}
	}

	clk.set(t0.Add(time.Hour))
	saved := make(chan error, 1)
	s.SaveResponse("client", "create application", json.RawMessage(`{"Status":201}`), time.Hour, func(err error) { saved <- err })
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if rec, err := other.SavedResponse(ctx, "client", "create application"); err != nil || string(rec) != `{"Status":201}` {
		t.Errorf("after the response was saved: %s, %v; want the response", rec, err)
	}
	// An hour on, the saved response has expired; a day on, the outcomes.
	for _, st := range []struct {
		at      time.Time
		present []string
	}{
		{t0.Add(2*time.Hour - 1), []string{"create application", "update application", "create rfi request", "update rfi request"}},
		{t0.Add(2 * time.Hour), []string{"update application", "create rfi request", "update rfi request"}},
		{t0.Add(onboarding.IdempotencyTTL), nil},
	} {
		clk.set(st.at)
		var present []string
		for _, w := range writes {
			switch _, err := s.SavedResponse(ctx, "client", w.key); {
			case err == nil:
				present = append(present, w.key)
			case !errors.Is(err, onboarding.ErrNotFound):
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(st.present, present); diff != "" {
			t.Errorf("at %v: saved (-want +got):\n%s", st.at, diff)
		}
	}
	if _, err := s.SavedResponse(ctx, "client\x00", "\xff"); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("SavedResponse(not text) = %v, want ErrNotFound", err)
	}
}

// TestSweepExpired: the sweep deletes the rows that expired and only
// those, in batches; an open Store sweeps on its own ticker and stops
// when closed.
func TestSweepExpired(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: t0}
	s, url := openTest(t, Options{Now: clk.Now})
	if _, err := s.pool.Exec(ctx, `INSERT INTO idempotency (client_id, key, record, expires_at)
		SELECT 'c', 'k' || i, '\x01', $1::timestamptz + i * interval '1 second' FROM generate_series(1, $2::int) i`, t0, 2*sweepBatch+10); err != nil {
		t.Fatal(err)
	}
	clk.set(t0.Add((2*sweepBatch + 5) * time.Second))
	n, err := s.SweepExpired(ctx)
	if err != nil || n != 2*sweepBatch+5 {
		t.Errorf("SweepExpired = %d, %v; want %d", n, err, 2*sweepBatch+5)
	}
	if got := rows(t, s, `SELECT count(*) FROM idempotency`); !cmp.Equal(got, []string{"5"}) {
		t.Errorf("rows left = %v, want 5", got)
	}

	clk.set(t0.Add(time.Hour))
	ticking := openOn(t, url, Options{Now: clk.Now, SweepInterval: time.Millisecond})
	for len(rows(t, ticking, `SELECT 1 FROM idempotency`)) != 0 {
		time.Sleep(time.Millisecond) // polling for the sweep's effect, not asserting an absence
	}
	if err := ticking.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSaveResponseFromClosingStore: Close waits for the saves under way,
// each of which calls done once.
func TestSaveResponseFromClosingStore(t *testing.T) {
	s, url := openTest(t, Options{})
	const n = 20
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		s.SaveResponse("c", string(rune('a'+i)), json.RawMessage(`{}`), time.Hour, func(err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	other := openOn(t, url, Options{})
	if got := rows(t, other, `SELECT count(*) FROM idempotency`); !cmp.Equal(got, []string{"20"}) {
		t.Errorf("saved %v, want 20", got)
	}
}
