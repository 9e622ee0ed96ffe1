package storetest

import (
	"errors"
	"sort"
	"testing"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// t0 is the fixtures' creation time.
var t0 = fixture.T0

// hooks is a store for the event and webhook cases (fixture.Hooks) that
// a case can restart.
type hooks struct {
	*fixture.Hooks[onboarding.Store]
	open Opener
}

func newHooks(t *testing.T, open Opener) *hooks {
	t.Helper()
	h := &hooks{Hooks: fixture.NewHooks[onboarding.Store](t), open: open}
	h.S = open(t, Options{Now: h.Clock})
	if h.S == nil {
		t.Fatal("the Opener returned no store for fresh data")
	}
	return h
}

// restart closes h's store and opens its data again.
func (h *hooks) restart() {
	h.T.Helper()
	h.S = reopen(h.T, h.open, h.S, h.Clock)
}

// sorted returns ss sorted, never nil.
func sorted(ss ...string) []string {
	out := append([]string{}, ss...)
	sort.Strings(out)
	return out
}

// errBoom is the error of a change that fails.
var errBoom = errors.New("boom")
