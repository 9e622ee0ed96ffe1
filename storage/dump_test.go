package storage

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/dump"
	"onboard/storage/storetest/fixture"
)

// fillForDump stores a row of every kind the store keeps, in the states
// that dump differently: an application with pending registry documents
// and activity, one whose update moved its indexes, RFI requests active,
// leased and completed, an API key, an idempotent outcome and a saved
// response, two endpoints, events, a delivery leased, one waiting behind
// a head that is not its queue's first (a redelivery of an older event),
// and delivery log lines.
func fillForDump(t *testing.T, h *hooks) {
	t.Helper()
	ctx := context.Background()
	s := h.S
	ep := h.Endpoint("acme")
	h.Endpoint("acme", onboarding.EventApplicationCreated)

	a1 := fixture.App("acme", 1, onboarding.StatusInProgress)
	a1.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
	if err := s.CreateApplication(ctx, a1, onboarding.Changes{
		Log:        []onboarding.Activity{fixture.Act("created", h.Now), fixture.Act("invited", h.Now)},
		Idempotent: &onboarding.IdempotentOutcome{ClientID: "c1", Key: "idem-1", CreatedAt: h.Now, ID: a1.ID},
		Events:     []*onboarding.Event{h.Event(onboarding.EventApplicationCreated, "acme", a1.ID, h.Now)},
	}); err != nil {
		t.Fatal(err)
	}
	a2 := fixture.App("acme", 2, onboarding.StatusSent)
	if err := s.CreateApplication(ctx, a2, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateApplication(ctx, a2.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Status = onboarding.StatusInProgress
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act("opened", h.Now)}}, nil
	}); err != nil {
		t.Fatal(err)
	}

	active, leased, done := fixture.RFI("acme", 3, onboarding.RFIActive), fixture.RFI("acme", 4, onboarding.RFIActive), fixture.RFI("acme", 5, onboarding.RFICompleted)
	leased.ExpiresAt = h.At(-time.Hour)
	fixture.CreateRFIs(t, s, active, leased, done)
	if ids, _, err := s.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: "expirer", Now: h.Now, Lease: time.Minute, Limit: 10}); err != nil || len(ids) != 1 {
		t.Fatalf("ClaimRFIExpiries: %v, %v; want the one request", ids, err)
	}

	if err := s.CreateAPIKey(ctx, &onboarding.APIKey{ClientID: "c1", OrgID: "acme", Name: "k", CreatedAt: h.Now}); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	s.SaveResponse("c1", "idem-2", json.RawMessage(`{"status":201}`), time.Hour, func(err error) { saved <- err })
	if err := <-saved; err != nil {
		t.Fatal(err)
	}

	// Two events of one subject for ep: the first is attempted and
	// done, the second becomes the head, and the first, redelivered,
	// waits behind it though it sorts first.
	subject := uuid.NewString()
	e1, e2 := h.Event(onboarding.EventApplicationSubmitted, "acme", subject, h.At(time.Second)), h.Event(onboarding.EventApplicationSubmitted, "acme", subject, h.At(2*time.Second))
	h.Add(e1, e2)
	got, _ := h.Claim("worker", h.At(time.Minute), 10)
	for _, d := range got {
		if d.EventID == e1.ID {
			if err := h.Finish(d, h.At(time.Minute), onboarding.DeliveryResult{Done: true}); err != nil {
				t.Fatal(err)
			}
		} else if err := h.Finish(d, h.At(time.Minute), onboarding.DeliveryResult{RetryAt: h.At(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Redeliver(ctx, e1.ID, ep.ID, h.At(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	h.Claim("worker", h.At(2*time.Hour), 1) // one head leased
}

// dumpLines dumps s, passing every line through its JSON as a backup
// does.
func dumpLines(t *testing.T, s *Store) []*dump.Line {
	t.Helper()
	var lines []*dump.Line
	err := s.Dump(context.Background(), func(l *dump.Line) error {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		var back dump.Line
		if err := json.Unmarshal(b, &back); err != nil {
			return err
		}
		lines = append(lines, &back)
		return nil
	})
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	return lines
}

// lineSource yields lines, then io.EOF.
func lineSource(lines []*dump.Line) func() (*dump.Line, error) {
	return func() (*dump.Line, error) {
		if len(lines) == 0 {
			return nil, io.EOF
		}
		l := lines[0]
		lines = lines[1:]
		return l, nil
	}
}

// TestDumpLoadRoundTrip dumps a store holding every kind of row and
// loads the dump into a new store: the new store has exactly the keys,
// values and expiries of the original (so every index the store's own
// writes make is there), and dumps the same lines.
func TestDumpLoadRoundTrip(t *testing.T) {
	h := newHooks(t)
	fillForDump(t, h)
	lines := dumpLines(t, h.S)
	kinds := map[string]int{}
	for _, l := range lines {
		kinds[l.Kind]++
	}
	for _, k := range dump.Kinds() {
		if kinds[k] == 0 {
			t.Errorf("the dump has no line of kind %s; the test should cover every kind", k)
		}
	}
	heads := 0
	for _, l := range lines {
		if l.Kind == dump.Delivery && l.Head {
			heads++
		}
	}
	if kinds[dump.Delivery] < 3 || heads == kinds[dump.Delivery] {
		t.Errorf("%d deliveries, %d heads; the test wants deliveries waiting behind heads", kinds[dump.Delivery], heads)
	}

	loaded := openTestStore(t, t.TempDir())
	defer loaded.Close()
	if err := loaded.Load(context.Background(), lineSource(lines)); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(allKeys(t, h.S), allKeys(t, loaded)); diff != "" {
		t.Errorf("loaded keys (-dumped +loaded):\n%s", diff)
	}
	if diff := cmp.Diff(expiries(t, h.S), expiries(t, loaded)); diff != "" {
		t.Errorf("loaded expiries (-dumped +loaded):\n%s", diff)
	}
	if diff := cmp.Diff(lines, dumpLines(t, loaded)); diff != "" {
		t.Errorf("dump of the loaded store (-first +second):\n%s", diff)
	}
	if ids := loaded.endpoints.ids("acme"); len(ids) != 2 {
		t.Errorf("the loaded store's endpoint index: %v; want both endpoints", ids)
	}
}

// TestDumpStopsWhenCancelled checks that a dump stops with its context,
// and with emit's error.
func TestDumpStopsWhenCancelled(t *testing.T) {
	h := newHooks(t)
	fillForDump(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.S.Dump(ctx, func(*dump.Line) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Dump with a cancelled context: %v", err)
	}
	stop := errors.New("disk full")
	if err := h.S.Dump(context.Background(), func(*dump.Line) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Dump whose emit fails: %v", err)
	}
}

// TestLoadRefusals loads lines a store cannot take, each refused with its
// own message naming the line.
func TestLoadRefusals(t *testing.T) {
	h := newHooks(t)
	fillForDump(t, h)
	lines := dumpLines(t, h.S)
	first := func(kind string) *dump.Line {
		for _, l := range lines {
			if l.Kind == kind {
				c := *l
				return &c
			}
		}
		t.Fatalf("no line of kind %s", kind)
		return nil
	}
	app, key := first(dump.Application), first(dump.APIKey)
	noSeq := first(dump.Activity)
	noSeq.Seq = [16]byte{}
	tests := []struct {
		name  string
		lines []*dump.Line
		want  string
	}{
		{"unknown kind", []*dump.Line{key, {Kind: "invoice", Record: []byte{1}}}, `line 2: unknown kind "invoice"`},
		{"missing member", []*dump.Line{noSeq}, "line 1: activity without seq"},
		{"undecodable record", []*dump.Line{{Kind: dump.APIKey, Record: []byte{1, '{'}}}, "line 1: decode record: unexpected end of JSON input"},
		{"repeated row", []*dump.Line{app, key, app}, "line 3: create application "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, t.TempDir())
			defer s.Close()
			err := s.Load(context.Background(), lineSource(tt.lines))
			if err == nil || len(err.Error()) < len(tt.want) || err.Error()[:len(tt.want)] != tt.want {
				t.Errorf("Load: %v, want an error starting %q", err, tt.want)
			}
		})
	}
	t.Run("not empty", func(t *testing.T) {
		if err := h.S.Load(context.Background(), lineSource(nil)); !errors.Is(err, dump.ErrNotEmpty) {
			t.Errorf("Load into a store with records: %v, want %v", err, dump.ErrNotEmpty)
		}
	})
}
