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
	"onboard/storage/storetest/fixture"
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

// TestIdempotencyExpiry: by the Store's clock, an outcome written with
// its work expires IdempotencyTTL after the write, and a saved response
// its ttl after the save. (What the records hold is the Store suite's.)
func TestIdempotencyExpiry(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: t0}
	s, _ := openTest(t, Options{Now: clk.Now})
	app := fixture.App("acme", 1, onboarding.StatusSent)
	outcome := &onboarding.IdempotentOutcome{ClientID: "client", Key: "create", Fingerprint: []byte("create"), CreatedAt: t0, ID: app.ID}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Idempotent: outcome}); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, s, `SELECT key, expires_at = $1 FROM idempotency`, t0.Add(onboarding.IdempotencyTTL)); !cmp.Equal(got, []string{"create true"}) {
		t.Errorf("idempotency rows = %v, want the outcome's, expiring IdempotencyTTL after the write", got)
	}
	clk.set(t0.Add(time.Hour))
	saved := make(chan error, 1)
	s.SaveResponse("client", "save", json.RawMessage(`{"Status":201}`), time.Hour, func(err error) { saved <- err })
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		at      time.Time
		present []string
	}{
		{t0.Add(2*time.Hour - 1), []string{"create", "save"}},
		{t0.Add(2 * time.Hour), []string{"create"}},
		{t0.Add(onboarding.IdempotencyTTL), nil},
	} {
		clk.set(st.at)
		var present []string
		for _, key := range []string{"create", "save"} {
			switch _, err := s.SavedResponse(ctx, "client", key); {
			case err == nil:
				present = append(present, key)
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
