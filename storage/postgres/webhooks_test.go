package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

func TestWebhookEndpoints(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	a1, other, a2 := h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme2"), h.endpoint("acme")
	if err := h.s.CreateEndpoint(ctx, a1); !errors.Is(err, errWebhookDuplicate) {
		t.Errorf("CreateEndpoint(duplicate) = %v, want errWebhookDuplicate", err)
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
		got, err := h.s.Endpoints(ctx, tt.org)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Endpoints(%q), oldest first (-want +got):\n%s", tt.org, diff)
		}
	}
	got, err := h.s.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.Description = "CRM"; return nil })
	if err != nil || got.Description != "CRM" {
		t.Fatalf("UpdateEndpoint = %+v, %v", got, err)
	}
	if stored, err := h.s.Endpoint(ctx, a1.ID); err != nil || !cmp.Equal(got, stored) {
		t.Errorf("Endpoint after update = %+v, %v; want %+v", stored, err, got)
	}
	if _, err := h.s.UpdateEndpoint(ctx, a1.ID, func(ep *onboarding.Endpoint) error { ep.OrgID = "acme2"; return nil }); err == nil {
		t.Errorf("UpdateEndpoint(moving it to another organization) succeeded")
	}
	boom := errors.New("boom")
	if _, err := h.s.UpdateEndpoint(ctx, a1.ID, func(*onboarding.Endpoint) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateEndpoint(failing change) = %v, want boom", err)
	}
	if _, err := h.s.UpdateEndpoint(ctx, "we_nope", func(*onboarding.Endpoint) error { return nil }); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("UpdateEndpoint(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := h.s.Endpoint(ctx, "we_nope"); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Endpoint(unknown) = %v, want ErrNotFound", err)
	}
}

