package storage

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// BenchmarkCreateRFIRequest stores RFI requests as the service creates
// them: with their activity entry, their expiry-queue entry and an
// rfi_request.created event queued for the organization's one endpoint.
func BenchmarkCreateRFIRequest(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	entropy := ulid.Monotonic(ulid.DefaultEntropy(), 0)
	if err := s.CreateEndpoint(ctx, fixture.NewEndpoint("we_"+ulid.MustNew(ulid.Timestamp(now), entropy).String(), "acme", now)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := fixture.RFI("acme", i, onboarding.RFIActive)
		id := "evt_" + ulid.MustNew(ulid.Timestamp(now), entropy).String()
		ch := onboarding.Changes{
			Log:    []onboarding.Activity{{At: now, Action: onboarding.ActionRFICreated}},
			Events: []*onboarding.Event{fixture.NewEvent(id, onboarding.EventRFIRequestCreated, "acme", r.ID, now)},
		}
		if err := s.CreateRFIRequest(ctx, r, ch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRFIRequest reads RFI requests by id from a store of 1,000.
func BenchmarkRFIRequest(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 1000
	ids := make([]string, n)
	for i := range ids {
		r := fixture.RFI("acme", i, onboarding.RFIActive)
		if err := s.CreateRFIRequest(ctx, r, onboarding.Changes{}); err != nil {
			b.Fatal(err)
		}
		ids[i] = r.ID
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.RFIRequest(ctx, ids[(i*7919)%n]); err != nil {
			b.Fatal(err)
		}
	}
}
