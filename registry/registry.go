package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"onboard/onboarding"
)

// Modes of Options.Mode.
const (
	// ModeFixtures answers every registry request from recordings; nothing
	// reaches a network.
	ModeFixtures = "fixtures"
	// ModeLive calls the registries' public APIs.
	ModeLive = "live"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds each registry HTTP request when Options.Timeout is zero.
	DefaultTimeout = 8 * time.Second
	// DefaultCompaniesHouseBaseURL is the Companies House Public Data API.
	DefaultCompaniesHouseBaseURL = "https://api.company-information.service.gov.uk"
	// DefaultCROBaseURL is the CRO Open Services API.
	DefaultCROBaseURL = "https://services.cro.ie/cws"
)

// Registry names as the API messages give them.
const (
	countryGB = "GB"
	countryIE = "IE"
	nameCH    = "UK company registry"
	nameCRO   = "Irish company registry"
)

// Options configures New.
type Options struct {
	// Mode is ModeFixtures or ModeLive.
	Mode string
	// Fixtures is the root of the recordings (the contents of
	// testdata/registry); required in fixtures mode unless Transport is set.
	Fixtures fs.FS
	// CompaniesHouseAPIKey is sent as the Basic auth user name (live mode).
	CompaniesHouseAPIKey string
	// CROEmail and CROAPIKey are sent as Basic base64(email:key) (live mode).
	CROEmail, CROAPIKey string
	// Timeout bounds each registry HTTP request; DefaultTimeout when zero.
	Timeout time.Duration
	// CompaniesHouseBaseURL and CROBaseURL default to
	// DefaultCompaniesHouseBaseURL and DefaultCROBaseURL.
	CompaniesHouseBaseURL, CROBaseURL string
	// Transport, when set, replaces the transport of both registries (tests,
	// and the recorder of `onboard registry record`). Otherwise fixtures
	// mode serves Fixtures and live mode uses a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// CompaniesHouseLimit and CROLimit are the request allowances of the
	// credentials, shared by every request. In live mode a zero Limit means
	// DefaultCompaniesHouseLimit and DefaultCROLimit; fixtures mode has no
	// limit unless one is set.
	CompaniesHouseLimit, CROLimit Limit
	// Now is the limiters' clock; default time.Now.
	Now func() time.Time
	// CountCall, when set, is called once for every request sent to a
	// registry and every one its rate limit held back: with the registry
	// (RegistryUK, RegistryIE) and the outcome (OutcomeOK, ...). It must be
	// safe for concurrent use and return promptly.
	CountCall func(registry, outcome string)
}

// Registry checks companies against Companies House (GB) and the CRO (IE).
// It implements onboarding.Registry and is safe for concurrent use.
type Registry struct {
	adapters adapters
}

var _ onboarding.Registry = (*Registry)(nil)

// New returns a Registry for opts. It fails on an unknown mode, a negative
// timeout, an unusable base URL, or recordings that cannot be loaded.
func New(opts Options) (*Registry, error) {
	timeout := opts.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultTimeout
	case timeout < 0:
		return nil, fmt.Errorf("registry: timeout %v is negative", timeout)
	}
	chBase, err := baseURL(opts.CompaniesHouseBaseURL, DefaultCompaniesHouseBaseURL)
	if err != nil {
		return nil, fmt.Errorf("registry: companies house base URL: %w", err)
	}
	croBase, err := baseURL(opts.CROBaseURL, DefaultCROBaseURL)
	if err != nil {
		return nil, fmt.Errorf("registry: CRO base URL: %w", err)
	}
	rt := opts.Transport
	chLimit, croLimit := opts.CompaniesHouseLimit, opts.CROLimit
	// Answers of the recordings New loads itself are memoized (memo.go); a
	// transport of the caller's may answer differently each time.
	memoized := false
	switch opts.Mode {
	case ModeFixtures:
		if rt == nil {
			memoized = true
			if opts.Fixtures == nil {
				return nil, errors.New("registry: fixtures mode needs the recordings (Options.Fixtures)")
			}
			ft, err := NewFixtureTransport(opts.Fixtures)
			if err != nil {
				return nil, err
			}
			rt = ft
		}
	case ModeLive:
		if chLimit == (Limit{}) {
			chLimit = DefaultCompaniesHouseLimit
		}
		if croLimit == (Limit{}) {
			croLimit = DefaultCROLimit
		}
		if rt == nil {
			if dt, ok := http.DefaultTransport.(*http.Transport); ok {
				rt = dt.Clone()
			} else {
				rt = http.DefaultTransport
			}
		}
	default:
		return nil, fmt.Errorf("registry: unknown mode %q (want %q or %q)", opts.Mode, ModeFixtures, ModeLive)
	}
	client := newHTTPClient(rt)
	as := newAdapters(
		newCompaniesHouse(endpoint{base: chBase, client: client, timeout: timeout,
			limit: newLimiter(chLimit, opts.Now), registry: RegistryUK, count: opts.CountCall}, opts.CompaniesHouseAPIKey),
		newCRO(endpoint{base: croBase, client: client, timeout: timeout,
			limit: newLimiter(croLimit, opts.Now), registry: RegistryIE, count: opts.CountCall}, opts.CROEmail, opts.CROAPIKey),
	)
	if memoized {
		as = as.memoize()
	}
	return &Registry{adapters: as}, nil
}

