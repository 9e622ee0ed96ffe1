package onboarding

import (
	"context"
	"io"
	"strconv"
)

// Registry checks companies against official company registries, one per
// country. The registry package implements it for the UK (Companies House)
// and Ireland (CRO).
//
// Every operation is declared here, and whether the registry of a country
// offers it is asked explicitly with Supports: an implementation (a test
// fake included) answers for every Feature rather than leaving methods out.
// The Service calls an operation only for a country whose registry
// supports it; an implementation asked anyway answers an error, or nothing
// (no parties, no filings).
type Registry interface {
	// Supports reports whether the registry of country (ISO 3166-1
	// alpha-2, upper case) offers feature.
	Supports(country string, feature Feature) bool
	// VerifyCompany (FeatureVerify) normalises number, looks the company
	// up, and checks that it is active and that name matches the
	// registered name (an empty name skips the name match: RFI requests
	// check only that the company exists and is active). It returns the registry's record of the company, or
	// an *Error with the rejection message: malformed number, not found,
	// not active, name mismatch (all KindInvalid), registry down or
	// throttling (KindUnavailable), or an unexpected answer
	// (ErrRegistryFailed).
	VerifyCompany(ctx context.Context, country, number, name string) (Company, error)
	// NormalizeNumber (FeatureVerify) returns number in the form the
	// registry of country files it under, or the *Error VerifyCompany
	// answers for a malformed number (KindInvalid); it calls no registry.
	NormalizeNumber(country, number string) (string, error)
	// SearchCompanies (FeatureSearch) returns up to limit companies of
	// country whose name matches query, in the registry's order. An empty
	// result is not an error. Errors wrap ErrRegistryUnavailable or
	// ErrRegistryFailed.
	SearchCompanies(ctx context.Context, country, query string, limit int) ([]CompanyMatch, error)
	// Parties (FeatureParties) returns the company's current officers and
	// persons with significant control, merged so that one human appears
	// once. number is the normalised number VerifyCompany returned. Errors
	// wrap ErrRegistryUnavailable or ErrRegistryFailed like VerifyCompany's.
	Parties(ctx context.Context, country, number string) (Parties, error)
	// Filings (FeatureFilings) lists the company's filings that have a
	// downloadable document, newest first.
	Filings(ctx context.Context, country, number string) ([]Filing, error)
	// OpenFiling (FeatureFilings) opens the PDF of f, one of the Filings
	// of a company of country. The caller closes it. Reading fails if the
	// content is not a PDF or is larger than the registry's limit.
	OpenFiling(ctx context.Context, country string, f Filing) (io.ReadCloser, error)
}

// Feature is an operation of a Registry that the registries of some
// countries offer and others do not; Registry.Supports answers per country.
type Feature int

// Features of a Registry.
const (
	// FeatureVerify is VerifyCompany: companies of the country are checked
	// against its registry. Without it a company number is taken as given.
	FeatureVerify Feature = iota + 1
	// FeatureSearch is SearchCompanies: the country's companies can be
	// found by name, which company selection needs.
	FeatureSearch
	// FeatureParties is Parties: the registry publishes the officers and
	// owners of the country's companies, for pre-population.
	FeatureParties
	// FeatureFilings is Filings and OpenFiling: the registry gives the
	// documents the country's companies filed.
	FeatureFilings
)

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
	Source RegistrySource
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

// Parties are the people and legal entities a registry records for a company.
type Parties struct {
	People   []RegistryPerson
	Entities []RegistryEntity
}

// RegistryPerson is a current officer or individual owner of a company.
type RegistryPerson struct {
	Roles     []PersonRole
	FullName  string // "Jane Alexandra Smith"
	FirstName string // forenames: "Jane Alexandra"
	LastName  string // "Smith"
	// DateOfBirth is as precise as the registry gives it: YYYY-MM for
	// Companies House (the day is not public).
	DateOfBirth string
	Nationality string     // ISO 3166-1 alpha-2, or empty when not recognised
	Shares      *ShareBand // ownership of the company's shares; nil when none is recorded
}

// RegistryEntity is a corporate owner (or corporate officer) of a company.
type RegistryEntity struct {
	Name    string
	Type    EntityType // EntityParent for an owner, EntityOther otherwise
	Country string     // ISO 3166-1 alpha-2, or empty when not recognised
	Number  string     // registration number as the registry gives it; may be empty
	Shares  *ShareBand
}

// ShareBand is a registry's ownership band: more than Lower percent, up to
// Upper percent (Companies House: 25-50, 50-75, 75-100).
type ShareBand struct {
	Lower, Upper float64
}

// Label is the band as ownership rows carry it: "50-75".
func (b ShareBand) Label() string {
	return strconv.FormatFloat(b.Lower, 'f', -1, 64) + "-" + strconv.FormatFloat(b.Upper, 'f', -1, 64)
}

// CompanyMatch is one search result.
type CompanyMatch struct {
	Number  string // normalised, ready for VerifyCompany
	Name    string // registered name
	Status  string // the registry's status text ("active", "Normal", "dissolved")
	Active  bool   // VerifyCompany would accept the status
	Address string // one-line registered address, for telling results apart
	// IncorporationDate is YYYY-MM-DD, or empty when unknown.
	IncorporationDate string
}

// Filing is one filed document in a registry's filing history.
type Filing struct {
	// Ref identifies the filing in the registry (CH transaction_id); it is
	// stable, so a resumed fetch skips filings already stored.
	Ref string
	// DocumentType is the filing's kind in onboard's terms
	// (certificate_of_incorporation, annual_accounts, ...).
	DocumentType string
	FilingDate   string // YYYY-MM-DD, or empty
	FileName     string // a file name for downloads, ending in .pdf
	// Document locates the document for OpenFiling; opaque outside the registry.
	Document string
}

// backgroundKey marks a context as background work.
type backgroundKey struct{}

// Background marks ctx as background work (the registry documents job):
// registries give such requests only part of their rate limit, so that
// requests a partner is waiting on keep finding room.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx was marked by Background.
func IsBackground(ctx context.Context) bool {
	v, _ := ctx.Value(backgroundKey{}).(bool)
	return v
}
