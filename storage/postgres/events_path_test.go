package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// testEvent builds an event of org about subject.
func testEvent(t onboarding.EventType, org, subject string) *onboarding.Event {
	return fixture.NewEvent("evt_"+ulid.Make().String(), t, org, subject, t0)
}

// TestWritesWithEvents: creates and updates that emit events take the
// transaction that writes them (the record, entries and outcome first,
// then the events, then the commit), through every path: a create, an
// update from the cache, one whose cached version is stale, one with no
// cache, an RFI update; and a refused create leaves nothing.
func TestWritesWithEvents(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t, Options{})
	other := openOn(t, url, Options{CacheBytes: -1})
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	log := []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Log: log, Events: []*onboarding.Event{testEvent(onboarding.EventApplicationCreated, "acme", app.ID)}}); err != nil {
		t.Fatal(err)
	}
	status := []onboarding.Status{onboarding.StatusSent, onboarding.StatusInProgress, onboarding.StatusSubmitted, onboarding.StatusReview}
	for i, st := range []struct {
		name  string
		store *Store
	}{{"from the cache", s}, {"without a cache", other}, {"from a stale cache", s}, {"from the cache again", s}} {
		entry := fixture.Act("test."+string(status[i]), t0.Add(time.Duration(i)*time.Second))
		got, err := st.store.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = status[i]
			return onboarding.Changes{Log: []onboarding.Activity{entry}, Events: []*onboarding.Event{testEvent(onboarding.EventApplicationSent, "acme", app.ID)},
				Idempotent: &onboarding.IdempotentOutcome{ClientID: "c", Key: st.name, ID: app.ID}}, nil
		})
		if err != nil || got.Status != status[i] {
			t.Fatalf("%s: %v, %v", st.name, got, err)
		}
		log = append(log, entry)
		fixture.WantChained(t, s, app.ID, log)
		if _, err := s.SavedResponse(ctx, "c", st.name); err != nil {
			t.Errorf("%s: outcome %v", st.name, err)
		}
	}
	before := everything(t, s)
	dup := fixture.App("acme", 2, onboarding.StatusCreated)
	dup.Participants[0].LinkSlug = app.Participants[0].LinkSlug
	if err := s.CreateApplication(ctx, dup, onboarding.Changes{Log: log[:1], Events: []*onboarding.Event{testEvent(onboarding.EventApplicationCreated, "acme", dup.ID)}}); !errors.Is(err, errDuplicate) {
		t.Errorf("create onto a slug taken = %v, want errDuplicate", err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		return onboarding.Changes{Log: log[:1], Events: []*onboarding.Event{testEvent(onboarding.EventApplicationSent, "acme", app.ID)}}, boom
	}); err != boom {
		t.Errorf("failing change = %v, want boom", err)
	}
	if diff := cmp.Diff(before, everything(t, s)); diff != "" {
		t.Errorf("refused writes wrote (-before +after):\n%s", diff)
	}

	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	rlog := []onboarding.Activity{fixture.Act(onboarding.ActionRFICreated, t0)}
	if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{Log: rlog, Events: []*onboarding.Event{testEvent(onboarding.EventRFIRequestCreated, "acme", r.ID)}}); err != nil {
		t.Fatal(err)
	}
	done := fixture.Act(onboarding.ActionRFICompleted, t0.Add(time.Minute))
	if _, err := s.UpdateRFIRequest(ctx, r.ID, func(x *onboarding.RFIRequest) (onboarding.Changes, error) {
		x.Status = onboarding.RFICompleted
		return onboarding.Changes{Log: []onboarding.Activity{done}, Events: []*onboarding.Event{testEvent(onboarding.EventRFIRequestCompleted, "acme", r.ID)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	fixture.WantChained(t, s, r.ID, append(rlog, done))
	if q := rfiQueue(t, s); len(q) != 0 {
		t.Errorf("queue after completion = %v", q)
	}
}
