package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

// The sandbox search results (docs/sandbox.md), as the search recordings
// give them.
var (
	matchNorthwind = onboarding.CompanyMatch{Number: "10000001", Name: "NORTHWIND TRADING LIMITED", Status: "active", Active: true,
		Address: "Unit 2, 14 Harbour Road, Spike Island, Bristol, BS1 6XX", IncorporationDate: "2018-04-16"}
	matchNorthernLights = onboarding.CompanyMatch{Number: "10000009", Name: "NORTHERN LIGHTS CATERING LTD", Status: "dissolved",
		Address: "22 Quayside Row, Newcastle upon Tyne, NE1 9XX", IncorporationDate: "2014-03-03"}
	matchBluebellHoldings = onboarding.CompanyMatch{Number: "10000002", Name: "BLUEBELL HOLDINGS PLC", Status: "active", Active: true,
		Address: "Floor 5, 30 Meadow Lane, Leeds, West Yorkshire, LS11 5XX", IncorporationDate: "2012-09-03"}
	matchBluebellGroup = onboarding.CompanyMatch{Number: "10000008", Name: "BLUEBELL GROUP LIMITED", Status: "active", Active: true,
		Address: "30 Meadow Lane, Leeds, West Yorkshire, LS11 5XX", IncorporationDate: "2010-11-30"}
	matchHighland = onboarding.CompanyMatch{Number: "SC100007", Name: "HIGHLAND FISHERIES LTD", Status: "active", Active: true,
		Address: "Pier Office, 3 Shore Street, Ullapool, Ross-shire, IV26 2XX", IncorporationDate: "2015-06-22"}
	matchEmerald = onboarding.CompanyMatch{Number: "100001", Name: "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", Status: "Normal", Active: true,
		Address: "UNIT 12, DOCKLANDS INNOVATION PARK, EAST WALL ROAD, DUBLIN 3, DUBLIN, Ireland", IncorporationDate: "2017-02-14"}
	matchEmeraldIsle = onboarding.CompanyMatch{Number: "100005", Name: "EMERALD ISLE TOURS LIMITED", Status: "Strike Off Listed",
		Address: "2 EXAMPLE TERRACE, MAIN STREET, KILLARNEY, KERRY, Ireland", IncorporationDate: "2009-03-23"}
	matchBaile = onboarding.CompanyMatch{Number: "100003", Name: "BAILE ÁTHA CLIATH TEORANTA", Status: "Normal", Active: true,
		Address: "4 SRÁID NA MAINISTREACH, BAILE ÁTHA CLIATH 1, BAILE ÁTHA CLIATH, Ireland", IncorporationDate: "2004-11-08"}
)

// searchCase is one SearchCompanies call of the sandbox and its results.
type searchCase struct {
	country, query string
	limit          int
	want           []onboarding.CompanyMatch
}

func sandboxSearches() []searchCase {
	return []searchCase{
		{"GB", "north", 20, []onboarding.CompanyMatch{matchNorthwind, matchNorthernLights}},
		{"GB", "  NORTH  ", 20, []onboarding.CompanyMatch{matchNorthwind, matchNorthernLights}},
		{"GB", "bluebell", 20, []onboarding.CompanyMatch{matchBluebellHoldings, matchBluebellGroup}},
		{"GB", "Bluebell", 0, []onboarding.CompanyMatch{matchBluebellHoldings, matchBluebellGroup}},
		{"GB", "highland", 20, []onboarding.CompanyMatch{matchHighland}},
		{"GB", "nothing like it", 20, nil},
		{"GB", "emerald", 20, nil},
		{"IE", "emerald", 20, []onboarding.CompanyMatch{matchEmerald, matchEmeraldIsle}},
		{"IE", "Emerald", -1, []onboarding.CompanyMatch{matchEmerald, matchEmeraldIsle}},
		{"IE", "baile", 20, []onboarding.CompanyMatch{matchBaile}},
		{"IE", "nothing like it", 20, nil},
		{"IE", "north", 20, nil},
		// limit truncates, in the registry's order.
		{"GB", "north", 1, []onboarding.CompanyMatch{matchNorthwind}},
		{"GB", "bluebell", 2, []onboarding.CompanyMatch{matchBluebellHoldings, matchBluebellGroup}},
		{"GB", "bluebell", 50, []onboarding.CompanyMatch{matchBluebellHoldings, matchBluebellGroup}},
		{"IE", "emerald", 1, []onboarding.CompanyMatch{matchEmerald}},
	}
}

