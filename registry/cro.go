package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"onboard/onboarding"
)

// cro is the adapter for the CRO Open Services API (IE). Its only seam is the
// transport of its endpoint's http.Client.
type cro struct {
	endpoint
}

// croStatusActive is the company_status_desc of a company in good standing.
const croStatusActive = "Normal"

// newCRO returns the adapter; it sends Basic base64(email:apiKey), and no
// Authorization header when either is empty.
func newCRO(e endpoint, email, apiKey string) *cro {
	e.label = "cro"
	e.name = nameCRO
	e.auth = func(r *http.Request) {
		if email != "" && apiKey != "" {
			r.SetBasicAuth(email, apiKey)
		}
	}
	return &cro{endpoint: e}
}

// adapter returns the CRO operations for the Registry. The CRO publishes
// no officers or owners and charges for documents, so it offers neither.
func (c *cro) adapter() adapter {
	return adapter{
		normalize:    normalizeIE,
		company:      c.company,
		activeStatus: croStatusActive,
		search:       c.search,
	}
}

// croCompany holds the members of a CRO Company object that onboard reads.
type croCompany struct {
	CompanyNum        croNumber `json:"company_num"`
	CompanyName       string    `json:"company_name"`
	CompanyAddr1      string    `json:"company_addr_1"`
	CompanyAddr2      string    `json:"company_addr_2"`
	CompanyAddr3      string    `json:"company_addr_3"`
	CompanyAddr4      string    `json:"company_addr_4"`
	CompanyRegDate    string    `json:"company_reg_date"`
	CompanyStatusDesc string    `json:"company_status_desc"`
	CompTypeDesc      string    `json:"comp_type_desc"`
	Eircode           string    `json:"eircode"`
}

// croNumber is a CRO company_num: a JSON number in real answers, a string in
// some clients' fakes; both decode to the digits.
type croNumber string

// UnmarshalJSON accepts 83740, "83740" and null.
func (n *croNumber) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = croNumber(strings.TrimSpace(s))
		return nil
	}
	var num json.Number
	if err := json.Unmarshal(b, &num); err != nil {
		return err
	}
	if _, err := num.Int64(); err != nil {
		return fmt.Errorf("company_num %s is not an integer", b)
	}
	*n = croNumber(num.String())
	return nil
}

// company looks up number (already normalised: digits, no leading zeros) and
// maps it. A 404, an empty body, null or [] are onboarding.ErrCompanyNotFound.
func (c *cro) company(ctx context.Context, number string) (onboarding.Company, error) {
	urlPath := "/company/" + number + "/c"
	r, err := c.get(ctx, urlPath, url.Values{"format": {"json"}}, "application/json")
	if err != nil {
		return onboarding.Company{}, err
	}
	body := bytes.TrimSpace(r.body)
	switch {
	case r.status == http.StatusNotFound:
		return onboarding.Company{}, onboarding.ErrCompanyNotFound(number, nameCRO)
	case r.status != http.StatusOK && r.status != http.StatusNoContent:
		return onboarding.Company{}, c.unexpectedStatus(urlPath, r)
	case isCloudflareLimit(body):
		return onboarding.Company{}, c.cloudflareLimited(urlPath, r)
	case len(body) == 0, string(body) == "null", string(body) == "[]":
		return onboarding.Company{}, onboarding.ErrCompanyNotFound(number, nameCRO)
	}
	rec, err := decodeCROCompany(body, number)
	if err != nil {
		return onboarding.Company{}, c.failed(urlPath, err)
	}
	return onboarding.Company{
		Country:           countryIE,
		Number:            number,
		Name:              rec.CompanyName,
		Status:            strings.TrimSpace(rec.CompanyStatusDesc),
		Type:              croCompanyType(rec.CompTypeDesc),
		IncorporationDate: isoDate(rec.CompanyRegDate),
		RegisteredAddress: newAddress(countryIE, []string{rec.CompanyAddr1, rec.CompanyAddr2},
			rec.CompanyAddr3, rec.CompanyAddr4, rec.Eircode),
		Source: onboarding.SourceIrishRegistry,
	}, nil
}

// decodeCROCompany decodes a Company object, or the element for number of an
// array of them, and checks it is the company asked for.
func decodeCROCompany(body []byte, number string) (croCompany, error) {
	var list []croCompany
	if body[0] == '[' {
		if err := json.Unmarshal(body, &list); err != nil {
			return croCompany{}, err
		}
	} else {
		var one croCompany
		if err := json.Unmarshal(body, &one); err != nil {
			return croCompany{}, err
		}
		list = append(list, one)
	}
	for _, rec := range list {
		if rec.CompanyNum != "" && string(rec.CompanyNum) != number {
			continue
		}
		if strings.TrimSpace(rec.CompanyName) == "" {
			return croCompany{}, errors.New("company has no company_name")
		}
		return rec, nil
	}
	return croCompany{}, fmt.Errorf("answer holds no company %s", number)
}

// croCompanyType maps a CRO comp_type_desc ("LTD - Private Company Limited by
// Shares", "DAC - Designated Activity Company", "PLC - …") to the standard
// form's company_type. The spelt-out descriptions some records carry
// ("Private limited by shares") map the same way.
func croCompanyType(desc string) string {
	d := strings.ToUpper(strings.TrimSpace(desc))
	switch {
	case d == "":
		return ""
	case hasAnyPrefix(d, "LTD", "DAC", "PRIVATE LIMITED", "PRIVATE COMPANY LIMITED", "DESIGNATED ACTIVITY"):
		return "private_limited"
	case hasAnyPrefix(d, "PLC", "PUBLIC LIMITED"):
		return "public_limited"
	}
	return "other"
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isCloudflareLimit reports whether a CRO body is Cloudflare's rate-limit
// answer, which comes as a 200 with this plain-text body.
func isCloudflareLimit(body []byte) bool {
	return bytes.HasPrefix(body, []byte("error code: 1015"))
}

// cloudflareLimited holds the limiter as a 429 would and reports the
// registry unavailable.
func (c *cro) cloudflareLimited(urlPath string, r *response) error {
	c.limit.throttled(r.header)
	return c.unavailable(urlPath, errors.New("rate limited (error code: 1015)"))
}
