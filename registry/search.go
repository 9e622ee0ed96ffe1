package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"onboard/onboarding"
)

// searchPage is how many results a name search asks the registry for.
const searchPage = 20

// chSearch is GET /search/companies.
type chSearch struct {
	Items []struct {
		Title          string `json:"title"`
		CompanyNumber  string `json:"company_number"`
		CompanyStatus  string `json:"company_status"`
		AddressSnippet string `json:"address_snippet"`
		DateOfCreation string `json:"date_of_creation"`
	} `json:"items"`
}

// SearchCompanies finds companies of country by name: Companies House's
// /search/companies, or the CRO's /companies (companies only, not business
// names). The query is trimmed and lower-cased (both registries ignore
// case); at most limit results (and never more than 20) come back in the
// registry's order. Results whose number onboard could not verify are left
// out.
func (r *Registry) SearchCompanies(ctx context.Context, country, query string, limit int) ([]onboarding.CompanyMatch, error) {
	q := strings.ToLower(foldSpaces(query))
	if limit <= 0 || limit > searchPage {
		limit = searchPage
	}
	a, err := r.adapters.of(country)
	if err != nil {
		return nil, err
	}
	if a.search == nil {
		return nil, errNotOffered(country, "name search")
	}
	out, err := a.search(ctx, q)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

func (c *companiesHouse) search(ctx context.Context, q string) ([]onboarding.CompanyMatch, error) {
	const urlPath = "/search/companies"
	r, err := c.get(ctx, urlPath, url.Values{
		"q": {q}, "items_per_page": {strconv.Itoa(searchPage)}, "start_index": {"0"},
	}, "application/json")
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, c.unexpectedStatus(urlPath, r)
	}
	var res chSearch
	if err := json.Unmarshal(r.body, &res); err != nil {
		return nil, c.failed(urlPath, err)
	}
	out := make([]onboarding.CompanyMatch, 0, len(res.Items))
	for _, it := range res.Items {
		n, err := normalizeGB(it.CompanyNumber)
		if err != nil || strings.TrimSpace(it.Title) == "" {
			continue
		}
		out = append(out, onboarding.CompanyMatch{
			Number:            n,
			Name:              strings.TrimSpace(it.Title),
			Status:            it.CompanyStatus,
			Active:            it.CompanyStatus == chStatusActive,
			Address:           strings.TrimSpace(it.AddressSnippet),
			IncorporationDate: isoDate(it.DateOfCreation),
		})
	}
	return out, nil
}

func (c *cro) search(ctx context.Context, q string) ([]onboarding.CompanyMatch, error) {
	const urlPath = "/companies"
	r, err := c.get(ctx, urlPath, url.Values{
		"company_name": {q}, "company_bus_ind": {"C"}, "searchType": {"2"},
		"skip": {"0"}, "max": {strconv.Itoa(searchPage)}, "format": {"json"},
	}, "application/json")
	if err != nil {
		return nil, err
	}
	body := bytes.TrimSpace(r.body)
	switch {
	case r.status == http.StatusNotFound:
		return nil, nil
	case r.status != http.StatusOK:
		return nil, c.unexpectedStatus(urlPath, r)
	case isCloudflareLimit(body):
		return nil, c.cloudflareLimited(urlPath, r)
	case len(body) == 0, string(body) == "null":
		return nil, nil
	}
	var list []croCompany
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, c.failed(urlPath, err)
	}
	out := make([]onboarding.CompanyMatch, 0, len(list))
	for _, rec := range list {
		n, err := normalizeIE(string(rec.CompanyNum))
		if err != nil || strings.TrimSpace(rec.CompanyName) == "" {
			continue
		}
		status := strings.TrimSpace(rec.CompanyStatusDesc)
		out = append(out, onboarding.CompanyMatch{
			Number:            n,
			Name:              strings.TrimSpace(rec.CompanyName),
			Status:            status,
			Active:            status == croStatusActive,
			Address:           joinNonEmpty(", ", rec.CompanyAddr1, rec.CompanyAddr2, rec.CompanyAddr3, rec.CompanyAddr4),
			IncorporationDate: isoDate(rec.CompanyRegDate),
		})
	}
	return out, nil
}