func TestSearchCompaniesFixtures(t *testing.T) {
	t.Parallel()
	r := newFixtureRegistry(t, sandbox())
	for _, tt := range sandboxSearches() {
		got, err := r.SearchCompanies(context.Background(), tt.country, tt.query, tt.limit)
		if err != nil {
			t.Errorf("SearchCompanies(%q, %q, %d): %v", tt.country, tt.query, tt.limit, err)
			continue
		}
		if diff := cmp.Diff(got, tt.want, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("SearchCompanies(%q, %q, %d) mismatch (-got +want):\n%s", tt.country, tt.query, tt.limit, diff)
		}
	}
	if _, err := r.SearchCompanies(context.Background(), "FR", "north", 20); err == nil || onboarding.AsError(err) != nil {
		t.Errorf("SearchCompanies(FR) = %v; want a plain error", err)
	}
}

// TestSearchCompaniesRequests checks the requests: the query trimmed,
// spaces folded and lower-cased, the page size fixed.
func TestSearchCompaniesRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		country, query string
		limit          int
		want           sentRequest
	}{
		{"GB", "  NORTH  ", 1, sentRequest{Host: chHost, Path: "/search/companies",
			Query: "items_per_page=20&q=north&start_index=0"}},
		{"GB", "Bluebell   Holdings\tPLC", 5, sentRequest{Host: chHost, Path: "/search/companies",
			Query: "items_per_page=20&q=bluebell+holdings+plc&start_index=0"}},
		{"GB", "A&B=C", 5, sentRequest{Host: chHost, Path: "/search/companies",
			Query: "items_per_page=20&q=a%26b%3Dc&start_index=0"}},
		{"IE", " Baile ", 3, sentRequest{Host: croHost, Path: "/cws/companies",
			Query: "company_bus_ind=C&company_name=baile&format=json&max=20&searchType=2&skip=0"}},
		{"IE", "BAILE ÁTHA", 3, sentRequest{Host: croHost, Path: "/cws/companies",
			Query: "company_bus_ind=C&company_name=baile+%C3%A1tha&format=json&max=20&searchType=2&skip=0"}},
	}
	for _, tt := range tests {
		r, log := newLoggedRegistry(t, sandbox(), Options{})
		if _, err := r.SearchCompanies(context.Background(), tt.country, tt.query, tt.limit); err != nil {
			t.Errorf("SearchCompanies(%q, %q): %v", tt.country, tt.query, err)
		}
		tt.want.Accept = "application/json"
		sent := log.sent()
		for i := range sent {
			// Compare queries regardless of parameter order.
			q, err := url.ParseQuery(sent[i].Query)
			if err != nil {
				t.Fatal(err)
			}
			sent[i].Query = q.Encode()
		}
		if diff := cmp.Diff(sent, []sentRequest{tt.want}); diff != "" {
			t.Errorf("SearchCompanies(%q, %q) requests mismatch (-got +want):\n%s", tt.country, tt.query, diff)
		}
	}
}

