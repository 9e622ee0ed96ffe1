// Package storetest is the conformance suite of onboarding.Store: every
// method's contract, as the interface comments in package onboarding state
// it, checked through the interface alone, so that one suite runs on every
// backend. A backend's test calls Run with an Opener for its store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// Options says what store an Opener is asked for.
type Options struct {
	// Now is the store's clock: the time of the delivery log lines it
	// writes itself (deliveries dropped when an endpoint is disabled).
	// nil: time.Now.
	Now func() time.Time
	// Reopen, when set, asks for a store on the data of Reopen (a store
	// this Opener returned), which the Opener closes first: a restart.
	Reopen onboarding.Store
	// Beside, when set, asks for a second store on the data of Beside,
	// both in use at once: a second instance.
	Beside onboarding.Store
}

// Opener returns a store for t: on fresh, empty data unless o asks for
// the data of another, closed when t ends. It returns nil when the
// backend cannot do what o asks (two instances on one embedded
// database); the case that asked then skips.
type Opener func(t *testing.T, o Options) onboarding.Store

// ResponseStore is the part of a store that keeps the idempotency records
// of the API (the server's ResponseStore): the suite checks it on the
// stores that have it.
type ResponseStore interface {
	SavedResponse(ctx context.Context, clientID, key string) (json.RawMessage, error)
	SaveResponse(clientID, key string, record json.RawMessage, ttl time.Duration, done func(error))
}

// Run runs the suite on the stores open returns.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name  string
		cases []suiteCase
	}{
		{"Applications", applicationCases},
		{"APIKeys", apiKeyCases},
		{"Activity", activityCases},
		{"Events", eventCases},
		{"Endpoints", endpointCases},
		{"Deliveries", deliveryCases},
		{"RFI", rfiCases},
		{"Idempotency", idempotencyCases},
		{"Lifecycle", lifecycleCases},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, open)
				})
			}
		})
	}
}

// suiteCase is one case of the suite.
type suiteCase struct {
	name string
	run  func(t *testing.T, open Opener)
}

// fresh opens a store on fresh data with the real clock.
func fresh(t *testing.T, open Opener) onboarding.Store {
	t.Helper()
	s := open(t, Options{})
	if s == nil {
		t.Fatal("the Opener returned no store for fresh data")
	}
	return s
}

// reopen restarts s: it returns a store on s's data, s closed.
func reopen(t *testing.T, open Opener, s onboarding.Store, now func() time.Time) onboarding.Store {
	t.Helper()
	s2 := open(t, Options{Reopen: s, Now: now})
	if s2 == nil {
		t.Skip("the backend cannot reopen a store")
	}
	return s2
}

// beside returns a second store on s's data, or skips t.
func beside(t *testing.T, open Opener, s onboarding.Store) onboarding.Store {
	t.Helper()
	s2 := open(t, Options{Beside: s})
	if s2 == nil {
		t.Skip("the backend cannot open a second store on the same data")
	}
	return s2
}

// activity returns the subject's activity entries, oldest first.
func activity(t *testing.T, s onboarding.Store, id string) []onboarding.Activity {
	t.Helper()
	_, log := fixture.ReadLog(t, s, id)
	var out []onboarding.Activity
	for _, e := range log {
		out = append(out, e.Activity)
	}
	return out
}

// wantActivity checks the subject's activity entries.
func wantActivity(t *testing.T, s onboarding.Store, id string, want []onboarding.Activity) {
	t.Helper()
	if diff := cmp.Diff(want, activity(t, s, id)); diff != "" {
		t.Errorf("activity of %s (-want +got):\n%s", id, diff)
	}
}

// wantNotFound checks that err is onboarding.ErrNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("%s = %v, want ErrNotFound", what, err)
	}
}
