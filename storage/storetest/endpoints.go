package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

var endpointCases = []suiteCase{
	{"CreateReadUpdate", testEndpoints},
	{"FanOut", testFanOut},
	{"DisablingDropsTheQueue", testDisablingDropsTheQueue},
	{"EnablingResumesNothing", testEnablingResumesNothing},
	{"DisablingDropsClaimed", testDisablingDropsClaimed},
	{"StoppingUnderLoad", testStoppingAnEndpointUnderLoad},
	{"ClaimMeetingADisabling", testClaimMeetingADisabling},
	{"LeftoversOfADisabledEndpoint", testLeftoversOfADisabledEndpoint},
	{"Delete", testDeleteEndpoint},
}

// testEndpoints: endpoints read back as stored, list by organization
// oldest first, update atomically; a duplicate id is refused, a change of
// organization too, a failing change writes nothing, an unknown id is
// ErrNotFound.
func testEndpoints(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	a1, other, a2 := h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme2"), h.Endpoint("acme")
	if err := h.S.CreateEndpoint(ctx, a1); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateEndpoint(duplicate) = %v, want an error", err)
	}
	tests := []struct {
		org  string
		want []*onboarding.Endpoint
	}{
		{"acme", []*onboarding.Endpoint{a1, a2}},
		{"acme2", []*onboarding.Endpoint{other}},
		{"acm", nil},
		{"", []*onboarding.Endpoint{a1, other, a2}},
	}
	for _, tt := range tests {
		got, err := h.S.Endpoints(ctx, tt.org)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Endpoints(%q), oldest first (-want +got):\n%s", tt.org, diff)
		}
	}
	if got, err := h.S.Endpoint(ctx, a1.ID); err != nil || !cmp.Equal(a1, got) {
		t.Errorf("Endpoint (-want +got):\n%s %v", cmp.Diff(a1, got), err)
	}
	got, err := h.S.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.Description = "CRM"; return nil })
	if err != nil || got.Description != "CRM" {
		t.Fatalf("UpdateEndpoint = %+v, %v", got, err)
	}
	if stored, err := h.S.Endpoint(ctx, a1.ID); err != nil || !cmp.Equal(got, stored) {
		t.Errorf("Endpoint after update = %+v, %v; want %+v", stored, err, got)
	}
	if _, err := h.S.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.OrgID = "acme2"; return nil }); err == nil {
		t.Errorf("UpdateEndpoint(moving it to another organization) succeeded")
	}
	if _, err := h.S.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.Description = "lost"; return errBoom }); !errors.Is(err, errBoom) {
		t.Errorf("UpdateEndpoint(failing change) = %v, want boom", err)
	}
	if stored, _ := h.S.Endpoint(ctx, a1.ID); stored.Description != "CRM" || stored.OrgID != "acme" {
		t.Errorf("endpoint after refused changes = %+v", stored)
	}
	_, err = h.S.UpdateEndpoint(ctx, "we_nope", func(*onboarding.Endpoint) error { return nil })
	wantNotFound(t, "UpdateEndpoint(unknown)", err)
	_, err = h.S.Endpoint(ctx, "we_nope")
	wantNotFound(t, "Endpoint(unknown)", err)
}

