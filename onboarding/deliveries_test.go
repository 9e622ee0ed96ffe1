package onboarding

import (
	"testing"
	"time"
)

func TestJitterStaysWithinTenPercent(t *testing.T) {
	for range 1000 {
		if got := jitter(time.Hour); got < 54*time.Minute || got > 66*time.Minute {
			t.Fatalf("jitter(1h) = %v", got)
		}
	}
	if got := jitter(0); got != 0 {
		t.Errorf("jitter(0) = %v", got)
	}
}

func TestEndpointWantsAndSigningKeys(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	ep := &Endpoint{ID: "we_a", OrgID: "acme", Enabled: true, Events: []EventType{EventApplicationSubmitted},
		Secrets: []SigningSecret{{Key: []byte("new")}, {Key: []byte("old"), ExpiresAt: &later}}}
	tests := []struct {
		e    Event
		want bool
	}{
		{Event{OrgID: "acme", Type: EventApplicationSubmitted}, true},
		{Event{OrgID: "acme", Type: EventApplicationCreated}, false},
		{Event{OrgID: "other", Type: EventApplicationSubmitted}, false},
		{Event{OrgID: "acme", Type: EventWebhookTest, Endpoint: "we_a"}, true},
		{Event{OrgID: "acme", Type: EventWebhookTest, Endpoint: "we_b"}, false},
	}
	for _, tt := range tests {
		if got := ep.Wants(&tt.e); got != tt.want {
			t.Errorf("Wants(%+v) = %v, want %v", tt.e, got, tt.want)
		}
	}
	ep.Enabled = false
	if ep.Wants(&Event{OrgID: "acme", Type: EventApplicationSubmitted}) {
		t.Error("a disabled endpoint wants events")
	}
	if got := ep.SigningKeys(now); len(got) != 2 || string(got[0]) != "new" || string(got[1]) != "old" {
		t.Errorf("SigningKeys during the overlap = %q", got)
	}
	if got := ep.SigningKeys(later); len(got) != 1 || string(got[0]) != "new" {
		t.Errorf("SigningKeys after the overlap = %q", got)
	}
}
