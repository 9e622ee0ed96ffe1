package server

import "onboard/onboarding"

// countryName is the English name of the country with code, or code
// itself when it names none: the countries of the form's questions are
// onboarding.Countries.
func countryName(code string) string { return onboarding.CountryName(code) }