// testFanOut checks which endpoints an event is queued for: those of its
// organization that are enabled and want its type, or the one a
// webhook.test is addressed to.
func testFanOut(t *testing.T, open Opener) {
	h := newHooks(t, open)
	all, sentOnly, disabled, other := h.Endpoint("acme"), h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme"), h.Endpoint("acme2")
	h.Disable(disabled)
	test := h.Event(onboarding.EventWebhookTest, "acme", "", h.Now)
	test.Endpoint = sentOnly.ID
	tests := []struct {
		name  string
		event *onboarding.Event
		want  []*onboarding.Endpoint
	}{
		{"every endpoint wanting the type", h.Event(onboarding.EventApplicationCreated, "acme", "app-1", h.Now), []*onboarding.Endpoint{all}},
		{"a filter naming the type", h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now), []*onboarding.Endpoint{all, sentOnly}},
		{"a test addressed to one endpoint", test, []*onboarding.Endpoint{sentOnly}},
		{"another organization", h.Event(onboarding.EventApplicationSent, "acme2", "app-2", h.Now), []*onboarding.Endpoint{other}},
		{"an organization without endpoints", h.Event(onboarding.EventApplicationSent, "acm", "app-3", h.Now), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.Add(tt.event)
			fixture.CheckQueues(t, h.S)
			want := []string{}
			for _, ep := range tt.want {
				want = append(want, fixture.Pair(ep.ID, tt.event.ID))
			}
			if n := h.Queued(); n != len(want) {
				t.Errorf("QueuedDeliveries = %d, want %d", n, len(want))
			}
			claimed, _ := h.Claim("w1", tt.event.At, 10)
			if diff := cmp.Diff(sorted(want...), fixture.Pairs(claimed)); diff != "" {
				t.Errorf("queued for (-want +got):\n%s", diff)
			}
			for _, d := range claimed {
				if d.Subject != tt.event.Subject || d.Attempts != 0 || !d.NextAt.Equal(tt.event.At) || d.Event == nil || d.Event.Type != tt.event.Type ||
					d.Endpoint == nil || d.Endpoint.ID != d.EndpointID {
					t.Errorf("claimed %+v for event %+v", d, tt.event)
				}
			}
			h.FinishAll(claimed, tt.event.At)
		})
	}
}

// testDisablingDropsTheQueue checks that an endpoint disabled by the
// operator or by a delivery's result loses its queued deliveries, each
// with a log line, and that other endpoints keep theirs.
func testDisablingDropsTheQueue(t *testing.T, open Opener) {
	tests := []struct {
		name    string
		perSubj int // events per subject
		subj    int // subjects
		finish  bool
	}{
		{"by the operator", 2, 2, false},
		{"by a delivery's result", 2, 2, true},
		{"many subjects", 3, 200, false}, // more than one of Badger's drop batches
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHooks(t, open)
			ep, keep := h.Endpoint("acme"), h.Endpoint("acme2")
			var events []*onboarding.Event
			for s := 0; s < tt.subj; s++ {
				for i := 0; i < tt.perSubj; i++ {
					events = append(events, h.Event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", s), h.At(time.Duration(i)*time.Millisecond)))
				}
			}
			kept := h.Event(onboarding.EventApplicationSent, "acme2", "app-x", h.Now)
			events = append(events, kept)
			h.Add(events...)
			var want []onboarding.DeliveryAttempt
			reason, dropAt := "disabled by the operator", h.Now
			if tt.finish {
				reason, dropAt = "410 Gone", h.At(time.Second)
				claimed, _ := h.Claim("w1", h.Now, 10)
				var d *onboarding.Delivery
				for _, c := range claimed {
					if c.EndpointID == ep.ID && c.EventID == events[0].ID {
						d = c
					}
				}
				if d == nil {
					t.Fatalf("claimed %v, want the first event's delivery among them", fixture.Pairs(claimed))
				}
				h.Now = dropAt // the store's clock, for the lines it writes
				if err := h.Finish(d, dropAt, onboarding.DeliveryResult{Done: true, Endpoint: func(e *onboarding.Endpoint) {
					e.Enabled, e.DisabledReason = false, reason
				}}); err != nil {
					t.Fatal(err)
				}
				events = events[1:]
				want = append(want, onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: ep.ID, OrgID: "acme",
					Attempt: 1, At: dropAt, StatusCode: 200, Success: true})
			} else if _, err := h.S.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error {
				e.Enabled, e.DisabledReason = false, reason
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			fixture.CheckQueues(t, h.S)
			for _, e := range events[:len(events)-1] {
				want = append(want, onboarding.DeliveryAttempt{EventID: e.ID, EventType: e.Type, EndpointID: ep.ID, OrgID: "acme",
					At: dropAt, Error: "not delivered: the endpoint was disabled (" + reason + ")"})
			}
			if n := h.Queued(); n != 1 {
				t.Errorf("QueuedDeliveries after disabling = %d, want the other endpoint's one", n)
			}
			claimed, _ := h.Claim("w2", h.At(time.Hour), 1000)
			if diff := cmp.Diff([]string{fixture.Pair(keep.ID, kept.ID)}, fixture.Pairs(claimed)); diff != "" {
				t.Errorf("claimable after disabling (-want +got):\n%s", diff)
			}
			lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 10 * len(want)})
			if err != nil {
				t.Fatal(err)
			}
			byEvent := func(a, b onboarding.DeliveryAttempt) int {
				return strings.Compare(a.EventID+a.Error, b.EventID+b.Error)
			}
			slices.SortFunc(want, byEvent)
			slices.SortFunc(lines, byEvent)
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			stored, _ := h.S.Endpoint(ctx, ep.ID)
			if stored.Enabled || stored.DisabledReason != reason {
				t.Errorf("endpoint after disabling = %+v", stored)
			}
			// Nothing is queued for it while it is disabled.
			h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-later", h.Now))
			if n := h.Queued(); n != 1 {
				t.Errorf("QueuedDeliveries after an event for the disabled endpoint = %d, want the other endpoint's 1", n)
			}
		})
	}
}

