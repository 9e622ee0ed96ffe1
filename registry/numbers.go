package registry

import (
	"regexp"
	"strings"

	"onboard/onboarding"
)

// Company number shapes: Companies House's for GB, the CRO's for IE.
var (
	gbAllDigits  = regexp.MustCompile(`^[0-9]{1,8}$`)
	gbTwoLetters = regexp.MustCompile(`^([A-Z]{2})([0-9]{1,6})$`)
	gbOneLetter  = regexp.MustCompile(`^[A-Z][0-9]{7}$`)
	gbSociety    = regexp.MustCompile(`^[A-Z]{2}(?:[0-9]{5}[A-Z]|[0-9]{4}[A-Z]{2})$`)
	ieDigits     = regexp.MustCompile(`^[0-9]{1,6}$`)
)

// NormalizeCompanyNumber returns number in the form the registry of country
// (GB or IE) files it under, or onboarding.ErrCompanyNumberMalformed when it
// cannot be a number of that registry. GB numbers become 8 characters
// ("445790" → "00445790", "sc 311560" → "SC311560"); IE numbers lose their
// leading zeros ("012345" → "12345"). It is pure: no registry is called
// (the adapters it asks have no endpoint, and only their number rules run).
func NormalizeCompanyNumber(country, number string) (string, error) {
	a, err := newAdapters(&companiesHouse{}, &cro{}).of(country)
	if err != nil {
		return "", err
	}
	return a.normalize(number)
}

// normalizeGB applies the Companies House rules: strip every space, upper-case,
// then pad the digits of a recognised shape; anything else is malformed.
func normalizeGB(raw string) (string, error) {
	trimmed := strings.TrimSpace(raw)
	n := strings.ToUpper(strings.Join(strings.Fields(trimmed), ""))
	switch {
	case gbAllDigits.MatchString(n):
		return strings.Repeat("0", 8-len(n)) + n, nil
	case gbOneLetter.MatchString(n), gbSociety.MatchString(n):
		return n, nil
	}
	if m := gbTwoLetters.FindStringSubmatch(n); m != nil {
		return m[1] + strings.Repeat("0", 6-len(m[2])) + m[2], nil
	}
	return "", onboarding.ErrCompanyNumberMalformed(trimmed, nameCH)
}

// normalizeIE applies the CRO rules: 1 to 6 digits, called without leading
// zeros; zero itself is not a company number.
func normalizeIE(raw string) (string, error) {
	trimmed := strings.TrimSpace(raw)
	if !ieDigits.MatchString(trimmed) {
		return "", onboarding.ErrCompanyNumberMalformed(trimmed, nameCRO)
	}
	n := strings.TrimLeft(trimmed, "0")
	if n == "" {
		return "", onboarding.ErrCompanyNumberMalformed(trimmed, nameCRO)
	}
	return n, nil
}
