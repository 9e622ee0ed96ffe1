package storage

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// BenchmarkCreateApplication stores applications with their activity entry
// and no event: the cost BenchmarkCreateApplicationWithEvent compares to.
func BenchmarkCreateApplication(b *testing.B) {
	benchmarkCreate(b, false, false)
}

// BenchmarkCreateApplicationWithEvent stores applications with their
// activity entry and an application.created event, queued for the
// organization's one endpoint in the same transaction.
func BenchmarkCreateApplicationWithEvent(b *testing.B) {
	benchmarkCreate(b, true, false)
}

// BenchmarkCreateApplicationWithEventGrouped is
// BenchmarkCreateApplicationWithEvent from 32 goroutines at once, as the
// API's clients write: the creates share group commits, whose serial part
// queues each one's event for the endpoint.
func BenchmarkCreateApplicationWithEventGrouped(b *testing.B) {
	b.SetParallelism(16) // 32 goroutines on 2 cores
	benchmarkCreate(b, true, true)
}

// benchmarkCreate creates applications one after the other, or from the
// benchmark's parallel goroutines when grouped.
func benchmarkCreate(b *testing.B, withEvent, grouped bool) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	// Not over ulid.DefaultEntropy, whose Read is not locked: newApp
	// draws from it on other goroutines.
	entropy := ulid.Monotonic(rand.Reader, 0)
	if withEvent {
		if err := s.CreateEndpoint(ctx, fixture.NewEndpoint("we_"+ulid.MustNew(ulid.Timestamp(now), entropy).String(), "acme", now)); err != nil {
			b.Fatal(err)
		}
	}
	var mu sync.Mutex // entropy and the count of applications
	n := 0
	create := func() error {
		mu.Lock()
		i := n
		n++
		id := "evt_" + ulid.MustNew(ulid.Timestamp(now), entropy).String()
		mu.Unlock()
		app := fixture.App("acme", i, onboarding.StatusCreated)
		ch := onboarding.Changes{Log: []onboarding.Activity{{At: now, Action: onboarding.ActionCreated}}}
		if withEvent {
			ch.Events = []*onboarding.Event{fixture.NewEvent(id, onboarding.EventApplicationCreated, "acme", app.ID, now)}
		}
		return s.CreateApplication(ctx, app, ch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if !grouped {
		for b.Loop() {
			if err := create(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := create(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
