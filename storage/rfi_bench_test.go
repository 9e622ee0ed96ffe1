package storage

import (
	"context"
	"encoding/json"
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
	ep := &onboarding.Endpoint{ID: "we_" + ulid.MustNew(ulid.Timestamp(now), entropy).String(), OrgID: "acme",
		URL: "https://hooks.example.com/", Enabled: true, CreatedAt: now}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := fixture.RFI("acme", i, onboarding.RFIActive)
		id := "evt_" + ulid.MustNew(ulid.Timestamp(now), entropy).String()
		ch := onboarding.Changes{
			Log: []onboarding.Activity{{At: now, Action: onboarding.ActionRFICreated}},
			Events: []*onboarding.Event{{ID: id, Type: onboarding.EventRFIRequestCreated, OrgID: "acme", Subject: r.ID, At: now,
				Body: json.RawMessage(`{"id":"` + id + `","type":"rfi_request.created","data":{}}`)}},
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
