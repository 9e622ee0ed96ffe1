package onboarding

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Limits of a company name search.
const (
	minSearchQuery = 3   // the CRO refuses shorter names
	maxSearchQuery = 160 // longer than any registered name
	searchResults  = 20
)

// Company search errors, shown to the applicant choosing their company.
var (
	ErrSearchQueryTooShort = &Error{Kind: KindInvalid, Message: "Enter at least 3 characters of the company name"}
	ErrSearchQueryTooLong  = &Error{Kind: KindInvalid, Message: "The company name is too long to search for"}
)

// SearchCompanies finds companies by name in the registry of country, for
// company selection (the applicant picks their company when the partner
// gave no number). It answers at most 20 matches in the registry's order,
// within the request's registry budget. Registry trouble is reported as
// VerifyCompany reports it (503 retryable, or 502).
func (s *Service) SearchCompanies(ctx context.Context, country, query string) ([]CompanyMatch, error) {
	q := strings.Join(strings.Fields(query), " ")
	switch n := utf8.RuneCountInString(q); {
	case n < minSearchQuery:
		return nil, ErrSearchQueryTooShort
	case n > maxSearchQuery:
		return nil, ErrSearchQueryTooLong
	}
	if !s.registry.Supports(country, FeatureSearch) {
		return nil, ErrSearchNotAvailable(country)
	}
	ctx, cancel := context.WithTimeout(ctx, s.registryBudget)
	defer cancel()
	return s.registry.SearchCompanies(ctx, country, q, searchResults)
}
