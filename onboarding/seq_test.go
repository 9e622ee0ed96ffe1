package onboarding

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// TestNextSeqNeverGoesBack: ids keep increasing when the wall clock stands
// still or steps back (an NTP correction), and follow it again once it
// has passed the last id's millisecond.
func TestNextSeqNeverGoesBack(t *testing.T) {
	s := &Service{seq: ulid.Monotonic(rand.Reader, 0)}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		at     time.Time
		wantMs time.Time // the id's millisecond
	}{
		{t0, t0},
		{t0, t0},
		{t0.Add(-2 * time.Second), t0},
		{t0.Add(-time.Hour), t0},
		{t0.Add(time.Millisecond), t0.Add(time.Millisecond)},
		{t0.Add(-time.Millisecond), t0.Add(time.Millisecond)},
		{t0.Add(time.Second), t0.Add(time.Second)},
	}
	var last ulid.ULID
	for i, st := range steps {
		id, err := s.nextSeq(st.at)
		if err != nil {
			t.Fatal(err)
		}
		if id.Compare(last) <= 0 {
			t.Errorf("step %d (clock at %v): %s is not after %s", i, st.at, id, last)
		}
		if got := ulid.Time(id.Time()); !got.Equal(st.wantMs) {
			t.Errorf("step %d (clock at %v): id of %v, want %v", i, st.at, got, st.wantMs)
		}
		last = id
	}
}
