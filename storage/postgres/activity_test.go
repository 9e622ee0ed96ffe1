package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// readLog returns the subject's head and entries as ActivityLog reads them.
func readLog(t *testing.T, s *Store, id string) (*onboarding.ActivityHead, []onboarding.LoggedActivity) {
	t.Helper()
	var head *onboarding.ActivityHead
	var log []onboarding.LoggedActivity
	err := s.ActivityLog(context.Background(), id, func(h *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
		head = h
		for e, err := range entries {
			if err != nil {
				return err
			}
			log = append(log, *e)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ActivityLog(%s): %v", id, err)
	}
	return head, log
}

// wantChained checks that the subject's stored log is the chain of want
// (its activities, in order): each entry chained after the one before,
// from the log's start, and the head at the last.
func wantChained(t *testing.T, s *Store, id string, want []onboarding.Activity) []onboarding.LoggedActivity {
	t.Helper()
	head, log := readLog(t, s, id)
	got := make([]onboarding.Activity, len(log))
	prev := onboarding.ActivityChainStart(id)
	for i, e := range log {
		got[i] = e.Activity
		if e.Prev != prev {
			t.Errorf("%s entry %d: Prev = %q, want %q", id, i, e.Prev, prev)
		}
		if h := onboarding.ActivityHash(prev, &e); e.Hash != h || len(h) != 64 {
			t.Errorf("%s entry %d: Hash = %q, want %q", id, i, e.Hash, h)
		}
		if i > 0 && e.Seq.Compare(log[i-1].Seq) <= 0 {
			t.Errorf("%s entry %d: Seq %s not after %s", id, i, e.Seq, log[i-1].Seq)
		}
		prev = e.Hash
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s log (-want +got):\n%s", id, diff)
	}
	switch {
	case len(log) == 0 && head != nil:
		t.Errorf("%s: empty log with head %+v", id, head)
	case len(log) > 0 && (head == nil || *head != onboarding.ActivityHead{Seq: log[len(log)-1].Seq, Hash: prev}):
		t.Errorf("%s: head = %+v, want the last entry %s %s", id, head, log[len(log)-1].Seq, prev)
	}
	return log
}

// TestActivityChain appends to application and RFI logs in every way the
// Store does (create, update, an update that logs nothing), with a clock
// that steps back: each log is one chain in append order, with its head.
func TestActivityChain(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := newApp(t, "acme", 1, onboarding.StatusCreated)
	created := []onboarding.Activity{act(onboarding.ActionCreated, t0), act(onboarding.ActionInviteSent, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: created}); err != nil {
		t.Fatal(err)
	}
	first := wantChained(t, s, app.ID, created)
	log := created
	for i, a := range []onboarding.Activity{
		{At: t0.Add(time.Minute), Action: onboarding.ActionFieldsUpdated, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1"}, Fields: []string{"industry", "website"}},
		{At: t0.Add(-time.Hour), Action: onboarding.ActionFormSaved, Actor: onboarding.Actor{Type: onboarding.ActorParticipant, ID: "p1", Name: "a@example.com"}, Detail: "company"},
		{}, // an update that logs nothing
		{At: t0.Add(time.Minute), Action: onboarding.ActionDocumentForced, Actor: onboarding.Actor{Type: onboarding.ActorOperator}, Detail: "bank_statement: checked \u2028 \"by phone\"\n"},
	} {
		if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
			if a.Action == "" {
				return onboarding.Changes{}, nil
			}
			return onboarding.Changes{Log: []onboarding.Activity{a}}, nil
		}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if a.Action != "" {
			log = append(log, a)
		}
		got := wantChained(t, s, app.ID, log)
		if !cmp.Equal(got[:len(first)], first) {
			t.Errorf("update %d changed earlier entries", i)
		}
	}
	if plain, err := s.Activity(ctx, app.ID); err != nil || !cmp.Equal(plain, log) {
		t.Errorf("Activity() = %+v, %v; want %+v", plain, err, log)
	}

	r := newRFI(t, "acme", 1, onboarding.RFIActive)
	rlog := []onboarding.Activity{act(onboarding.ActionRFICreated, t0)}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: rlog}); err != nil {
		t.Fatal(err)
	}
	more := act(onboarding.ActionRFIExpired, t0.Add(time.Hour))
	if _, err := s.UpdateRFIRequest(ctx, r.ID, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
		r.Status = onboarding.RFIExpired
		return onboarding.Changes{Log: []onboarding.Activity{more}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	wantChained(t, s, r.ID, append(rlog, more))

	// A subject with no log: no head, no entries; a record created
	// without entries has no head either.
	quiet := storedApp(t, s, "acme", 2, onboarding.StatusCreated)
	for _, id := range []string{uuid.NewString(), quiet.ID} {
		if head, log := readLog(t, s, id); head != nil || log != nil {
			t.Errorf("subject without entries: head %+v, log %+v", head, log)
		}
	}
	if err := s.ActivityLog(ctx, "nope", nil); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("ActivityLog(malformed id) = %v, want ErrNotFound", err)
	}
	if _, err := s.Activity(ctx, "nope"); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Activity(malformed id) = %v, want ErrNotFound", err)
	}
	boom := errors.New("boom")
	if err := s.ActivityLog(ctx, app.ID, func(*onboarding.ActivityHead, iter.Seq2[*onboarding.LoggedActivity, error]) error { return boom }); err != boom {
		t.Errorf("ActivityLog answers %v, want walk's error", err)
	}
}

