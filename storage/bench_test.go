package storage

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// BenchmarkCreateApplication stores applications with their activity entry
// and no event: the cost BenchmarkCreateApplicationWithEvent compares to.
func BenchmarkCreateApplication(b *testing.B) {
	benchmarkCreate(b, false)
}

// BenchmarkCreateApplicationWithEvent stores applications with their
// activity entry and an application.created event, queued for the
// organization's one endpoint in the same transaction.
func BenchmarkCreateApplicationWithEvent(b *testing.B) {
	benchmarkCreate(b, true)
}

func benchmarkCreate(b *testing.B, withEvent bool) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	entropy := ulid.Monotonic(ulid.DefaultEntropy(), 0)
	if withEvent {
		ep := &onboarding.Endpoint{ID: "we_" + ulid.MustNew(ulid.Timestamp(now), entropy).String(), OrgID: "acme",
			URL: "https://hooks.example.com/", Enabled: true, CreatedAt: now}
		if err := s.CreateEndpoint(ctx, ep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		app := newApp(b, "acme", i, onboarding.StatusCreated)
		ch := onboarding.Changes{Log: []onboarding.Activity{{At: now, Action: onboarding.ActionCreated}}}
		if withEvent {
			id := "evt_" + ulid.MustNew(ulid.Timestamp(now), entropy).String()
			ch.Events = []*onboarding.Event{{ID: id, Type: onboarding.EventApplicationCreated, OrgID: "acme", Subject: app.ID, At: now,
				Body: json.RawMessage(`{"id":"` + id + `","type":"application.created","data":{}}`)}}
		}
		if err := s.CreateApplication(ctx, app, ch); err != nil {
			b.Fatal(err)
		}
	}
}
