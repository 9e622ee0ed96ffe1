package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// BenchmarkSteadyFlow adds one event for one endpoint, claims it and
// finishes it, a millisecond apart, with a 25 s lease: each claim should
// cost the same however many deliveries were finished before it.
func BenchmarkSteadyFlow(b *testing.B) {
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
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Millisecond)
		id := "evt_" + ulid.MustNew(ulid.Timestamp(now), entropy).String()
		e := &onboarding.Event{ID: id, Type: onboarding.EventApplicationCreated, OrgID: "acme", Subject: fmt.Sprintf("app-%d", i), At: now,
			Body: json.RawMessage(`{"id":"` + id + `","type":"application.created","data":{}}`)}
		if err := s.AddEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
		got, _, err := s.ClaimDeliveries(ctx, onboarding.Claim{Owner: "w1", Now: now, Lease: 25 * time.Second, Limit: 4})
		if err != nil || len(got) != 1 {
			b.Fatalf("claim %d: %d claimed, %v", i, len(got), err)
		}
		d := got[0]
		if err := s.FinishDelivery(ctx, d, onboarding.DeliveryResult{Done: true, Attempt: onboarding.DeliveryAttempt{
			EventID: d.EventID, EventType: e.Type, EndpointID: ep.ID, OrgID: "acme", Attempt: 1, At: now, StatusCode: 200, Success: true}}); err != nil {
			b.Fatal(err)
		}
	}
}
