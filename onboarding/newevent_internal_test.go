package onboarding

import (
	crand "crypto/rand"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewEventForTest returns the newEvent of a Service that has only its
// sequence, for the external tests that build events from the fixtures of
// onboardingtest (which the package's own tests cannot import).
func NewEventForTest() func(t EventType, org, subject string, at time.Time, data any) (*Event, error) {
	s := &Service{seq: ulid.Monotonic(crand.Reader, 0)}
	return s.newEvent
}
