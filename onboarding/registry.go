package onboarding

import "context"

// Registry validates companies against an official company registry. The
// registry package implements it for the UK (Companies House) and Ireland
// (CRO).
type Registry interface {
	// Validates reports whether companies of country (ISO 3166-1 alpha-2,
	// upper case) are checked against a registry.
	Validates(country string) bool
	// Searches reports whether the registry of country can search companies
	// by name (needed for company selection).
	Searches(country string) bool
	// VerifyCompany normalises number, looks the company up, and checks that
	// it is active and that name matches the registered name. It returns the
	// registry's record of the company, or an *Error with the DESIGN §5.4
	// message: malformed number, not found, not active, name mismatch (all
	// KindInvalid), registry down or throttling (KindUnavailable), or an
	// unexpected answer (ErrRegistryFailed).
	VerifyCompany(ctx context.Context, country, number, name string) (Company, error)
}

// Company is a registry's record of a company, mapped to onboard's terms.
type Company struct {
	// Country is the registry's country: GB or IE.
	Country string
	// Number is the normalised company number (CH: 8 characters; CRO: digits).
	Number string
	// Name is the registered name, verbatim.
	Name string
	// Status is the registry's own status text (CH "active", CRO "Normal").
	Status string
	// Type is the company type as a value of the standard form's
	// company_type options (private_limited, public_limited, llp,
	// partnership, sole_trader, charity, other); empty when unknown.
	Type string
	// IncorporationDate is YYYY-MM-DD, or empty when unknown.
	IncorporationDate string
	// RegisteredAddress is the registered office, or nil when unknown.
	RegisteredAddress *Address
	// Source names the registry in meta.registry_sources: "uk_registry" or
	// "irish_registry".
	Source string
}

// Address is a structured postal address, the value of address fields.
type Address struct {
	Line1    string `json:"line1"`
	Line2    string `json:"line2,omitempty"`
	City     string `json:"city"`
	Region   string `json:"region,omitempty"`
	Postcode string `json:"postcode,omitempty"`
	Country  string `json:"country"`
}
