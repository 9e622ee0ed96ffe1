package storetest

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
	"onboard/pdf"
	"onboard/storage/storetest/fixture"
)

var activityCases = []suiteCase{
	{"Chain", testActivityChain},
	{"ConcurrentAppendsKeepOneChain", testConcurrentAppendsKeepOneChain},
	{"After", testActivityAfter},
	{"LogIsOneSnapshot", testActivityLogSnapshot},
}

// verifyChains checks every activity log of org's applications and RFI
// requests with onboarding's verifier: none is broken.
func verifyChains(t *testing.T, s onboarding.Store, org string) onboarding.LogReport {
	t.Helper()
	svc, err := onboarding.New(onboarding.Options{Store: s, PageCounter: pdf.PageCount,
		Organizations: []*onboarding.Organization{{ID: org}}})
	if err != nil {
		t.Fatal(err)
	}
	report, err := svc.VerifyActivityLogs(context.Background(), onboarding.LogQuery{OrgID: org}, func(b onboarding.LogBreak) error {
		t.Errorf("broken log: %+v", b)
		return nil
	})
	if err != nil {
		t.Fatalf("VerifyActivityLogs: %v", err)
	}
	return report
}

// testActivityChain appends to application and RFI logs in every way the
// Store does (create, update, an update that logs nothing), with a clock
// that steps back: each log is one chain in append order, with its head,
// and onboarding's verifier finds every log whole.
func testActivityChain(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	created := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0), fixture.Act(onboarding.ActionInviteSent, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: created}); err != nil {
		t.Fatal(err)
	}
	first := fixture.WantChained(t, s, app.ID, created)
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
		got := fixture.WantChained(t, s, app.ID, log)
		if !cmp.Equal(got[:len(first)], first) {
			t.Errorf("update %d changed earlier entries", i)
		}
	}

	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	rlog := []onboarding.Activity{fixture.Act(onboarding.ActionRFICreated, t0)}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: rlog}); err != nil {
		t.Fatal(err)
	}
	more := fixture.Act(onboarding.ActionRFIExpired, t0.Add(time.Hour))
	if _, err := s.UpdateRFIRequest(ctx, r.ID, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
		r.Status = onboarding.RFIExpired
		return onboarding.Changes{Log: []onboarding.Activity{more}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	fixture.WantChained(t, s, r.ID, append(rlog, more))

	// A subject with no log: no head, no entries; a record created
	// without entries has no head either.
	quiet := fixture.StoredApp(t, s, "quiet", 2, onboarding.StatusCreated) // the verifier would report it
	for _, id := range []string{uuid.NewString(), quiet.ID} {
		if head, log := fixture.ReadLog(t, s, id); head != nil || log != nil {
			t.Errorf("subject without entries: head %+v, log %+v", head, log)
		}
	}
	wantNotFound(t, "ActivityLog(malformed id)", s.ActivityLog(ctx, "nope", nil))
	// walk's error is ActivityLog's.
	errWalk := errors.New("walk failed")
	if err := s.ActivityLog(ctx, app.ID, func(*onboarding.ActivityHead, iter.Seq2[*onboarding.LoggedActivity, error]) error { return errWalk }); !errors.Is(err, errWalk) {
		t.Errorf("ActivityLog with a failing walk = %v, want %v", err, errWalk)
	}
	report := verifyChains(t, s, "acme")
	if want := (onboarding.LogReport{Applications: 1, RFIRequests: 1, Entries: len(log) + 2}); report != want {
		t.Errorf("verifier report = %+v, want %+v", report, want)
	}
}

// testConcurrentAppendsKeepOneChain appends to one log from many
// goroutines, on two stores of the same data where the backend has two:
// every entry is in the chain once, each append's entries together.
func testConcurrentAppendsKeepOneChain(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}}); err != nil {
		t.Fatal(err)
	}
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionRFICreated, t0)}}); err != nil {
		t.Fatal(err)
	}
	// Every other writer uses a second store on the same data, where the
	// backend has one.
	stores := []onboarding.Store{s}
	if s2 := open(t, Options{Beside: s}); s2 != nil {
		stores = append(stores, s2)
	}
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		w := stores[i%len(stores)]
		// Two entries an append: they stay together, in order.
		entries := func() []onboarding.Activity {
			return []onboarding.Activity{fixture.Act(fmt.Sprintf("test.%02d", i), t0), fixture.Act(fmt.Sprintf("test.%02d.second", i), t0)}
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := w.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
				return onboarding.Changes{Log: entries()}, nil
			}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := w.UpdateRFIRequest(ctx, r.ID, func(*onboarding.RFIRequest) (onboarding.Changes, error) {
				return onboarding.Changes{Log: entries()}, nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, id := range []string{app.ID, r.ID} {
		head, log := fixture.ReadLog(t, s, id)
		if len(log) != 2*n+1 {
			t.Fatalf("%d entries, want %d", len(log), 2*n+1)
		}
		prev := onboarding.ActivityChainStart(id)
		seen := map[string]bool{}
		paired := 0
		for i, e := range log {
			if e.Prev != prev || onboarding.ActivityHash(prev, &e) != e.Hash {
				t.Fatalf("entry %d (%s) is not chained after the one before it", i, e.Action)
			}
			if i > 0 && e.Seq.Compare(log[i-1].Seq) <= 0 {
				t.Fatalf("entry %d: Seq %s not after %s", i, e.Seq, log[i-1].Seq)
			}
			if i > 0 && e.Action == log[i-1].Action+".second" {
				paired++
			}
			if seen[e.Action] {
				t.Errorf("%s logged twice", e.Action)
			}
			seen[e.Action] = true
			prev = e.Hash
		}
		if paired != n {
			t.Errorf("%d appends' entries stand together, want all %d", paired, n)
		}
		if head == nil || head.Hash != prev {
			t.Errorf("head = %+v, want hash %s", head, prev)
		}
	}
	verifyChains(t, s, "acme")
}

// testActivityAfter pages through a log: each page follows the last entry
// of the one before, and more says whether entries remain.
func testActivityAfter(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	var want []onboarding.Activity
	for i := range 7 {
		want = append(want, fixture.Act(fmt.Sprintf("test.%d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: want}); err != nil {
		t.Fatal(err)
	}
	other := fixture.App("acme", 2, onboarding.StatusCreated)
	if err := s.CreateApplication(ctx, other, onboarding.Changes{Log: want[:1]}); err != nil {
		t.Fatal(err)
	}
	_, all := fixture.ReadLog(t, s, app.ID)
	for _, limit := range []int{1, 3, 7, 50} {
		got := walkPages(t, fmt.Sprintf("limit %d", limit), limit, func(e onboarding.LoggedActivity) ulid.ULID { return e.Seq },
			func(after ulid.ULID) ([]onboarding.LoggedActivity, bool, error) {
				return s.ActivityAfter(ctx, app.ID, after, limit)
			})
		if diff := cmp.Diff(all, got); diff != "" {
			t.Errorf("limit %d: pages (-want +got):\n%s", limit, diff)
		}
	}
	if page, more, err := s.ActivityAfter(ctx, app.ID, all[6].Seq, 10); err != nil || len(page) != 0 || more {
		t.Errorf("after the last entry: %v, %v, %v; want nothing", page, more, err)
	}
	if page, more, err := s.ActivityAfter(ctx, uuid.NewString(), ulid.ULID{}, 10); err != nil || len(page) != 0 || more {
		t.Errorf("a subject with no log: %v, %v, %v; want nothing", page, more, err)
	}
	_, _, err := s.ActivityAfter(ctx, "nope", ulid.ULID{}, 10)
	wantNotFound(t, "ActivityAfter(malformed id)", err)
}

// testActivityLogSnapshot: ActivityLog reads one snapshot: entries
// appended while walk reads are not in what it sees, and the head it was
// given is the last entry it walks.
func testActivityLogSnapshot(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0), fixture.Act(onboarding.ActionInviteSent, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	var walked []onboarding.LoggedActivity
	err := s.ActivityLog(ctx, app.ID, func(head *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
		// Another writer appends while the walk is under way; it may have
		// to wait for the walk on some backends, so it runs beside it.
		go func() {
			_, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
				return onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionOpened, t0)}}, nil
			})
			appended <- err
		}()
		// Wait for the append to commit before reading; a backend whose
		// writers wait for the walk instead is given up on after a while,
		// which proves nothing either way.
		select {
		case err := <-appended:
			appended <- err
		case <-time.After(10 * time.Second):
			t.Log("the append waits for the walk")
		}
		for e, err := range entries {
			if err != nil {
				return err
			}
			walked = append(walked, *e)
		}
		if head == nil || len(walked) == 0 || head.Seq != walked[len(walked)-1].Seq || head.Hash != walked[len(walked)-1].Hash {
			t.Errorf("head %+v is not the last entry walked", head)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if len(walked) != len(log) {
		t.Errorf("walked %d entries, want the %d of the snapshot", len(walked), len(log))
	}
	fixture.WantChained(t, s, app.ID, append(log, fixture.Act(onboarding.ActionOpened, t0)))
}
