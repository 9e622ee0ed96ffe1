package onboarding

import (
	"slices"
	"testing"
)

func TestIsCountryCode(t *testing.T) {
	codes := CountryCodes()
	if len(codes) != 249 || !slices.IsSorted(codes) || len(slices.Compact(slices.Clone(codes))) != 249 {
		t.Fatalf("CountryCodes: %d codes, sorted %v; want the 249 of ISO 3166-1, sorted, each once", len(codes), slices.IsSorted(codes))
	}
	for _, c := range codes {
		if !IsCountryCode(c) {
			t.Errorf("IsCountryCode(%q) = false", c)
		}
	}
	for _, c := range []string{"", "G", "GBR", "gb", "Gb", "UK", "ZZ", "XK", "AA", "ZX", "A1", "\x00\x00"} {
		if IsCountryCode(c) {
			t.Errorf("IsCountryCode(%q) = true", c)
		}
	}
}
