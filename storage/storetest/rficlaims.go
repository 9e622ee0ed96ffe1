package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// RFI requests' expiry claims: leases, concurrent claimers, restarts, and the two queues kept apart.

// testClaimRFIExpiries walks the expiry queue through claims, leases,
// updates that keep or move ExpiresAt, and status changes.
func testClaimRFIExpiries(t *testing.T, open Opener) {
	s := fresh(t, open)
	// a, b and c expire an hour apart; d is completed, e expired.
	a, b, c := fixture.RFI("acme", 1, onboarding.RFIActive), fixture.RFI("acme", 2, onboarding.RFIActive), fixture.RFI("acme2", 3, onboarding.RFIActive)
	d, e := fixture.RFI("acme", 4, onboarding.RFICompleted), fixture.RFI("acme", 5, onboarding.RFIExpired)
	// d and e would be the first due, were they queued.
	d.ExpiresAt, e.ExpiresAt = t0, t0
	// Nanoseconds: the queue orders and answers exact times.
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = t0.Add(time.Hour+1), t0.Add(2*time.Hour+2), t0.Add(3*time.Hour+3)
	fixture.CreateRFIs(t, s, a, b, c, d, e)
	fixture.CheckQueues(t, s)
	steps := []struct {
		name     string
		owner    string
		at       time.Time
		limit    int
		want     []string // sorted
		wantNext time.Time
	}{
		{"nothing due", "w1", t0, 10, nil, a.ExpiresAt},
		{"a nanosecond early", "w1", a.ExpiresAt.Add(-1), 10, nil, a.ExpiresAt},
		{"a limit of none", "w1", b.ExpiresAt, 0, nil, a.ExpiresAt},
		{"due at or before now, earliest first, up to the limit", "w1", b.ExpiresAt, 1, []string{a.ID}, b.ExpiresAt},
		{"the rest due", "w1", b.ExpiresAt, 10, []string{b.ID}, b.ExpiresAt.Add(time.Minute)},
		{"leases hide their requests", "w2", b.ExpiresAt.Add(time.Minute - 1), 10, nil, b.ExpiresAt.Add(time.Minute)},
		{"a lapsed lease is due again", "w2", b.ExpiresAt.Add(time.Minute), 10, sortedIDs(a, b), c.ExpiresAt},
	}
	for _, st := range steps {
		got, next := fixture.ClaimRFIs(t, s, st.owner, st.at, st.limit)
		if diff := cmp.Diff(sorted(st.want...), got); diff != "" {
			t.Errorf("%s: claimed (-want +got):\n%s", st.name, diff)
		}
		if !next.Equal(st.wantNext) {
			t.Errorf("%s: next = %v, want %v", st.name, next, st.wantNext)
		}
	}
	// a and b are leased to w2 until lease; c waits at its ExpiresAt.
	lease := b.ExpiresAt.Add(2 * time.Minute)

	// An update that leaves ExpiresAt alone keeps a running lease, and an
	// unclaimed request at its ExpiresAt.
	fixture.UpdateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.CompanyName = "renamed" })
	fixture.UpdateRFI(t, s, c.ID, func(r *onboarding.RFIRequest) { r.CompanyName = "renamed" })
	if got, next := fixture.ClaimRFIs(t, s, "w3", lease.Add(-1), 10); len(got) != 0 || !next.Equal(lease) {
		t.Errorf("after unrelated updates: claimed %v, next %v; want none, the leases' end %v", got, next, lease)
	}
	// One that moves ExpiresAt moves the request there, lease or none.
	later := c.ExpiresAt.Add(time.Hour)
	fixture.UpdateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.ExpiresAt = later })
	fixture.UpdateRFI(t, s, c.ID, func(r *onboarding.RFIRequest) { r.ExpiresAt = later.Add(time.Hour) })
	if got, next := fixture.ClaimRFIs(t, s, "w3", lease, 10); !cmp.Equal([]string{b.ID}, got) || !next.Equal(later) {
		t.Errorf("after moving ExpiresAt: claimed %v, next %v; want b, %v", got, next, later)
	}
	// A request that leaves active leaves the queue, leased or not.
	fixture.UpdateRFI(t, s, b.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFIExpired })
	fixture.UpdateRFI(t, s, a.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFICompleted })
	if got, next := fixture.ClaimRFIs(t, s, "w3", later.Add(30*time.Minute), 10); len(got) != 0 || !next.Equal(later.Add(time.Hour)) {
		t.Errorf("claim after they left = %v, next %v; want none, %v", got, next, later.Add(time.Hour))
	}
	// A request back to active is queued again.
	fixture.UpdateRFI(t, s, d.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFIActive })
	if got, next := fixture.ClaimRFIs(t, s, "w3", later.Add(time.Hour), 10); !cmp.Equal(sortedIDs(c, d), got) || !next.IsZero() {
		t.Errorf("last claim = %v, next %v; want c and d, zero", got, next)
	}
	if got, next := fixture.ClaimRFIs(t, s, "w3", later.Add(time.Hour+time.Second), 10); len(got) != 0 || !next.Equal(later.Add(time.Hour+time.Minute)) {
		t.Errorf("claim while c and d are leased = %v, next %v; want none, the lease's end", got, next)
	}
}

