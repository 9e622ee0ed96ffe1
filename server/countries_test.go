package server

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"

	"onboard/onboarding"
)

// TestCountriesAreISO: every code of the list is a current ISO 3166-1
// country (CLDR's, through x/text), once, and the list has all 249.
func TestCountriesAreISO(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range onboarding.Countries() {
		r, err := language.ParseRegion(c.Code)
		if err != nil || !r.IsCountry() || r.Canonicalize() != r || r.String() != c.Code {
			t.Errorf("%s (%s) is not a current ISO 3166-1 country", c.Code, c.Name)
		}
		if seen[c.Code] {
			t.Errorf("%s is listed twice", c.Code)
		}
		seen[c.Code] = true
	}
	if len(seen) != 249 {
		t.Errorf("%d countries, want the 249 of ISO 3166-1", len(seen))
	}
	// The form offers exactly the codes the domain accepts.
	var codes []string
	for _, c := range onboarding.Countries() {
		codes = append(codes, c.Code)
	}
	slices.Sort(codes)
	if diff := cmp.Diff(onboarding.CountryCodes(), codes); diff != "" {
		t.Errorf("the form's countries against onboarding.CountryCodes (-domain +form):\n%s", diff)
	}
	for code, want := range map[string]string{"GB": "United Kingdom", "IE": "Ireland", "FR": "France", "ZZ": "ZZ"} {
		if got := countryName(code); got != want {
			t.Errorf("countryName(%s) = %q, want %q", code, got, want)
		}
	}
}
