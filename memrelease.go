package main

import (
	"context"
	"runtime/debug"
	"time"

	"onboard/onboarding"
)

// Memory that a busy spell leaves behind goes back to the operating system
// once the server is idle (issue 15: RSS at idle). The Go runtime returns
// freed heap gradually, keeping what the last busy spell needed in case it
// comes back; serve instead returns it (runtime/debug.FreeOSMemory: a
// collection, then every free page) once per idle spell: the first
// idleCheck that finds no request started since the previous one and none
// being served. That costs a collection of the live heap, a few
// milliseconds, when nothing else is going on. Badger's caches and
// memtables are live data and stay.

// idleCheck is how often serve looks for an idle spell.
const idleCheck = 15 * time.Second

// idleRelease decides when to return memory: at the first check of an idle
// spell, once.
type idleRelease struct {
	// requests is onboarding.Service.Requests.
	requests func() (serving int64, started uint64)
	// free returns memory to the operating system.
	free     func()
	last     uint64 // requests started at the previous check
	released bool   // free ran in the current idle spell
}

// check is one look at the server; it reports whether it freed memory.
func (r *idleRelease) check() bool {
	serving, started := r.requests()
	idle := serving == 0 && started == r.last
	r.last = started
	switch {
	case !idle:
		r.released = false
		return false
	case r.released:
		return false
	}
	r.free()
	r.released = true
	return true
}

// releaseWhenIdle returns memory to the operating system once per idle
// spell of svc's requests until ctx ends.
func releaseWhenIdle(ctx context.Context, svc *onboarding.Service) {
	r := &idleRelease{requests: svc.Requests, free: debug.FreeOSMemory}
	_, r.last = svc.Requests()
	tick := time.NewTicker(idleCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.check()
		}
	}
}