// testEnablingResumesNothing: enabling an endpoint again never resumes a
// delivery disabling dropped; events after it are queued again.
func testEnablingResumesNothing(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep := h.Endpoint("acme")
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now), h.Event(onboarding.EventApplicationSent, "acme", "app-2", h.Now))
	h.Disable(ep)
	if _, err := h.S.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error { e.Enabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if n := h.Queued(); n != 0 {
		t.Errorf("QueuedDeliveries after enabling again = %d, want 0", n)
	}
	if claimed, next := h.Claim("w1", h.At(time.Hour), 10); len(claimed) != 0 || !next.IsZero() {
		t.Errorf("claimed %v, next %v after enabling again; want none", fixture.Pairs(claimed), next)
	}
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.At(time.Second))
	h.Add(e)
	claimed, _ := h.Claim("w1", h.At(time.Hour), 10)
	if diff := cmp.Diff([]string{fixture.Pair(ep.ID, e.ID)}, fixture.Pairs(claimed)); diff != "" {
		t.Errorf("claimed after enabling (-want +got):\n%s", diff)
	}
}

// testDeleteEndpoint: a deleted endpoint is gone with its queue, without
// log lines; the other endpoints keep theirs.
func testDeleteEndpoint(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	ep, keep := h.Endpoint("acme"), h.Endpoint("acme")
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	opened := h.Event(onboarding.EventApplicationOpened, "acme", "app-1", h.Now)
	h.Add(e, opened)
	if err := h.S.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	fixture.CheckQueues(t, h.S)
	if n := h.Queued(); n != 2 {
		t.Errorf("QueuedDeliveries = %d, want the other endpoint's 2", n)
	}
	if lines, _ := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{}); len(lines) != 0 {
		t.Errorf("deleting logged %+v", lines)
	}
	_, err := h.S.Endpoint(ctx, ep.ID)
	wantNotFound(t, "Endpoint(deleted)", err)
	if got, _ := h.S.Endpoints(ctx, "acme"); len(got) != 1 || got[0].ID != keep.ID {
		t.Errorf("Endpoints after delete = %+v", got)
	}
	wantNotFound(t, "DeleteEndpoint(deleted)", h.S.DeleteEndpoint(ctx, ep.ID))
	_, err = h.S.Redeliver(ctx, e.ID, ep.ID, h.Now)
	wantNotFound(t, "Redeliver to a deleted endpoint", err)
	for _, want := range []*onboarding.Event{e, opened} {
		claimed, _ := h.Claim("w1", h.Now, 10)
		if diff := cmp.Diff([]string{fixture.Pair(keep.ID, want.ID)}, fixture.Pairs(claimed)); diff != "" {
			t.Errorf("claimed (-want +got):\n%s", diff)
		}
		h.FinishAll(claimed, h.Now)
	}
	h.Add(h.Event(onboarding.EventApplicationSent, "acme", "app-2", h.Now))
	if n := h.Queued(); n != 1 {
		t.Errorf("QueuedDeliveries after an event = %d, want the other endpoint's 1", n)
	}
}

