package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// awaitLockWait returns once a session of h's database other than the
// test's own waits for a lock: the statement started beside it is blocked.
func (h *hookEnv) awaitLockWait() {
	h.T.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		var n int
		if err := h.S.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			h.T.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			h.T.Fatal("no session waited for a lock within a minute")
		}
		time.Sleep(time.Millisecond) // polling for the wait to begin
	}
}

// TestWebhookQueueingBesideAFinishingHead interleaves a transaction that
// queues an event behind a subject's head with one that finishes that
// head: whichever holds the head first, the other waits for it, and the
// queue ends with exactly one head, the right one.
func TestWebhookQueueingBesideAFinishingHead(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		finishFirst bool
		third       bool // a third event waits behind the head, to be promoted by the finish
	}{
		{"the queueing holds the head first", false, false},
		{"the finish holds the head first, as the last of its queue", true, false},
		{"the finish holds the head first and promotes another", true, true},
		{"the queueing holds the head first, another waiting", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHookEnv(t)
			other := h.open()
			ep := h.Endpoint("acme")
			first := h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now)
			third := h.Event(onboarding.EventApplicationOpened, "acme", "app-1", h.Now)
			second := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
			h.Add(first)
			if tt.third {
				h.Add(third)
			}
			claimed, _ := h.Claim("w1", h.Now, 1)
			if len(claimed) != 1 {
				t.Fatalf("claimed %v", fixture.Pairs(claimed))
			}
			held, err := h.S.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Rollback(ctx)
			done := make(chan error, 1)
			if tt.finishFirst {
				if _, err := held.Exec(ctx, `SELECT 1 FROM deliveries WHERE endpoint_id = $1 AND event_id = $2 FOR UPDATE`, ep.ID, first.ID); err != nil {
					t.Fatal(err)
				}
				if err := finishHead(ctx, held, ep.ID, first.Subject, first.ID, h.Now); err != nil {
					t.Fatal(err)
				}
				go func() { done <- other.AddEvent(ctx, second) }()
			} else {
				if err := h.S.writeEvents(ctx, held, []*onboarding.Event{second}); err != nil {
					t.Fatal(err)
				}
				go func() {
					done <- h.FinishOn(other, claimed[0], h.Now, onboarding.DeliveryResult{Done: true})
				}()
			}
			h.awaitLockWait()
			if err := held.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			q := h.queued()
			want := []string{fixture.Pair(ep.ID, second.ID)}
			head := second.ID
			if tt.third {
				want = append(want, fixture.Pair(ep.ID, third.ID))
				head = third.ID
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), h.queuedPairs()); diff != "" {
				t.Errorf("queue (-want +got):\n%s", diff)
			}
			if !q[fixture.Pair(ep.ID, head)].Head {
				t.Errorf("the head is not %s: %+v", head, q)
			}
		})
	}
}

// TestWebhookSweep deletes what expired, drops the queue of an endpoint
// whose row is gone (without log lines), and runs on one instance at a
// time.
func TestWebhookSweep(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	gone, kept := h.Endpoint("acme"), h.Endpoint("acme")
	old := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(-31*24*time.Hour))
	fresh := h.Event(onboarding.EventApplicationSent, "acme", "app-2", h.Now)
	h.Add(old, fresh)
	lines := []onboarding.DeliveryAttempt{
		{EventID: old.ID, EndpointID: kept.ID, At: h.At(-31 * 24 * time.Hour)},
		{EventID: fresh.ID, EndpointID: kept.ID, At: h.Now},
	}
	if err := h.S.inTx(ctx, func(tx pgx.Tx) error { return h.S.writeAttempts(ctx, tx, lines) }); err != nil {
		t.Fatal(err)
	}
	// What a crash between an endpoint's removal and its drop leaves.
	if _, err := h.S.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, gone.ID); err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		if err := h.S.pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Another instance holding the sweep's lock: this one does nothing.
	held, err := h.S.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, webhookSweepLock); err != nil {
		t.Fatal(err)
	}
	other := h.open()
	if swept, err := other.sweepWebhooks(ctx); err != nil || swept {
		t.Errorf("sweep while another instance sweeps = %v, %v; want false", swept, err)
	}
	if n := count("events"); n != 2 {
		t.Errorf("%d events after a sweep that did not run, want 2", n)
	}
	if err := held.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	if swept, err := other.sweepWebhooks(ctx); err != nil || !swept {
		t.Fatalf("sweep = %v, %v", swept, err)
	}
	got := map[string]int{"events": count("events"), "delivery_attempts": count("delivery_attempts")}
	if diff := cmp.Diff(map[string]int{"events": 1, "delivery_attempts": 1}, got); diff != "" {
		t.Errorf("rows left (-want +got):\n%s", diff)
	}
	if e, err := h.S.Event(ctx, fresh.ID); err != nil || e.ID != fresh.ID {
		t.Errorf("Event(fresh) after the sweep = %v, %v", e, err)
	}
	if diff := cmp.Diff([]string{fixture.Pair(kept.ID, old.ID), fixture.Pair(kept.ID, fresh.ID)}, h.queuedPairs()); diff != "" {
		t.Errorf("queue after the sweep (-want +got):\n%s", diff)
	}
	if l, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{}); err != nil || len(l) != 1 || l[0].EventID != fresh.ID {
		t.Errorf("log after the sweep = %+v, %v; want the fresh line only (dropping for a missing endpoint logs nothing)", l, err)
	}
	// The delivery of the event the sweep deleted is dropped when
	// claimed, as that of an expired one.
	claimed, _ := h.Claim("w", h.Now, 10)
	if diff := cmp.Diff([]string{fixture.Pair(kept.ID, fresh.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed after the sweep (-want +got):\n%s", diff)
	}
	if l, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: old.ID}); err != nil || len(l) != 1 || l[0].Error != "not delivered: the event expired" {
		t.Errorf("log of the swept event = %+v, %v", l, err)
	}
}

