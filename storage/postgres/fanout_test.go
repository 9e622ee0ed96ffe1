package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// queuedFor returns the endpoints event id is queued for, in id order.
func (h *hookEnv) queuedFor(id string) []string {
	h.T.Helper()
	return rows(h.T, h.S, `SELECT endpoint_id FROM deliveries WHERE event_id = $1 ORDER BY endpoint_id`, id)
}

// TestFanOutFollowsOtherInstances: a Store fans events out from the
// endpoints it cached, and each change another instance makes to them
// (one created, its subscriptions changed, one disabled, one deleted)
// is seen by the next write: it queues what reading the endpoints in
// its transaction queues, and the cache then holds the new endpoints.
func TestFanOutFollowsOtherInstances(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	other := h.open()
	var ep1, ep2 *onboarding.Endpoint
	newEndpoint := func(types ...onboarding.EventType) *onboarding.Endpoint {
		ep := &onboarding.Endpoint{ID: "we_" + h.ULID(h.Now), OrgID: "acme", URL: "https://hooks.example.com/", Events: types,
			Enabled: true, CreatedAt: h.Now}
		if err := other.CreateEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
		return ep
	}
	update := func(ep *onboarding.Endpoint, change func(*onboarding.Endpoint)) {
		if _, err := other.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error { change(e); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(eps ...*onboarding.Endpoint) []string {
		out := []string{}
		for _, ep := range eps {
			out = append(out, ep.ID)
		}
		return out
	}
	steps := []struct {
		name   string
		change func()
		typ    onboarding.EventType
		want   func() []string
	}{
		{"no endpoint", func() {}, onboarding.EventApplicationCreated, func() []string { return ids() }},
		{"one created", func() { ep1 = newEndpoint() }, onboarding.EventApplicationCreated, func() []string { return ids(ep1) }},
		{"unchanged", func() {}, onboarding.EventApplicationSent, func() []string { return ids(ep1) }},
		{"subscriptions changed", func() {
			update(ep1, func(e *onboarding.Endpoint) { e.Events = []onboarding.EventType{onboarding.EventApplicationSubmitted} })
		}, onboarding.EventApplicationCreated, func() []string { return ids() }},
		{"a second created", func() { ep2 = newEndpoint(onboarding.EventApplicationSubmitted) }, onboarding.EventApplicationSubmitted,
			func() []string { return ids(ep1, ep2) }},
		{"one disabled", func() { update(ep2, func(e *onboarding.Endpoint) { e.Enabled = false }) }, onboarding.EventApplicationSubmitted,
			func() []string { return ids(ep1) }},
		{"one deleted", func() {
			if err := other.DeleteEndpoint(ctx, ep1.ID); err != nil {
				t.Fatal(err)
			}
		}, onboarding.EventApplicationSubmitted, func() []string { return ids() }},
		{"one enabled again", func() { update(ep2, func(e *onboarding.Endpoint) { e.Enabled = true }) }, onboarding.EventApplicationSubmitted,
			func() []string { return ids(ep2) }},
	}
	for _, st := range steps {
		st.change()
		e := h.Event(st.typ, "acme", "", h.Now)
		h.Add(e)
		if diff := cmp.Diff(st.want(), h.queuedFor(e.ID)); diff != "" {
			t.Errorf("%s: queued for (-want +got):\n%s", st.name, diff)
		}
		cached, ok := h.S.endpoints.get("acme")
		if !ok {
			t.Fatalf("%s: the organization's endpoints are not cached", st.name)
		}
		var got []string
		for _, ep := range cached.eps {
			if ep.Enabled {
				got = append(got, ep.ID)
			}
		}
		all, err := other.Endpoints(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, ep := range all {
			if ep.Enabled {
				want = append(want, ep.ID)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: cached endpoints (-want +got):\n%s", st.name, diff)
		}
	}
	h.queued() // one head per queue
}

// TestFanOutThroughEveryWritePath: a create, an update from the
// application cache and one that locks the row (a Store without that
// cache), each writing twice (the first reads the endpoints, the second
// fans out from the cache), queue their events for the endpoint that
// wants them, two events of one change in event order behind one head;
// after another instance disabled the endpoint, for nobody.
func TestFanOutThroughEveryWritePath(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	other := h.open()
	locking := openOn(t, h.url, Options{CacheBytes: -1})
	ep := h.Endpoint("acme")
	app := fixture.App("acme", 1, onboarding.StatusCreated)
	writes := []struct {
		name  string
		write func(events ...*onboarding.Event) error
	}{
		{"create", func(events ...*onboarding.Event) error {
			a := fixture.App("acme", 2, onboarding.StatusCreated)
			a.Participants[0].LinkSlug = h.ULID(h.Now)
			for _, e := range events {
				e.Subject = a.ID
			}
			return h.S.CreateApplication(ctx, a, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}, Events: events})
		}},
		{"update from the cache", func(events ...*onboarding.Event) error {
			_, err := h.S.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				a.Status = onboarding.StatusSent
				return onboarding.Changes{Events: events}, nil
			})
			return err
		}},
		{"update under the row lock", func(events ...*onboarding.Event) error {
			_, err := locking.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				a.Status = onboarding.StatusInProgress
				return onboarding.Changes{Events: events}, nil
			})
			return err
		}},
	}
	if err := h.S.CreateApplication(ctx, app, onboarding.Changes{Log: []onboarding.Activity{fixture.Act(onboarding.ActionCreated, t0)}}); err != nil {
		t.Fatal(err)
	}
	for _, disabled := range []bool{false, true} {
		if disabled {
			if _, err := other.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error { e.Enabled = false; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range writes {
			for round := range 2 {
				first := h.Event(onboarding.EventApplicationSent, "acme", app.ID, h.Now)
				second := h.Event(onboarding.EventApplicationSent, "acme", app.ID, h.Now)
				if err := w.write(first, second); err != nil {
					t.Fatalf("%s: %v", w.name, err)
				}
				want := []string{ep.ID}
				if disabled {
					want = []string{}
				}
				queued := h.queued()
				for _, e := range []*onboarding.Event{first, second} {
					if diff := cmp.Diff(want, h.queuedFor(e.ID)); diff != "" {
						t.Errorf("%s, disabled %v, round %d: queued for (-want +got):\n%s", w.name, disabled, round, diff)
					}
				}
				if q, ok := queued[fixture.Pair(ep.ID, second.ID)]; ok && q.Head {
					t.Errorf("%s, round %d: the second event heads its queue", w.name, round)
				}
			}
		}
	}
}

// TestQueueOnePlan: the plan PostgreSQL keeps for queueOneSQL, made on an
// empty deliveries table as it is when an instance starts on a new
// database, finds the queue's head by endpoint and subject, not by
// reading every head of the endpoint.
func TestQueueOnePlan(t *testing.T) {
	s, _ := openTest(t, Options{})
	plan := genericPlan(t, s, `queue_one(text, text, text, text, timestamptz)`, queueOneSQL,
		`queue_one('we_1', 'subject', 'evt_1', 'application.created', now())`)
	if !strings.Contains(plan, "Index Cond: ((endpoint_id = $1) AND (subject = $2))") {
		t.Errorf("the generic plan does not look the head up by endpoint and subject:\n%s", plan)
	}
}