// testDisablingDropsClaimed disables and deletes endpoints while their
// deliveries are claimed: the claims are lost (their attempts still
// logged), nothing of theirs is claimed again, and the disabling logs the
// drop of the claimed delivery too.
func testDisablingDropsClaimed(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	off, gone := h.Endpoint("acme", onboarding.EventApplicationSent), h.Endpoint("acme", onboarding.EventApplicationCreated)
	sent := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	created := h.Event(onboarding.EventApplicationCreated, "acme", "app-2", h.Now)
	h.Add(sent, created)
	claimed, _ := h.Claim("w1", h.Now, 10)
	if diff := cmp.Diff(sorted(fixture.Pair(off.ID, sent.ID), fixture.Pair(gone.ID, created.ID)), fixture.Pairs(claimed)); diff != "" {
		t.Fatalf("claimed (-want +got):\n%s", diff)
	}
	h.Disable(off)
	if err := h.S.DeleteEndpoint(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	fixture.CheckQueues(t, h.S)
	if n := h.Queued(); n != 0 {
		t.Errorf("QueuedDeliveries = %d, want 0", n)
	}
	for _, d := range claimed {
		if err := h.Finish(d, h.At(time.Second), onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
			t.Errorf("finish of a claim whose endpoint went = %v, want ErrLeaseLost", err)
		}
	}
	if got, next := h.Claim("w2", h.At(time.Hour), 10); len(got) != 0 || !next.IsZero() {
		t.Errorf("claim after = %v, next %v; want none", fixture.Pairs(got), next)
	}
	lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: off.ID})
	if err != nil {
		t.Fatal(err)
	}
	var drops, attempts int
	for _, l := range lines {
		if l.Attempt == 0 {
			drops++
		} else {
			attempts++
		}
	}
	if drops != 1 || attempts != 1 {
		t.Errorf("log of the disabled endpoint = %+v, want the drop and the attempt", lines)
	}
}