// TestWebhookWatchDeliveries: a transaction that queues deliveries wakes
// the watcher of another instance when it commits, and the watcher keeps
// listening after its connection is cut.
func TestWebhookWatchDeliveries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newHookEnv(t)
	watcher := h.open()
	wakes := make(chan struct{}, 64)
	watched := make(chan error, 1)
	go func() {
		watched <- watcher.WatchDeliveries(ctx, func() {
			select {
			case wakes <- struct{}{}:
			default:
			}
		})
	}()
	awaitWake := func(what string) {
		t.Helper()
		select {
		case <-wakes:
		case err := <-watched:
			t.Fatalf("WatchDeliveries returned %v, waiting for %s", err, what)
		}
	}
	awaitWake("it to listen")
	ep := h.Endpoint("acme")
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	h.Add(e)
	awaitWake("an event queued")
	if _, err := h.S.Redeliver(ctx, e.ID, ep.ID, h.Now); err != nil {
		t.Fatal(err)
	}
	awaitWake("a redelivery")

	// Cut the watcher's connection: it connects again, says so, and
	// hears the next commit.
	tag, err := h.S.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminate the listener: %v, %v", tag, err)
	}
	for len(wakes) > 0 {
		<-wakes
	}
	awaitWake("it to listen again")
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-2", h.Now))
	awaitWake("an event queued after reconnecting")

	cancel()
	if err := <-watched; !errors.Is(err, context.Canceled) {
		t.Errorf("WatchDeliveries after its context ended = %v, want context.Canceled", err)
	}
}

// TestWebhookCloseStopsTheSweep: Close returns once the sweep's goroutine
// has stopped, and a Store's sweep runs beside the other's work.
func TestWebhookCloseStopsTheSweep(t *testing.T) {
	h := newHookEnv(t)
	s := h.open()
	stopped := make(chan struct{})
	go func() {
		s.Close()
		close(stopped)
	}()
	<-stopped
	if _, err := h.S.sweepWebhooks(context.Background()); err != nil {
		t.Errorf("sweep on the instance left = %v", err)
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Errorf("Ping after Close succeeded")
	}
}

// TestWebhookDisablingWaitsForQueueing disables an endpoint while a
// transaction that queued an event for it is open, and removes another
// likewise: each change waits for that transaction, whose delivery it then
// drops, so that nothing is left queued for the endpoint.
func TestWebhookDisablingWaitsForQueueing(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		stop   func(s *Store, id string) error
		logged bool
	}{
		{"disable", func(s *Store, id string) error {
			_, err := s.UpdateEndpoint(ctx, id, func(ep *onboarding.Endpoint) error { ep.Enabled = false; return nil })
			return err
		}, true},
		{"remove", func(s *Store, id string) error { return s.DeleteEndpoint(ctx, id) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHookEnv(t)
			other := h.open()
			ep := h.Endpoint("acme")
			e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
			queueing, err := h.S.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer queueing.Rollback(ctx)
			if err := h.S.writeEvents(ctx, queueing, []*onboarding.Event{e}); err != nil {
				t.Fatal(err)
			}
			stopped := make(chan error, 1)
			go func() { stopped <- tt.stop(other, ep.ID) }()
			h.awaitLockWait()
			if err := queueing.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			if got := h.queuedPairs(); len(got) != 0 {
				t.Errorf("left queued: %v", got)
			}
			lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: e.ID})
			if err != nil || len(lines) != btoi(tt.logged) {
				t.Errorf("log = %+v, %v; want %d lines", lines, err, btoi(tt.logged))
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestWebhookClaimWaitsForADisabling makes a claim while an endpoint's
// disabling is being committed: the claim waits for it and leases nothing
// of the endpoint, while another endpoint's delivery is leased.
func TestWebhookClaimWaitsForADisabling(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep, other := h.Endpoint("acme"), h.Endpoint("acme2")
	e, kept := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now), h.Event(onboarding.EventApplicationSent, "acme2", "app-2", h.Now)
	h.Add(e, kept)
	disabling, err := h.S.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer disabling.Rollback(ctx)
	off := *ep
	off.Enabled = false
	if err := writeEndpoint(ctx, disabling, &off); err != nil {
		t.Fatal(err)
	}
	type result struct {
		claimed []*onboarding.Delivery
		err     error
	}
	done := make(chan result, 1)
	claimer := h.open()
	go func() {
		claimed, _, err := claimer.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w", Now: h.Now, Lease: time.Minute, Limit: 10})
		done <- result{claimed, err}
	}()
	h.awaitLockWait()
	if err := disabling.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff([]string{fixture.Pair(other.ID, kept.ID)}, fixture.Pairs(r.claimed)); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
}