// TestConcurrentAppendsKeepOneChain appends to one log from many
// goroutines of two instances: every entry is in the chain once.
func TestConcurrentAppendsKeepOneChain(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t, Options{})
	other := openOn(t, url, Options{})
	app := newApp(t, "acme", 1, onboarding.StatusCreated)
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{act(onboarding.ActionCreated, t0)}}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		store := s
		if i%2 == 1 {
			store = other
		}
		wg.Go(func() {
			if _, err := store.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
				return onboarding.Changes{Log: []onboarding.Activity{act(fmt.Sprintf("test.%02d", i), t0), act("test.second", t0)}}, nil
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	head, log := readLog(t, s, app.ID)
	if len(log) != 2*n+1 {
		t.Fatalf("%d entries, want %d", len(log), 2*n+1)
	}
	prev := onboarding.ActivityChainStart(app.ID)
	for i, e := range log {
		if e.Prev != prev || onboarding.ActivityHash(prev, &e) != e.Hash {
			t.Fatalf("entry %d (%s) is not chained after the one before it", i, e.Action)
		}
		if i > 0 && e.Seq.Compare(log[i-1].Seq) <= 0 {
			t.Fatalf("entry %d: Seq %s not after %s", i, e.Seq, log[i-1].Seq)
		}
		prev = e.Hash
	}
	if head == nil || head.Hash != prev {
		t.Errorf("head = %+v, want hash %s", head, prev)
	}
}

// TestActivityAfter pages through a log: each page follows the last entry
// of the one before, and more says whether entries remain.
func TestActivityAfter(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := newApp(t, "acme", 1, onboarding.StatusCreated)
	var want []onboarding.Activity
	for i := range 7 {
		want = append(want, act(fmt.Sprintf("test.%d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: want}); err != nil {
		t.Fatal(err)
	}
	other := newApp(t, "acme", 2, onboarding.StatusCreated)
	if err := s.CreateApplication(ctx, other, onboarding.Changes{Log: want[:1]}); err != nil {
		t.Fatal(err)
	}
	_, all := readLog(t, s, app.ID)
	for _, limit := range []int{1, 3, 7, 50} {
		var got []onboarding.LoggedActivity
		after := ulid.ULID{}
		for pages := 0; ; pages++ {
			page, more, err := s.ActivityAfter(ctx, app.ID, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit || (more && len(page) != limit) {
				t.Fatalf("limit %d: page of %d, more %v", limit, len(page), more)
			}
			got = append(got, page...)
			if !more {
				break
			}
			after = page[len(page)-1].Seq
		}
		if diff := cmp.Diff(all, got); diff != "" {
			t.Errorf("limit %d: pages (-want +got):\n%s", limit, diff)
		}
	}
	if page, more, err := s.ActivityAfter(ctx, app.ID, all[6].Seq, 10); err != nil || len(page) != 0 || more {
		t.Errorf("after the last entry: %v, %v, %v; want nothing", page, more, err)
	}
	if page, more, err := s.ActivityAfter(ctx, uuid.NewString(), ulid.ULID{}, 10); err != nil || len(page) != 0 || more {
		t.Errorf("an unknown subject: %v, %v, %v; want nothing", page, more, err)
	}
	if _, _, err := s.ActivityAfter(ctx, "nope", ulid.ULID{}, 10); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("ActivityAfter(malformed id) = %v, want ErrNotFound", err)
	}
}

// TestActivityLogIsOneSnapshot: entries appended while a walk is under way
// (from another connection) are not in it, and the head it got is the one
// of the entries it walks.
func TestActivityLogIsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := newApp(t, "acme", 1, onboarding.StatusCreated)
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{act(onboarding.ActionCreated, t0)}}); err != nil {
		t.Fatal(err)
	}
	var walked []onboarding.LoggedActivity
	var head *onboarding.ActivityHead
	err := s.ActivityLog(ctx, app.ID, func(h *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
		head = h
		if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
			return onboarding.Changes{Log: []onboarding.Activity{act("test.meanwhile", t0)}}, nil
		}); err != nil {
			return err
		}
		for e, err := range entries {
			if err != nil {
				return err
			}
			walked = append(walked, *e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(walked) != 1 || head == nil || head.Seq != walked[0].Seq || head.Hash != walked[0].Hash {
		t.Errorf("walked %d entries with head %+v; want the one entry before the update and its head", len(walked), head)
	}
	if _, log := readLog(t, s, app.ID); len(log) != 2 {
		t.Errorf("%d entries after the walk, want 2", len(log))
	}
}

// TestTamperWithActivity: the test seam stores exactly what edit returns,
// and the next update chains after the head it stored.
func TestTamperWithActivity(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := newApp(t, "acme", 1, onboarding.StatusCreated)
	r := newRFI(t, "acme", 1, onboarding.RFIActive)
	log := []onboarding.Activity{act("test.0", t0), act("test.1", t0.Add(time.Second)), act("test.2", t0.Add(2*time.Second))}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{app.ID, r.ID} {
		head, entries := readLog(t, s, id)
		edited := append([]onboarding.LoggedActivity(nil), entries[0], entries[2])
		edited[1].Detail = "forged"
		newHead := &onboarding.ActivityHead{Seq: edited[1].Seq, Hash: "f00d"}
		if err := s.TamperWithActivity(ctx, id, func(h *onboarding.ActivityHead, got []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity) {
			if !cmp.Equal(head, h) || !cmp.Equal(entries, got) {
				t.Errorf("%s: edit got %+v %+v, want %+v %+v", id, h, got, head, entries)
			}
			return newHead, edited
		}); err != nil {
			t.Fatal(err)
		}
		gotHead, got := readLog(t, s, id)
		if !cmp.Equal(newHead, gotHead) || !cmp.Equal(edited, got) {
			t.Errorf("%s after tampering: (-want +got)\n%s%s", id, cmp.Diff(newHead, gotHead), cmp.Diff(edited, got))
		}
		if err := s.TamperWithActivity(ctx, id, func(*onboarding.ActivityHead, []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity) {
			return nil, got
		}); err != nil {
			t.Fatal(err)
		}
		if h, _ := readLog(t, s, id); h != nil {
			t.Errorf("%s: head %+v after tampering it away", id, h)
		}
	}
	// The next append chains after the head as stored: none, here.
	if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Log: []onboarding.Activity{act("test.3", t0.Add(3*time.Second))}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, got := readLog(t, s, app.ID)
	if last := got[len(got)-1]; last.Prev != onboarding.ActivityChainStart(app.ID) {
		t.Errorf("the append after the tampering chained after %q, want the log's start", last.Prev)
	}
	if err := s.TamperWithActivity(ctx, uuid.NewString(), nil); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("TamperWithActivity(unknown) = %v, want ErrNotFound", err)
	}
}