// TestWebhookFanOut checks which endpoints an event is queued for: those
// of its organization that are enabled and want its type, or the one a
// webhook.test is addressed to.
func TestWebhookFanOut(t *testing.T) {
	h := newHookEnv(t)
	all, sentOnly, disabled, other := h.endpoint("acme"), h.endpoint("acme", onboarding.EventApplicationSent), h.endpoint("acme"), h.endpoint("acme2")
	if _, err := h.s.UpdateEndpoint(context.Background(), disabled.ID, func(ep *onboarding.Endpoint) error { ep.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	test := h.event(onboarding.EventWebhookTest, "acme", "", h.now)
	test.Endpoint = sentOnly.ID
	tests := []struct {
		name  string
		event *onboarding.Event
		want  []*onboarding.Endpoint
	}{
		{"every endpoint wanting the type", h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now), []*onboarding.Endpoint{all}},
		{"a filter naming the type", h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now), []*onboarding.Endpoint{all, sentOnly}},
		{"a test addressed to one endpoint", test, []*onboarding.Endpoint{sentOnly}},
		{"another organization", h.event(onboarding.EventApplicationSent, "acme2", "app-2", h.now), []*onboarding.Endpoint{other}},
		{"an organization without endpoints", h.event(onboarding.EventApplicationSent, "acm", "app-3", h.now), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.add(tt.event)
			want := []string{}
			for _, ep := range tt.want {
				want = append(want, hookPair(ep.ID, tt.event.ID))
			}
			got := []string{}
			for _, q := range h.queued() {
				if q.EventID == tt.event.ID {
					got = append(got, hookPair(q.EndpointID, q.EventID))
					if q.EventType != tt.event.Type || q.Subject != tt.event.Subject || q.Attempts != 0 || !q.NextAt.Equal(tt.event.At) {
						t.Errorf("queued %+v for event %+v", q, tt.event)
					}
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("queued for (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWebhookDisablingDropsTheQueue checks that an endpoint disabled by
// the operator or by a delivery's result loses its queued deliveries, each
// with a log line, and that other endpoints keep theirs.
func TestWebhookDisablingDropsTheQueue(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		perSubj int // events per subject
		subj    int // subjects
		finish  bool
	}{
		{"by the operator", 2, 2, false},
		{"by a delivery's result", 2, 2, true},
		{"a long queue", 3, 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHookEnv(t)
			ep, keep := h.endpoint("acme"), h.endpoint("acme2")
			var events []*onboarding.Event
			for s := 0; s < tt.subj; s++ {
				for i := 0; i < tt.perSubj; i++ {
					events = append(events, h.event(onboarding.EventApplicationSent, "acme", fmt.Sprintf("app-%d", s), h.at(time.Duration(i)*time.Millisecond)))
				}
			}
			kept := h.event(onboarding.EventApplicationSent, "acme2", "app-x", h.now)
			events = append(events, kept)
			h.write(events...)
			var want []onboarding.DeliveryAttempt
			reason, dropAt := "disabled by the operator", h.now
			if tt.finish {
				reason, dropAt = "410 Gone", h.at(time.Second)
				claimed, _ := h.claim("w1", h.now, 10)
				var d *onboarding.Delivery
				for _, c := range claimed {
					if c.EndpointID == ep.ID && c.EventID == events[0].ID {
						d = c
					}
				}
				if err := h.finish(d, dropAt, onboarding.DeliveryResult{Done: true, Endpoint: func(e *onboarding.Endpoint) {
					e.Enabled, e.DisabledReason = false, reason
				}}); err != nil {
					t.Fatal(err)
				}
				events = events[1:]
				want = append(want, onboarding.DeliveryAttempt{EventID: d.EventID, EventType: d.Event.Type, EndpointID: ep.ID, OrgID: "acme",
					Attempt: 1, At: dropAt, StatusCode: 200, Success: true})
			} else if _, err := h.s.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error {
				e.Enabled, e.DisabledReason = false, reason
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, e := range events[:len(events)-1] {
				want = append(want, onboarding.DeliveryAttempt{EventID: e.ID, EventType: e.Type, EndpointID: ep.ID, OrgID: "acme",
					At: dropAt, Error: "not delivered: the endpoint was disabled (" + reason + ")"})
			}
			if diff := cmp.Diff([]string{hookPair(keep.ID, kept.ID)}, h.queuedPairs()); diff != "" {
				t.Errorf("queue after disabling (-want +got):\n%s", diff)
			}
			lines, err := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID, Limit: 10 * len(want)})
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
			stored, _ := h.s.Endpoint(ctx, ep.ID)
			if stored.Enabled || stored.DisabledReason != reason {
				t.Errorf("endpoint after disabling = %+v", stored)
			}
			// Enabling it again resumes nothing, and it receives what
			// comes next.
			if _, err := h.s.UpdateEndpoint(ctx, ep.ID, func(e *onboarding.Endpoint) error { e.Enabled = true; return nil }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{hookPair(keep.ID, kept.ID)}, h.queuedPairs()); diff != "" {
				t.Errorf("queue after enabling again (-want +got):\n%s", diff)
			}
			e := h.event(onboarding.EventApplicationSent, "acme", "app-0", h.now)
			h.add(e)
			if diff := cmp.Diff(slices.Sorted(slices.Values([]string{hookPair(keep.ID, kept.ID), hookPair(ep.ID, e.ID)})), h.queuedPairs()); diff != "" {
				t.Errorf("queue after an event for the enabled endpoint (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebhookDeleteEndpoint(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	ep, keep := h.endpoint("acme"), h.endpoint("acme")
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e, h.event(onboarding.EventApplicationOpened, "acme", "app-1", h.now))
	if err := h.s.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range h.queued() {
		if q.EndpointID == ep.ID {
			t.Errorf("queued for the deleted endpoint: %+v", q)
		}
	}
	if n, _ := h.s.QueuedDeliveries(ctx); n != 2 {
		t.Errorf("QueuedDeliveries = %d, want the other endpoint's 2", n)
	}
	if lines, _ := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{}); len(lines) != 0 {
		t.Errorf("deleting logged %+v", lines)
	}
	if _, err := h.s.Endpoint(ctx, ep.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Endpoint(deleted) = %v, want ErrNotFound", err)
	}
	if got, _ := h.s.Endpoints(ctx, "acme"); len(got) != 1 || got[0].ID != keep.ID {
		t.Errorf("Endpoints after delete = %+v", got)
	}
	if err := h.s.DeleteEndpoint(ctx, ep.ID); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("DeleteEndpoint(deleted) = %v, want ErrNotFound", err)
	}
	if _, err := h.s.Redeliver(ctx, e.ID, ep.ID, h.now); !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("Redeliver to a deleted endpoint = %v, want ErrNotFound", err)
	}
}

// TestWebhookRedeliver queues events again: for the endpoints that want
// them, or one named; a delivery still queued starts over rather than
// doubling.
func TestWebhookRedeliver(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	all, sentOnly, createdOnly, off, other := h.endpoint("acme"), h.endpoint("acme", onboarding.EventApplicationSent),
		h.endpoint("acme", onboarding.EventApplicationCreated), h.endpoint("acme"), h.endpoint("acme2")
	if _, err := h.s.UpdateEndpoint(ctx, off.ID, func(ep *onboarding.Endpoint) error { ep.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	e := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.now)
	h.add(e)
	// Deliver it everywhere, so that nothing is queued.
	claimed, _ := h.claim("w1", h.now, 10)
	for _, d := range claimed {
		if err := h.finish(d, h.now, onboarding.DeliveryResult{Done: true}); err != nil {
			t.Fatal(err)
		}
	}
	errTests := []struct {
		name, event, endpoint string
	}{
		{"an unknown event", "evt_01KAJ6F4G0000000000000000A", ""},
		{"not an event id", "app-1", ""},
		{"an unknown endpoint", e.ID, "we_nope"},
		{"another organization's endpoint", e.ID, other.ID},
	}
	for _, tt := range errTests {
		if got, err := h.s.Redeliver(ctx, tt.event, tt.endpoint, h.now); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("Redeliver(%s) = %v, %v; want ErrNotFound", tt.name, got, err)
		}
	}
	at := h.at(time.Minute)
	tests := []struct {
		name     string
		endpoint string
		want     []string
	}{
		{"every endpoint that wants it", "", []string{all.ID, sentOnly.ID}},
		{"a named endpoint, whatever its filter", createdOnly.ID, []string{createdOnly.ID}},
		{"a disabled endpoint", off.ID, nil},
		{"again, while queued", "", []string{all.ID, sentOnly.ID}},
	}
	for _, tt := range tests {
		got, err := h.s.Redeliver(ctx, e.ID, tt.endpoint, at)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: queued for (-want +got):\n%s", tt.name, diff)
		}
	}
	want := []string{hookPair(all.ID, e.ID), hookPair(createdOnly.ID, e.ID), hookPair(sentOnly.ID, e.ID)}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), h.queuedPairs()); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if got, next := h.claim("w1", h.at(59*time.Second), 10); len(got) != 0 || !next.Equal(at) {
		t.Errorf("claim before the redelivery is due = %v, next %v; want none, %v", hookPairs(got), next, at)
	}

	// A delivery that failed once and is leased starts over.
	claimed, _ = h.claim("w1", at, 10)
	if len(claimed) != 3 {
		t.Fatalf("claimed %v", hookPairs(claimed))
	}
	if err := h.finish(claimed[0], at, onboarding.DeliveryResult{RetryAt: h.at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	again := h.at(2 * time.Minute)
	for _, d := range claimed {
		if _, err := h.s.Redeliver(ctx, e.ID, d.EndpointID, again); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range h.queued() {
		if q.Attempts != 0 || !q.NextAt.Equal(again) || q.Owner != "" {
			t.Errorf("after redelivering: %+v, want no attempts, due at %v, unclaimed", q, again)
		}
	}
	if err := h.finish(claimed[1], again, onboarding.DeliveryResult{Done: true}); !errors.Is(err, onboarding.ErrLeaseLost) {
		t.Errorf("finishing a delivery that started over = %v, want ErrLeaseLost", err)
	}
	if got, _ := h.claim("w2", again, 10); len(got) != 3 {
		t.Errorf("claim after redelivering = %v, want all three", hookPairs(got))
	}
}

// TestWebhookRedeliverBehindTheHead redelivers an event older than the
// one in flight: it waits for it, then goes.
func TestWebhookRedeliverBehindTheHead(t *testing.T) {
	h := newHookEnv(t)
	ep := h.endpoint("acme")
	first := h.event(onboarding.EventApplicationCreated, "acme", "app-1", h.now)
	second := h.event(onboarding.EventApplicationSent, "acme", "app-1", h.at(time.Second))
	h.add(first)
	claimed, _ := h.claim("w1", h.now, 10)
	if err := h.finish(claimed[0], h.now, onboarding.DeliveryResult{Done: true}); err != nil {
		t.Fatal(err)
	}
	h.add(second)
	claimed, _ = h.claim("w1", h.at(time.Second), 10)
	if diff := cmp.Diff([]string{hookPair(ep.ID, second.ID)}, hookPairs(claimed)); diff != "" {
		t.Fatalf("claimed (-want +got):\n%s", diff)
	}
	if _, err := h.s.Redeliver(context.Background(), first.ID, "", h.at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.claim("w2", h.at(2*time.Second), 10); len(got) != 0 {
		t.Errorf("claimed %v while the subject's head is in flight", hookPairs(got))
	}
	if err := h.finish(claimed[0], h.at(3*time.Second), onboarding.DeliveryResult{Done: true}); err != nil {
		t.Fatal(err)
	}
	claimed, _ = h.claim("w1", h.at(3*time.Second), 10)
	if diff := cmp.Diff([]string{hookPair(ep.ID, first.ID)}, hookPairs(claimed)); diff != "" {
		t.Errorf("claimed after the head finished (-want +got):\n%s", diff)
	}
}

// TestWebhookDeliveryAttempts reads the delivery log through each of its
// indexes.
func TestWebhookDeliveryAttempts(t *testing.T) {
	ctx := context.Background()
	h := newHookEnv(t)
	var lines []onboarding.DeliveryAttempt // oldest first
	for i, l := range []struct {
		ep, ev string
		ok     bool
	}{{"we_1", "evt_a", false}, {"we_2", "evt_a", true}, {"we_1", "evt_a", true}, {"we_1", "evt_b", false}, {"we_2", "evt_b", false}, {"we_10", "evt_b", true}} {
		lines = append(lines, onboarding.DeliveryAttempt{EventID: l.ev, EventType: onboarding.EventApplicationSent, EndpointID: l.ep, OrgID: "acme",
			Attempt: 1, At: h.at(time.Duration(i) * time.Second), Success: l.ok, StatusCode: 200})
	}
	// A line that expired.
	old := onboarding.DeliveryAttempt{EventID: "evt_a", EndpointID: "we_1", At: h.at(-31 * 24 * time.Hour)}
	if err := h.s.inTx(ctx, func(tx pgx.Tx) error { return h.s.writeAttempts(ctx, tx, append(slices.Clone(lines), old)) }); err != nil {
		t.Fatal(err)
	}
	pick := func(idx ...int) []onboarding.DeliveryAttempt {
		var out []onboarding.DeliveryAttempt
		for _, i := range idx {
			out = append(out, lines[i])
		}
		return out
	}
	tests := []struct {
		name string
		q    onboarding.AttemptQuery
		want []onboarding.DeliveryAttempt
	}{
		{"all", onboarding.AttemptQuery{}, pick(5, 4, 3, 2, 1, 0)},
		{"limit", onboarding.AttemptQuery{Limit: 2}, pick(5, 4)},
		{"endpoint", onboarding.AttemptQuery{EndpointID: "we_1"}, pick(3, 2, 0)},
		{"event", onboarding.AttemptQuery{EventID: "evt_b"}, pick(5, 4, 3)},
		{"endpoint and event", onboarding.AttemptQuery{EndpointID: "we_1", EventID: "evt_a"}, pick(2, 0)},
		{"failed", onboarding.AttemptQuery{FailedOnly: true}, pick(4, 3, 0)},
		{"failed of an endpoint", onboarding.AttemptQuery{EndpointID: "we_2", FailedOnly: true, Limit: 1}, pick(4)},
		{"unknown endpoint", onboarding.AttemptQuery{EndpointID: "we_3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.s.DeliveryAttempts(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("newest first (-want +got):\n%s", diff)
			}
		})
	}
	// Lines of the same time come newest written first.
	same := []onboarding.DeliveryAttempt{{EventID: "evt_c", EndpointID: "we_4", At: h.now, Attempt: 1}, {EventID: "evt_c", EndpointID: "we_4", At: h.now, Attempt: 2}}
	if err := h.s.inTx(ctx, func(tx pgx.Tx) error { return h.s.writeAttempts(ctx, tx, same) }); err != nil {
		t.Fatal(err)
	}
	got, err := h.s.DeliveryAttempts(ctx, onboarding.AttemptQuery{EventID: "evt_c"})
	if diff := cmp.Diff([]onboarding.DeliveryAttempt{same[1], same[0]}, got); err != nil || diff != "" {
		t.Errorf("lines of one time (-want +got):\n%s%v", diff, err)
	}
}