func TestSearchCompaniesAnswers(t *testing.T) {
	t.Parallel()
	const chQuery = "items_per_page=20&q=acme&start_index=0"
	const croQuery = "company_bus_ind=C&company_name=acme&format=json&max=20&searchType=2&skip=0"
	type answer struct {
		status int
		json   string
		text   *string
	}
	tests := []struct {
		name    string
		country string
		answer  answer
		want    outcome[[]onboarding.CompanyMatch]
	}{
		{"CH unusable items skipped", "GB", answer{status: 200, json: `{"items":[
			{"title":"BAD NUMBER LTD","company_number":"ABC-1","company_status":"active"},
			{"title":" ","company_number":"10000001","company_status":"active"},
			{"title":" ACME LTD ","company_number":"123","company_status":"liquidation","address_snippet":" 1 Road, Town ","date_of_creation":"1990-01-02"},
			{"title":"ACME OVERSEAS","company_number":"FC012345","company_status":"active"}]}`},
			outcome[[]onboarding.CompanyMatch]{Value: []onboarding.CompanyMatch{
				{Number: "00000123", Name: "ACME LTD", Status: "liquidation", Address: "1 Road, Town", IncorporationDate: "1990-01-02"},
				{Number: "FC012345", Name: "ACME OVERSEAS", Status: "active", Active: true},
			}}},
		{"CH no items", "GB", answer{status: 200, json: `{"kind":"search#companies"}`}, outcome[[]onboarding.CompanyMatch]{}},
		{"CH 503", "GB", answer{status: 503}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryUnavailable(ukRegistry)}},
		{"CH 429", "GB", answer{status: 429}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryUnavailable(ukRegistry)}},
		{"CH 500", "GB", answer{status: 500, json: `{"error":"Internal server error"}`}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryFailed}},
		{"CH 404", "GB", answer{status: 404}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryFailed}},
		{"CH HTML", "GB", answer{status: 200, text: ptr("<html>maintenance</html>")}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryFailed}},
		{"CRO unusable items skipped", "IE", answer{status: 200, json: `[
			{"company_num":0,"company_name":"ZERO LIMITED","company_status_desc":"Normal"},
			{"company_num":1234567,"company_name":"TOO LONG LIMITED","company_status_desc":"Normal"},
			{"company_num":"42","company_name":" ","company_status_desc":"Normal"},
			{"company_num":"042","company_name":"ACME LIMITED ","company_status_desc":" Normal ","company_addr_1":"1 ROAD","company_addr_3":"CORK",
			 "company_reg_date":"0001-01-01T00:00:00Z"}]`},
			outcome[[]onboarding.CompanyMatch]{Value: []onboarding.CompanyMatch{
				{Number: "42", Name: "ACME LIMITED", Status: "Normal", Active: true, Address: "1 ROAD, CORK"},
			}}},
		{"CRO null", "IE", answer{status: 200, json: `null`}, outcome[[]onboarding.CompanyMatch]{}},
		{"CRO empty", "IE", answer{status: 200}, outcome[[]onboarding.CompanyMatch]{}},
		{"CRO 404", "IE", answer{status: 404}, outcome[[]onboarding.CompanyMatch]{}},
		{"CRO 1015", "IE", answer{status: 200, text: ptr("error code: 1015")}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryUnavailable(ieRegistry)}},
		{"CRO 429", "IE", answer{status: 429, text: ptr("error code: 1015")}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryUnavailable(ieRegistry)}},
		{"CRO 500", "IE", answer{status: 500, text: ptr("Request Error")}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryFailed}},
		{"CRO object", "IE", answer{status: 200, json: `{"company_num":100001}`}, outcome[[]onboarding.CompanyMatch]{Err: onboarding.ErrRegistryFailed}},
	}
	for _, tt := range tests {
		host, urlPath, query := chHost, "/search/companies", chQuery
		if tt.country == "IE" {
			host, urlPath, query = croHost, "/cws/companies", croQuery
		}
		resp := recordedResponse{Status: tt.answer.status, BodyText: tt.answer.text}
		if tt.answer.json != "" {
			resp.Body = json.RawMessage(tt.answer.json)
		}
		r := newFixtureRegistry(t, fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", host, urlPath, query, resp)}})
		got, err := r.SearchCompanies(context.Background(), tt.country, "Acme", 20)
		if diff := cmp.Diff(outcomeOf(got, err), tt.want, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: SearchCompanies mismatch (-got +want):\n%s", tt.name, diff)
		}
		if tt.want.Err == onboarding.ErrRegistryFailed && !errors.Is(err, onboarding.ErrRegistryFailed) {
			t.Errorf("%s: error %v does not wrap ErrRegistryFailed", tt.name, err)
		}
	}
}

// TestSearchCompaniesCap checks that at most 20 results come back whatever
// the limit, even when the registry sends more.
func TestSearchCompaniesCap(t *testing.T) {
	t.Parallel()
	items := make([]map[string]any, 30)
	for i := range items {
		items[i] = map[string]any{"title": fmt.Sprintf("ACME %d LIMITED", i), "company_number": fmt.Sprint(10000100 + i), "company_status": "active"}
	}
	body, err := json.Marshal(map[string]any{"items": items})
	if err != nil {
		t.Fatal(err)
	}
	r := newFixtureRegistry(t, fstest.MapFS{"a.json": {Data: recordingJSON(t, "GET", chHost, "/search/companies",
		"items_per_page=20&q=acme&start_index=0", recordedResponse{Status: 200, Body: body})}})
	for _, limit := range []int{0, -5, 20, 21, 100} {
		got, err := r.SearchCompanies(context.Background(), "GB", "acme", limit)
		if err != nil || len(got) != 20 || got[0].Number != "10000100" || got[19].Number != "10000119" {
			t.Errorf("SearchCompanies(limit %d) = %d results, %v; want the first 20", limit, len(got), err)
		}
	}
	if got, _ := r.SearchCompanies(context.Background(), "GB", "acme", 7); len(got) != 7 {
		t.Errorf("SearchCompanies(limit 7) = %d results, want 7", len(got))
	}
}