// baseURL parses raw (or def when raw is empty) and checks it is an absolute
// http(s) URL with no query, fragment or credentials.
func baseURL(raw, def string) (*url.URL, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL") // url.Error would repeat any credentials in raw
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q is not an http(s) URL without credentials, query or fragment", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Supports reports whether the registry of country offers feature.
// Companies House (GB) offers them all; the CRO (IE) verifies and searches
// companies, but publishes no officers or owners and charges for documents.
// No other country has a registry.
func (r *Registry) Supports(country string, feature onboarding.Feature) bool {
	a, ok := r.adapters[country]
	return ok && a.supports(feature)
}

// NormalizeNumber returns number in the form the registry of country files
// it under, or onboarding.ErrCompanyNumberMalformed: the first check of
// VerifyCompany, without calling the registry.
func (r *Registry) NormalizeNumber(country, number string) (string, error) {
	a, err := r.adapters.of(country)
	if err != nil {
		return "", err
	}
	return a.normalize(number)
}

// VerifyCompany normalises number, looks the company up in the registry of
// country, and checks in this order: the number is well formed,
// the company exists, it is active (CH "active", CRO "Normal"), and name
// matches its registered name (MatchName(...).Accepted()). Rejections are the
// onboarding constructors' *onboarding.Error values, returned as they are.
// Registry failures wrap onboarding.ErrRegistryUnavailable (throttling,
// maintenance, timeouts, connection failures) or onboarding.ErrRegistryFailed
// (any other unexpected answer), with the cause in the error text for the
// logs. A country Supports refuses is a programming error, reported as a
// plain error.
func (r *Registry) VerifyCompany(ctx context.Context, country, number, name string) (onboarding.Company, error) {
	a, err := r.adapters.of(country)
	if err != nil {
		return onboarding.Company{}, err
	}
	n, err := a.normalize(number)
	if err != nil {
		return onboarding.Company{}, err
	}
	c, err := a.company(ctx, n)
	if err != nil {
		return onboarding.Company{}, err
	}
	if c.Status != a.activeStatus {
		return onboarding.Company{}, onboarding.ErrCompanyNotActive(c.Number, c.Status)
	}
	given := strings.TrimSpace(name)
	if given != "" && !MatchName(c.Name, given).Accepted() {
		return onboarding.Company{}, onboarding.ErrCompanyNameMismatch(given, c.Number, c.Name)
	}
	return c, nil
}

func errUnsupportedCountry(country string) error {
	return fmt.Errorf("registry: no company registry for country %q", country)
}

// errNotOffered is the plain error of an operation the registry of country
// does not offer (a programming error: callers ask Supports first).
func errNotOffered(country, what string) error {
	return fmt.Errorf("registry: the company registry for country %q offers no %s", country, what)
}

// newAddress builds an address from trimmed parts, moving non-empty lines up
// so that Line1 is set whenever any line is. It returns nil when every part
// is empty.
func newAddress(country string, lines []string, city, region, postcode string) *onboarding.Address {
	var kept []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	a := onboarding.Address{
		City:     strings.TrimSpace(city),
		Region:   strings.TrimSpace(region),
		Postcode: strings.TrimSpace(postcode),
		Country:  country,
	}
	if len(kept) > 0 {
		a.Line1 = kept[0]
	}
	if len(kept) > 1 {
		a.Line2 = strings.Join(kept[1:], ", ")
	}
	if a.Line1 == "" && a.City == "" && a.Region == "" && a.Postcode == "" {
		return nil
	}
	return &a
}

// joinNonEmpty joins the trimmed non-empty parts with sep.
func joinNonEmpty(sep string, parts ...string) string {
	kept := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

// isoDate returns the YYYY-MM-DD date at the start of s ("2019-03-14" or
// "2016-09-01T00:00:00Z"), or "" when there is none or it is the CRO's
// 0001-01-01 placeholder for "unknown".
func isoDate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < len("2006-01-02") {
		return ""
	}
	d := s[:len("2006-01-02")]
	t, err := time.Parse(time.DateOnly, d)
	if err != nil || t.Year() <= 1 {
		return ""
	}
	return d
}
