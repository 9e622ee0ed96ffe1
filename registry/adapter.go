package registry

import (
	"context"
	"io"

	"onboard/onboarding"
)

// adapter is one country's registry as the Registry dispatches to it: the
// Companies House and CRO clients each build one (companiesHouse.adapter,
// cro.adapter), and New keeps them by country. Adding a country is adding
// its client and its adapter.
//
// normalize and company are required. An optional operation left nil is one
// the registry does not offer: Supports says so, search and openFiling
// answer an error, and parties and filings answer none (the CRO publishes
// no officers or owners and charges for documents).
type adapter struct {
	// normalize returns number in the form the registry files it under, or
	// onboarding.ErrCompanyNumberMalformed. It is pure.
	normalize func(number string) (string, error)
	// company looks up a normalised number and maps the profile; a
	// company that does not exist is onboarding.ErrCompanyNotFound.
	company func(ctx context.Context, number string) (onboarding.Company, error)
	// activeStatus is the Status of a company in good standing.
	activeStatus string
	// search finds companies by name (trimmed and lower-cased), at most
	// searchPage of them, in the registry's order.
	search func(ctx context.Context, query string) ([]onboarding.CompanyMatch, error)
	// parties returns the current officers and owners of a normalised number.
	parties func(ctx context.Context, number string) (onboarding.Parties, error)
	// filings lists the filings of a normalised number that have a document.
	filings func(ctx context.Context, number string) ([]onboarding.Filing, error)
	// openFiling opens the document of one of filings' results.
	openFiling func(ctx context.Context, f onboarding.Filing) (io.ReadCloser, error)
}

// adapters holds the adapter of each supported country.
type adapters map[string]adapter

// newAdapters returns the adapters of the registries onboard knows.
func newAdapters(ch *companiesHouse, ie *cro) adapters {
	return adapters{
		countryGB: ch.adapter(),
		countryIE: ie.adapter(),
	}
}

// of returns the adapter of country, or a plain error (a programming error:
// callers ask Supports first) when onboard knows no registry there.
func (as adapters) of(country string) (adapter, error) {
	a, ok := as[country]
	if !ok {
		return adapter{}, errUnsupportedCountry(country)
	}
	return a, nil
}

// supports reports whether a offers feature.
func (a adapter) supports(feature onboarding.Feature) bool {
	switch feature {
	case onboarding.FeatureVerify:
		return a.company != nil
	case onboarding.FeatureSearch:
		return a.search != nil
	case onboarding.FeatureParties:
		return a.parties != nil
	case onboarding.FeatureFilings:
		return a.filings != nil && a.openFiling != nil
	}
	return false
}
