package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"onboard/onboarding"
)

// companiesHouse is the adapter for the Companies House Public Data API (GB).
// Its only seam is the transport of its endpoint's http.Client.
type companiesHouse struct {
	endpoint
}

// chStatusActive is the company_status of a company that is trading.
const chStatusActive = "active"

// newCompaniesHouse returns the adapter; apiKey is sent as the Basic auth user
// name with an empty password, and not at all when empty.
func newCompaniesHouse(e endpoint, apiKey string) *companiesHouse {
	e.label = "companies house"
	e.name = nameCH
	e.auth = func(r *http.Request) {
		if apiKey != "" {
			r.SetBasicAuth(apiKey, "")
		}
	}
	return &companiesHouse{endpoint: e}
}

// adapter returns the Companies House operations for the Registry: it
// offers every one.
func (c *companiesHouse) adapter() adapter {
	return adapter{
		normalize:    normalizeGB,
		company:      c.company,
		activeStatus: chStatusActive,
		search:       c.search,
		parties:      c.parties,
		filings:      c.filings,
		openFiling:   c.openFiling,
	}
}

// chProfile holds the members of GET /company/{number} that onboard reads.
// Decoding is tolerant: unknown members are ignored, as CH requires.
type chProfile struct {
	CompanyName             string    `json:"company_name"`
	CompanyNumber           string    `json:"company_number"`
	CompanyStatus           string    `json:"company_status"`
	Type                    string    `json:"type"`
	DateOfCreation          string    `json:"date_of_creation"`
	RegisteredOfficeAddress chAddress `json:"registered_office_address"`
}

// chAddress is a Companies House address.
type chAddress struct {
	Premises     string `json:"premises"`
	AddressLine1 string `json:"address_line_1"`
	AddressLine2 string `json:"address_line_2"`
	Locality     string `json:"locality"`
	Region       string `json:"region"`
	PostalCode   string `json:"postal_code"`
}

// company looks up the profile of number (already normalised) and maps it.
// A 404 is onboarding.ErrCompanyNotFound.
func (c *companiesHouse) company(ctx context.Context, number string) (onboarding.Company, error) {
	urlPath := "/company/" + number
	r, err := c.get(ctx, urlPath, nil, "application/json")
	if err != nil {
		return onboarding.Company{}, err
	}
	switch r.status {
	case http.StatusOK:
	case http.StatusNotFound:
		return onboarding.Company{}, onboarding.ErrCompanyNotFound(number, nameCH)
	default:
		return onboarding.Company{}, c.unexpectedStatus(urlPath, r)
	}
	var p chProfile
	if err := json.Unmarshal(r.body, &p); err != nil {
		return onboarding.Company{}, c.failed(urlPath, err)
	}
	if strings.TrimSpace(p.CompanyName) == "" {
		return onboarding.Company{}, c.failed(urlPath, errors.New("profile has no company_name"))
	}
	return onboarding.Company{
		Country:           countryGB,
		Number:            number,
		Name:              p.CompanyName,
		Status:            p.CompanyStatus,
		Type:              chCompanyType(p.Type),
		IncorporationDate: isoDate(p.DateOfCreation),
		RegisteredAddress: p.RegisteredOfficeAddress.address(),
		Source:            onboarding.SourceUKRegistry,
	}, nil
}

// chCompanyType maps a CH company type to the standard form's company_type.
func chCompanyType(t string) string {
	switch {
	case t == "":
		return ""
	case t == "ltd", t == "private-unlimited", t == "private-limited-shares-section-30-exemption",
		strings.HasPrefix(t, "private-limited-guarant-nsc"):
		return "private_limited"
	case t == "plc":
		return "public_limited"
	case t == "llp":
		return "llp"
	case t == "limited-partnership", t == "scottish-partnership":
		return "partnership"
	case t == "charitable-incorporated-organisation", t == "scottish-charitable-incorporated-organisation":
		return "charity"
	}
	return "other"
}

// address maps a registered office: premises and the first line share Line1
// ("Unit 4, 1 Example Street"); empty parts are left out, and lines move up
// when an earlier one is empty. It returns nil when the address is empty.
func (a chAddress) address() *onboarding.Address {
	first := joinNonEmpty(", ", a.Premises, a.AddressLine1)
	return newAddress(countryGB, []string{first, a.AddressLine2}, a.Locality, a.Region, a.PostalCode)
}