// testStoppingAnEndpointUnderLoad disables or deletes an endpoint with a
// backlog of some thousand deliveries while producers (on two stores
// of the same data, where the backend has two) queue events for it and a
// worker claims and finishes deliveries; the call is made while the load
// runs, and the load goes on after it returns. The call succeeds; no claim
// that starts after it returned gets a delivery of the endpoint; every
// event queued before the call began was delivered to it or (disabling)
// dropped with a log line, not both; and nothing of its queue is left.
func testStoppingAnEndpointUnderLoad(t *testing.T, open Opener) {
	tests := []struct {
		name   string
		stop   func(s onboarding.Store, id string) error
		logged bool // dropped deliveries get a log line
	}{
		{"disable", func(s onboarding.Store, id string) error {
			_, err := s.UpdateEndpoint(context.Background(), id, func(ep *onboarding.Endpoint) error {
				ep.Enabled, ep.DisabledReason = false, onboarding.DisabledByOperator
				return nil
			})
			return err
		}, true},
		{"delete", func(s onboarding.Store, id string) error { return s.DeleteEndpoint(context.Background(), id) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHooks(t, open)
			stores := []onboarding.Store{h.S}
			if s2 := open(t, Options{Beside: h.S, Now: h.Clock}); s2 != nil {
				stores = append(stores, s2)
			}
			ep := h.Endpoint("acme")
			h.Endpoint("acme") // another endpoint, whose deliveries go on
			var mu sync.Mutex  // guards h.event's entropy and what the workers saw
			event := func(subject string) *onboarding.Event {
				mu.Lock()
				defer mu.Unlock()
				return h.Event(onboarding.EventApplicationSent, "acme", subject, h.Now)
			}
			var before []string // events committed before the call began
			for i := 0; i < 1100; i++ {
				e := event(fmt.Sprintf("app-%d", i%40))
				h.Add(e)
				before = append(before, e.ID)
			}

			var stopping, stopped atomic.Bool
			quit := make(chan struct{})
			added, claimedBefore, claimedAfter := make(chan struct{}, 1024), make(chan struct{}, 1024), make(chan struct{}, 1024)
			tick := func(c chan struct{}) {
				select {
				case c <- struct{}{}:
				default:
				}
			}
			errs, failed := make(chan error, 16), make(chan struct{})
			var failing sync.Once
			fail := func(err error) {
				failing.Do(func() { close(failed) })
				select {
				case errs <- err:
				default: // enough said
				}
			}
			// await takes a tick from c, unless a goroutine failed.
			await := func(c chan struct{}) bool {
				select {
				case <-c:
					return true
				case <-failed:
					return false
				}
			}
			delivered := map[string]bool{} // events delivered to ep
			var wg sync.WaitGroup
			for p := 0; p < 3; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := stores[p%len(stores)]
					for i := 0; ; i++ {
						select {
						case <-quit:
							return
						default:
						}
						e := event(fmt.Sprintf("app-%d", (p*7+i)%40))
						if err := s.AddEvent(ctx, e); err != nil {
							fail(fmt.Errorf("AddEvent: %w", err))
							return
						}
						if !stopping.Load() {
							mu.Lock()
							before = append(before, e.ID)
							mu.Unlock()
						}
						tick(added)
					}
				}()
			}
			wg.Add(1)
			go func() { // one worker, on the other store where there are two
				defer wg.Done()
				s := stores[len(stores)-1]
				for {
					select {
					case <-quit:
						return
					default:
					}
					after := stopped.Load()
					claimed, _, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w", Now: h.Now, Lease: time.Hour, Limit: 8})
					if errors.Is(err, onboarding.ErrWriteConflict) {
						continue
					}
					if err != nil {
						fail(fmt.Errorf("ClaimDeliveries: %w", err))
						return
					}
					for _, d := range claimed {
						if after && d.EndpointID == ep.ID {
							fail(fmt.Errorf("a claim begun after the call returned got %s", d.EventID))
						}
						r := onboarding.DeliveryResult{Done: true, Attempt: onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type,
							EndpointID: d.EndpointID, OrgID: "acme", Attempt: 1, At: h.Now, StatusCode: 200, Success: true}}
						lost, err := s.FinishDeliveries(ctx, []onboarding.FinishedDelivery{{Delivery: d, Result: r}})
						if err != nil {
							fail(fmt.Errorf("FinishDeliveries: %w", err))
							return
						}
						if !lost[0] && d.EndpointID == ep.ID {
							mu.Lock()
							delivered[d.EventID] = true
							mu.Unlock()
						}
					}
					if after {
						tick(claimedAfter)
					} else if len(claimed) > 0 {
						tick(claimedBefore)
					}
				}
			}()
			for i := 0; i < 20; i++ {
				if !await(added) || !await(claimedBefore) {
					break
				}
			}
			stopping.Store(true)
			err := tt.stop(h.S, ep.ID)
			stopped.Store(true)
			for i := 0; i < 20 && err == nil; i++ {
				if !await(added) || !await(claimedAfter) {
					break
				}
			}
			close(quit)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if err != nil {
				t.Fatalf("%s under load: %v", tt.name, err)
			}

			fixture.CheckQueues(t, h.S)
			late, _ := h.Claim("late", h.At(48*time.Hour), 100000)
			for _, d := range late {
				if d.EndpointID == ep.ID {
					t.Errorf("claimable after the call: %s", d.EventID)
				}
			}
			lines, err := h.S.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 100 * len(before)})
			if err != nil {
				t.Fatal(err)
			}
			dropped := map[string]bool{}
			for _, l := range lines {
				if l.Attempt == 0 {
					dropped[l.EventID] = true
				}
			}
			if !tt.logged && len(dropped) != 0 {
				t.Errorf("deleting logged %d drops", len(dropped))
			}
			missing := 0
			for _, id := range before {
				switch {
				case delivered[id] && dropped[id]:
					t.Errorf("%s was delivered and dropped", id)
				case !delivered[id] && !dropped[id] && tt.logged:
					missing++
				}
			}
			if missing > 0 {
				t.Errorf("%d of %d events queued before disabling were neither delivered nor logged as dropped", missing, len(before))
			}
		})
	}
}
