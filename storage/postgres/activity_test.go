package postgres

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestActivityLogIsOneSnapshot: entries appended while a walk is under way
// (from another connection) are not in it, and the head it got is the one
// of the entries it walks.
func TestActivityLogIsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}}); err != nil {
		t.Fatal(err)
	}
	var walked []onboarding.LoggedActivity
	var head *onboarding.ActivityHead
	err := s.ActivityLog(ctx, app.ID, func(h *onboarding.ActivityHead, entries iter.Seq2[*onboarding.LoggedActivity, error]) error {
		head = h
		if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
			return onboarding.Changes{Log: []onboarding.Activity{fixture.Act("test.meanwhile", t0)}}, nil
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
	if _, log := fixture.ReadLog(t, s, app.ID); len(log) != 2 {
		t.Errorf("%d entries after the walk, want 2", len(log))
	}
}

// TestTamperWithActivity: the test seam stores exactly what edit returns,
// and the next update chains after the head it stored.
func TestTamperWithActivity(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	log := []onboarding.Activity{fixture.Act("test.0", t0), fixture.Act("test.1", t0.Add(time.Second)), fixture.Act("test.2", t0.Add(2*time.Second))}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{app.ID, r.ID} {
		head, entries := fixture.ReadLog(t, s, id)
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
		gotHead, got := fixture.ReadLog(t, s, id)
		if !cmp.Equal(newHead, gotHead) || !cmp.Equal(edited, got) {
			t.Errorf("%s after tampering: (-want +got)\n%s%s", id, cmp.Diff(newHead, gotHead), cmp.Diff(edited, got))
		}
		if err := s.TamperWithActivity(ctx, id, func(*onboarding.ActivityHead, []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity) {
			return nil, got
		}); err != nil {
			t.Fatal(err)
		}
		if h, _ := fixture.ReadLog(t, s, id); h != nil {
			t.Errorf("%s: head %+v after tampering it away", id, h)
		}
	}
	// The next append chains after the head as stored: none, here.
	if _, err := s.UpdateApplication(ctx, app.ID, func(*onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Log: []onboarding.Activity{fixture.Act("test.3", t0.Add(3*time.Second))}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, got := fixture.ReadLog(t, s, app.ID)
	if last := got[len(got)-1]; last.Prev != onboarding.ActivityChainStart(app.ID) {
		t.Errorf("the append after the tampering chained after %q, want the log's start", last.Prev)
	}
	if err := s.TamperWithActivity(ctx, uuid.NewString(), nil); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("TamperWithActivity(unknown) = %v, want ErrNotFound", err)
	}
}

// TestActivity: Activity, the backend's reader of a whole log, reads what
// ActivityLog does. (The log's contract is the Store suite's.)
func TestActivity(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0), fixture.Act(onboarding.ActionInviteSent, t0.Add(time.Second))}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: log[:1]}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{app.ID, r.ID, uuid.NewString()} {
		_, entries := fixture.ReadLog(t, s, id)
		var want []onboarding.Activity
		for _, e := range entries {
			want = append(want, e.Activity)
		}
		if got, err := s.Activity(ctx, id); err != nil || !cmp.Equal(want, got) {
			t.Errorf("Activity(%s) = %+v, %v; want %+v", id, got, err, want)
		}
	}
	if _, err := s.Activity(ctx, "nope"); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Activity(malformed id) = %v, want ErrNotFound", err)
	}
}
