package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIdleRelease: memory is returned at the first check of each idle
// spell, and only then.
func TestIdleRelease(t *testing.T) {
	type reading struct {
		serving int64
		started uint64
	}
	steps := []struct {
		reading
		freed bool
	}{
		{reading{0, 0}, true},  // idle since the start
		{reading{0, 0}, false}, // the same spell
		{reading{2, 2}, false}, // busy
		{reading{1, 5}, false}, // busy
		{reading{1, 5}, false}, // one long request, nothing new
		{reading{0, 5}, true},  // idle
		{reading{0, 5}, false}, // the same spell
		{reading{0, 6}, false}, // a request came and went
		{reading{0, 6}, true},  // a new idle spell
		{reading{0, 6}, false}, // the same spell
	}
	var now reading
	frees := 0
	r := &idleRelease{
		requests: func() (int64, uint64) { return now.serving, now.started },
		free:     func() { frees++ },
	}
	var got, want []bool
	for _, s := range steps {
		now = s.reading
		got = append(got, r.check())
		want = append(want, s.freed)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("freed at each check (-want +got):\n%s", diff)
	}
	if frees != 3 {
		t.Errorf("free ran %d times, want 3", frees)
	}
}