// concurrentRFIClaims runs claimers through stores against each other
// and against an updater completing requests: no request is claimed
// twice, every active one is claimed, and the completed ones leave the
// queue.
func concurrentRFIClaims(t *testing.T, stores ...onboarding.Store) {
	ctx := context.Background()
	s := stores[0]
	const n = 120
	var all []*onboarding.RFIRequest
	for i := 0; i < n; i++ {
		r := fixture.RFI("acme", i, onboarding.RFIActive)
		r.ExpiresAt = t0.Add(time.Duration(i%7) * time.Second)
		all = append(all, r)
	}
	fixture.CreateRFIs(t, s, all...)
	now := t0.Add(time.Hour)
	seen := newClaimLedger(t)
	runClaimers(t, 4, stores, func(s onboarding.Store, owner string) (bool, error) {
		ids, next, err := s.ClaimRFIExpiries(ctx, onboarding.Claim{Owner: owner, Now: now, Lease: time.Hour, Limit: 5})
		seen.claimed(owner, ids...)
		return len(ids) == 0 && next.After(now) || next.IsZero(), err
	}, func() error {
		// Meanwhile every third request is completed.
		for i := 0; i < n; i += 3 {
			if _, err := stores[len(stores)-1].UpdateRFIRequest(ctx, all[i].ID, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
				r.Status = onboarding.RFICompleted
				return onboarding.Changes{}, nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	fixture.CheckQueues(t, s)
	var active []*onboarding.RFIRequest
	for i, r := range all {
		if i%3 != 0 {
			active = append(active, r)
			if _, claimed := seen.owner[r.ID]; !claimed {
				t.Errorf("active request %d was never claimed", i)
			}
		}
	}
	// Each active request is leased until now+1h; the completed ones are gone.
	if ids, next := fixture.ClaimRFIs(t, s, "w9", now.Add(time.Hour-1), 1000); len(ids) != 0 || !next.Equal(now.Add(time.Hour)) {
		t.Errorf("claim while the leases run = %d requests, next %v; want none, %v", len(ids), next, now.Add(time.Hour))
	}
	ids, next := fixture.ClaimRFIs(t, s, "w9", now.Add(time.Hour), 1000)
	if diff := cmp.Diff(sortedIDs(active...), ids); diff != "" || !next.IsZero() {
		t.Errorf("claim once the leases lapsed (-want +got):\n%s next=%v", diff, next)
	}
}

// testConcurrentRFIClaimsDoNotOverlap runs the claimers on one store.
func testConcurrentRFIClaimsDoNotOverlap(t *testing.T, open Opener) {
	concurrentRFIClaims(t, fresh(t, open))
}

// testConcurrentRFIClaimsTwoInstances runs the claimers through two
// stores on the same data.
func testConcurrentRFIClaimsTwoInstances(t *testing.T, open Opener) {
	s := fresh(t, open)
	concurrentRFIClaims(t, s, beside(t, open, s))
}

// testRFIRestart restarts the store: records, slugs, lists, activity,
// events and the expiry queue with its leases are all there.
func testRFIRestart(t *testing.T, open Opener) {
	ctx := context.Background()
	h := newHooks(t, open)
	a, b, c := fixture.RFI("acme", 1, onboarding.RFIActive), fixture.RFI("acme", 2, onboarding.RFIActive), fixture.RFI("acme", 3, onboarding.RFIActive)
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = h.At(time.Hour), h.At(2*time.Hour), h.At(3*time.Hour)
	created := h.Event(onboarding.EventRFIRequestCreated, "acme", a.ID, h.Now)
	log := []onboarding.Activity{{At: h.Now, Action: onboarding.ActionRFICreated}}
	if err := h.S.CreateRFIRequest(ctx, a, onboarding.Changes{Log: log, Events: []*onboarding.Event{created}}); err != nil {
		t.Fatal(err)
	}
	fixture.CreateRFIs(t, h.S, b, c)
	b = fixture.UpdateRFI(t, h.S, b.ID, func(r *onboarding.RFIRequest) { r.Status = onboarding.RFICompleted })
	if ids, _ := fixture.ClaimRFIs(t, h.S, "w1", h.At(time.Hour), 10); !cmp.Equal([]string{a.ID}, ids) {
		t.Fatalf("claimed %v, want a", ids)
	}
	h.restart()
	fixture.CheckQueues(t, h.S)
	for _, want := range []*onboarding.RFIRequest{a, b, c} {
		got, err := h.S.RFIRequest(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after the restart (-want +got):\n%s", want.CompanyName, diff)
		}
		if got, err := h.S.RFIRequestBySlug(ctx, want.Participants[0].LinkSlug); err != nil || got.ID != want.ID {
			t.Errorf("RFIRequestBySlug(%s) after the restart = %v, %v", want.CompanyName, got, err)
		}
	}
	listed, _, err := h.S.ListRFIRequests(ctx, onboarding.RFIListQuery{OrgID: "acme", Status: onboarding.RFIActive, Limit: 10})
	if err != nil || !cmp.Equal([]string{c.ID, a.ID}, rfiIDs(listed)) {
		t.Errorf("active list after the restart = %v, %v; want c, a", rfiIDs(listed), err)
	}
	wantActivity(t, h.S, a.ID, log)
	if got, err := h.S.Event(ctx, created.ID); err != nil || !cmp.Equal(created, got) {
		t.Errorf("event after the restart = %v, %v", got, err)
	}
	// The lease runs on: a is hidden until it lapses.
	if ids, next := fixture.ClaimRFIs(t, h.S, "w2", h.At(time.Hour+time.Second), 10); len(ids) != 0 || !next.Equal(h.At(time.Hour+time.Minute)) {
		t.Errorf("claim after the restart = %v, next %v; want none, the lease's end", ids, next)
	}
	if ids, _ := fixture.ClaimRFIs(t, h.S, "w2", h.At(3*time.Hour), 10); !cmp.Equal(sortedIDs(a, c), ids) {
		t.Errorf("claim after the lease lapsed = %v, want a and c", ids)
	}
}

// testRFIQueueIgnoresTheDeliveryQueue checks that expiry claims and
// delivery claims never meet: a claim of either finds only its own.
func testRFIQueueIgnoresTheDeliveryQueue(t *testing.T, open Opener) {
	h := newHooks(t, open)
	h.Endpoint("acme")
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	r.ExpiresAt = h.Now
	fixture.CreateRFIs(t, h.S, r)
	e := h.Event(onboarding.EventApplicationSent, "acme", "app-1", h.Now)
	h.Add(e)
	if ds, _ := h.Claim("w1", h.Now, 10); len(ds) != 1 || ds[0].EventID != e.ID {
		t.Errorf("ClaimDeliveries = %v, want the event's delivery only", fixture.Pairs(ds))
	}
	if ids, next := fixture.ClaimRFIs(t, h.S, "w1", h.Now, 10); !cmp.Equal([]string{r.ID}, ids) || !next.IsZero() {
		t.Errorf("ClaimRFIExpiries = %v, next %v; want the request only", ids, next)
	}
	if ids, next := fixture.ClaimRFIs(t, h.S, "w2", h.Now, 10); len(ids) != 0 || !next.Equal(h.At(time.Minute)) {
		t.Errorf("ClaimRFIExpiries during the lease = %v, next %v; want none, the lease's end", ids, next)
	}
	if n := h.Queued(); n != 1 {
		t.Errorf("QueuedDeliveries = %d, want the one delivery", n)
	}
}
