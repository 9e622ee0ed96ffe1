package storage

import (
	"testing"

	"onboard/storage/storetest/fixture"
)

// BenchmarkSteadyFlow is fixture.SteadyFlow on Badger: one delivery added,
// claimed and finished at a time.
func BenchmarkSteadyFlow(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fixture.SteadyFlow(b, s)
}
