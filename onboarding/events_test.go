package onboarding_test

import (
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/onboarding/onboardingtest"
)

// TestEventBodyMatchesReflection checks that an event's body, assembled
// from its encoded data, is the wire format of docs/webhooks.md as the
// reflecting encoder writes it.
func TestEventBodyMatchesReflection(t *testing.T) {
	newEvent := onboarding.NewEventForTest()
	at := time.Date(2026, 11, 21, 9, 30, 0, 123e6, time.UTC)
	for name, data := range map[string]any{
		"application": onboardingtest.FullView(),
		"other data":  map[string]any{"text": "a<b>&c\u2028", "n": 1.5},
		"null":        nil,
	} {
		t.Run(name, func(t *testing.T) {
			e, err := newEvent(onboarding.EventApplicationReferred, "acme", "subject", at, data)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonv2.Marshal(struct {
				ID        string               `json:"id"`
				Type      onboarding.EventType `json:"type"`
				Timestamp string               `json:"timestamp"`
				Data      any                  `json:"data"`
			}{e.ID, onboarding.EventApplicationReferred, "2026-11-21T09:30:00.123Z", data}, jsonv1.DefaultOptionsV1())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(e.Body)); diff != "" {
				t.Errorf("event body (-reflection +newEvent):\n%s", diff)
			}
		})
	}
}
