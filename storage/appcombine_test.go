package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// hotApp is one application that the combining tests update from many
// goroutines: each update appends a name to its trail field, logs an
// activity entry and emits an event naming it.
type hotApp struct {
	t  *testing.T
	s  *Store
	id string

	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

// newHotApp opens a store and creates the application; when queued is
// above 0, the channel it answers is closed once that many updates wait
// on the application's queue (the store's hook, set before any update).
func newHotApp(t *testing.T, queued int) (*hotApp, <-chan struct{}) {
	t.Helper()
	s := openTestStore(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	full := make(chan struct{})
	var once sync.Once
	s.hot.queued = func(_ uuid.UUID, n int) {
		if n == queued {
			once.Do(func() { close(full) })
		}
	}
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	app.Data.Fields["trail"] = json.RawMessage(`[]`)
	if err := s.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	return &hotApp{t: t, s: s, id: app.ID, entropy: ulid.Monotonic(ulid.DefaultEntropy(), 0)}, full
}

// trail is the names a's trail field holds, in order.
func trail(t *testing.T, a *onboarding.Application) []string {
	t.Helper()
	var names []string
	if err := json.Unmarshal(a.Data.Fields["trail"], &names); err != nil {
		t.Fatalf("trail %s: %v", a.Data.Fields["trail"], err)
	}
	return names
}

// appendName appends name to a's trail and answers its activity entry and
// event.
func (h *hotApp) appendName(a *onboarding.Application, name string) (onboarding.Changes, error) {
	names := append(trail(h.t, a), name)
	b, err := json.Marshal(names)
	if err != nil {
		return onboarding.Changes{}, err
	}
	a.Data.Fields["trail"] = b
	h.mu.Lock()
	id := "evt_" + ulid.MustNew(ulid.Timestamp(t0), h.entropy).String()
	h.mu.Unlock()
	return onboarding.Changes{
		Log: []onboarding.Activity{fixture.Act("test."+name, t0)},
		Events: []*onboarding.Event{{ID: id, Type: onboarding.EventApplicationSent, OrgID: "acme", Subject: a.ID, At: t0,
			Body: json.RawMessage(fmt.Sprintf(`{"id":%q,"name":%q}`, id, name))}},
	}, nil
}

// hotResult is how one caller's update ended.
type hotResult struct {
	name     string
	app      *onboarding.Application
	err      error
	panicked any
}

// update runs UpdateApplication with change on its own goroutine and
// sends how it ended to results.
func (h *hotApp) update(ctx context.Context, name string, change func(*onboarding.Application) (onboarding.Changes, error), results chan<- hotResult) {
	go func() {
		r := hotResult{name: name}
		defer func() {
			r.panicked = recover()
			results <- r
		}()
		r.app, r.err = h.s.UpdateApplication(ctx, h.id, change)
	}()
}

// leader starts an update whose change waits for release, and returns
// once that change runs: the updates started after it queue behind it.
func (h *hotApp) leader(release <-chan struct{}, results chan<- hotResult) {
	started := make(chan struct{})
	var once sync.Once
	h.update(context.Background(), "leader", func(a *onboarding.Application) (onboarding.Changes, error) {
		once.Do(func() { close(started) })
		<-release
		return h.appendName(a, "leader")
	}, results)
	<-started
}

// check checks the stored application against the callers' outcomes:
// its trail holds the name of every update that succeeded, once, and
// nothing else; each caller's application is the trail up to its own
// name; the activity log is one chain of the same names in the same
// order, and so are the events. It answers the final trail.
func (h *hotApp) check(results []hotResult) []string {
	t := h.t
	ctx := context.Background()
	stored, err := h.s.Application(ctx, h.id)
	if err != nil {
		t.Fatal(err)
	}
	final := trail(t, stored)
	var applied []string
	for _, r := range results {
		if r.err != nil || r.panicked != nil {
			continue
		}
		applied = append(applied, r.name)
		got := trail(t, r.app)
		if len(got) == 0 || got[len(got)-1] != r.name || !slices.Equal(got, final[:min(len(got), len(final))]) {
			t.Errorf("%s was answered the trail %v; want the stored trail %v up to its own name", r.name, got, final)
		}
	}
	if d := cmp.Diff(sorted(applied), sorted(final)); d != "" {
		t.Errorf("stored trail: the updates that succeeded, each once (-want +got):\n%s", d)
	}
	var want []onboarding.Activity
	for _, name := range final {
		want = append(want, fixture.Act("test."+name, t0))
	}
	fixture.WantChained(t, h.s, h.id, want)
	events, _, err := h.s.Events(ctx, onboarding.EventQuery{OrgID: "acme", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, e := range slices.Backward(events) {
		var body struct{ Name string }
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatal(err)
		}
		named = append(named, body.Name)
	}
	if d := cmp.Diff(final, named); d != "" {
		t.Errorf("events, oldest first: one per update, in the trail's order (-want +got):\n%s", d)
	}
	return final
}

// collect receives n results.
func collect(results <-chan hotResult, n int) []hotResult {
	out := make([]hotResult, n)
	for i := range out {
		out[i] = <-results
	}
	return out
}

// TestUpdateApplicationCombines: updates of one application that queue
// behind one another while an update of it is under way are applied, in
// order, in one commit (one batch): the first update's batch and one
// more, not one commit each.
func TestUpdateApplicationCombines(t *testing.T) {
	const k = 12
	h, full := newHotApp(t, k)
	results := make(chan hotResult, k+1)
	release := make(chan struct{})
	h.leader(release, results)
	for i := range k {
		name := fmt.Sprintf("u%02d", i)
		h.update(context.Background(), name, func(a *onboarding.Application) (onboarding.Changes, error) {
			return h.appendName(a, name)
		}, results)
	}
	<-full
	close(release)
	all := collect(results, k+1)
	for _, r := range all {
		if r.err != nil || r.panicked != nil {
			t.Errorf("%s: error %v, panic %v", r.name, r.err, r.panicked)
		}
	}
	if final := h.check(all); len(final) != k+1 || final[0] != "leader" {
		t.Errorf("trail %v: want the leader's first, then %d more", final, k)
	}
	if b := h.s.hot.batches.Load(); b != 2 {
		t.Errorf("%d updates took %d commits; want 2: the first alone, the %d queued behind it together", k+1, b, k)
	}
}

// TestUpdateApplicationCombinedFailures: in a batch of queued updates, a
// change that fails, one that panics and one whose caller's context ended
// before it was applied each fail only their own caller, with their own
// error (the panic on the caller's goroutine); the others are committed
// together.
func TestUpdateApplicationCombinedFailures(t *testing.T) {
	refused := errors.New("refused")
	ctx, cancel := context.WithCancel(context.Background())
	changes := []struct {
		name   string
		ctx    context.Context
		change func(h *hotApp, a *onboarding.Application) (onboarding.Changes, error)
	}{
		{name: "a"},
		{name: "refuses", change: func(h *hotApp, a *onboarding.Application) (onboarding.Changes, error) {
			h.appendName(a, "refuses") // changes the application, then refuses: left out all the same
			return onboarding.Changes{}, refused
		}},
		{name: "b"},
		{name: "panics", change: func(h *hotApp, a *onboarding.Application) (onboarding.Changes, error) {
			h.appendName(a, "panics")
			panic("change panicked")
		}},
		{name: "canceled", ctx: ctx},
		{name: "immutable", change: func(h *hotApp, a *onboarding.Application) (onboarding.Changes, error) {
			a.OrgID = "other"
			return h.appendName(a, "immutable")
		}},
		{name: "c"},
	}
	h, full := newHotApp(t, len(changes))
	results := make(chan hotResult, len(changes)+1)
	release := make(chan struct{})
	h.leader(release, results)
	for _, c := range changes {
		change := func(a *onboarding.Application) (onboarding.Changes, error) {
			if c.change != nil {
				return c.change(h, a)
			}
			return h.appendName(a, c.name)
		}
		cctx := c.ctx
		if cctx == nil {
			cctx = context.Background()
		}
		h.update(cctx, c.name, change, results)
	}
	<-full
	cancel()
	close(release)
	all := collect(results, len(changes)+1)
	got := map[string]string{}
	for _, r := range all {
		switch {
		case r.panicked != nil:
			got[r.name] = fmt.Sprintf("panic: %v", r.panicked)
		case r.err != nil:
			got[r.name] = r.err.Error()
		default:
			got[r.name] = "ok"
		}
	}
	want := map[string]string{
		"leader": "ok", "a": "ok", "b": "ok", "c": "ok",
		"refuses":   refused.Error(),
		"panics":    "panic: change panicked",
		"canceled":  context.Canceled.Error(),
		"immutable": fmt.Sprintf("update application %s: id, organization and sequence are immutable", h.id),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if final := h.check(all); len(final) != 4 {
		t.Errorf("trail %v: want the leader and a, b, c", final)
	}
	if b := h.s.hot.batches.Load(); b != 2 {
		t.Errorf("%d commits; want 2: the first update alone, the queued ones together", b)
	}
}

// TestUpdateApplicationCombinedWriteFails: when the queued changes cannot
// be written together (one of them emits an event that cannot be
// stored), each is written alone, in order: only that one's caller
// fails.
func TestUpdateApplicationCombinedWriteFails(t *testing.T) {
	names := []string{"a", "bad event", "b"}
	h, full := newHotApp(t, len(names))
	results := make(chan hotResult, len(names)+1)
	release := make(chan struct{})
	h.leader(release, results)
	for _, name := range names {
		h.update(context.Background(), name, func(a *onboarding.Application) (onboarding.Changes, error) {
			ch, err := h.appendName(a, name)
			if name == "bad event" {
				ch.Events[0].ID = "not an event id"
			}
			return ch, err
		}, results)
	}
	<-full
	close(release)
	all := collect(results, len(names)+1)
	for _, r := range all {
		failed := r.err != nil || r.panicked != nil
		if failed != (r.name == "bad event") {
			t.Errorf("%s: error %v, panic %v", r.name, r.err, r.panicked)
		}
		if r.name == "bad event" && (r.err == nil || !strings.Contains(r.err.Error(), "is not an event id")) {
			t.Errorf("bad event: error %v, want the event's", r.err)
		}
	}
	if final := h.check(all); len(final) != 3 {
		t.Errorf("trail %v: want the leader and a, b", final)
	}
}

// TestUpdateApplicationConcurrent updates one application from many
// goroutines at once: every update succeeds, once, and each caller's
// answer is the stored application as of its own change.
func TestUpdateApplicationConcurrent(t *testing.T) {
	const n = 48
	h, _ := newHotApp(t, 0)
	results := make(chan hotResult, n)
	for i := range n {
		name := fmt.Sprintf("u%02d", i)
		h.update(context.Background(), name, func(a *onboarding.Application) (onboarding.Changes, error) {
			return h.appendName(a, name)
		}, results)
	}
	all := collect(results, n)
	for _, r := range all {
		if r.err != nil || r.panicked != nil {
			t.Errorf("%s: error %v, panic %v", r.name, r.err, r.panicked)
		}
	}
	if final := h.check(all); len(final) != n {
		t.Errorf("%d names in the trail, want %d", len(final), n)
	}
	t.Logf("%d updates in %d commits", n, h.s.hot.batches.Load())
}
