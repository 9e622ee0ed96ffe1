package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestFieldErrors: the summary follows the page's controls, then lists
// reasons about no control in the order the domain found them (by key when
// it does not say), never map order.
func TestFieldErrors(t *testing.T) {
	controls := []labelled{{ID: "name", Label: "Legal name"}, {ID: "type", Label: "Relationship"}, {ID: "country", Label: "Country"}}
	invalid := func(details map[string]string) error {
		return &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Validation failed", Details: details}
	}
	tests := []struct {
		name string
		err  error
		want *formErrors
	}{
		{"no error", nil, nil},
		{"not a validation error", errors.New("disk on fire"), nil},
		{"validation error without details", invalid(nil), nil},
		{"conflict", &onboarding.Error{Kind: onboarding.KindConflict, Message: "x", Details: map[string]string{"name": "taken"}}, nil},
		{
			"controls in page order, then the rest by key",
			invalid(map[string]string{"zeta": "is odd", "country": "is not a code", "alpha": "is wrong", "name": "is required", "mid": "is late"}),
			&formErrors{
				byControl: map[string]string{
					"name": "Legal name is required", "country": "Country is not a code",
					"alpha": "is wrong", "mid": "is late", "zeta": "is odd",
				},
				summary: []errorItem{
					{Anchor: "name", Message: "Legal name is required"},
					{Anchor: "country", Message: "Country is not a code"},
					{Message: "is wrong"},
					{Message: "is late"},
					{Message: "is odd"},
				},
			},
		},
		{
			"controls in page order, then the rest in the order the domain found them",
			onboarding.ErrInvalidFieldValues([]string{"zeta", "country", "alpha"}, map[string]string{"zeta": "is odd", "country": "is not a code", "alpha": "is wrong"}),
			&formErrors{
				byControl: map[string]string{"country": "Country is not a code", "alpha": "is wrong", "zeta": "is odd"},
				summary: []errorItem{
					{Anchor: "country", Message: "Country is not a code"},
					{Message: "is odd"},
					{Message: "is wrong"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fieldErrors(tt.err, controls)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(formErrors{})); diff != "" {
				t.Errorf("fieldErrors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlainErrors: every reason the domain gives a field of the standard
// form, saved through the form, reads as what to do, and names the input
// of a group that is wrong.
func TestPlainErrors(t *testing.T) {
	form := onboarding.StandardForm()
	now := testNow
	tests := []struct {
		field, value string
		want         []partError
	}{
		{"registered_address", `{"line1":"1 High St"}`, []partError{{"city", "Enter the town or city of the registered office address"}, {"country", "Choose the country of the registered office address"}}},
		{"registered_address", `{"city":"Leeds","country":"GB","postcode":"LS1 1AA"}`, []partError{{"line1", "Enter address line 1 of the registered office address, typically the building and street"}}},
		{"registered_address", `{"line1":"1 High St","city":"Leeds","country":"GB"}`, []partError{{"postcode", "Enter the postcode of the registered office address, as a UK address has one"}}},
		{"registered_address", `{"line1":"1 High St","city":"Leeds","country":"Britain"}`, []partError{{"country", "Choose the country of the registered office address from the list"}}},
		{"incorporation_date", `"2019-02-30"`, []partError{{"", "Date of incorporation must be a real date"}}},
		{"incorporation_date", `"16/04/2018"`, []partError{{"", "Date of incorporation must be a real date"}}},
		{"incorporation_date", `"2099-01-01"`, []partError{{"", "Date of incorporation must be today or in the past"}}},
		{"incorporation_date", `"2018-04"`, []partError{{"", "Date of incorporation must include a day"}}},
		{"incorporation_date", `"2018--"`, []partError{{"", "Date of incorporation must include a day and month"}}},
		{"incorporation_date", `"-4-16"`, []partError{{"", "Date of incorporation must include a year"}}},
		{"person_date_of_birth", `"2099-01-01"`, []partError{{"", "Date of birth must be today or in the past"}}},
		{"phone", `"020 7946 0958"`, []partError{{"", "Enter the company phone number in international format, like +44 20 7946 0958"}}},
		{"high_risk_revenue_percentage", `120`, []partError{{"", "Enter the share of revenue from high-risk activities (%) as a number from 0 to 100"}}},
		{"annual_turnover", `{"amount":"lots","currency":"GBP"}`, []partError{{"amount", "Enter the annual turnover in numbers, like 250000"}}},
		{"annual_turnover", `{"amount":5,"currency":"JPY"}`, []partError{{"currency", "Select the currency of the annual turnover"}}},
		{"annual_turnover", `{"amount":1e308,"currency":"GBP"}`, []partError{{"amount", "Annual turnover must be 1000000000000000 or less"}}},
		{"incorporation_date", `"0000-01-01"`, []partError{{"", "Date of incorporation must be a real date, in the year 1000 or later"}}},
		{"company_country", `"ZZ"`, []partError{{"", "Enter the country of incorporation as a two-letter country code, like GB or IE"}}},
		{"industry", `"mining"`, []partError{{"", "Select the industry from the list"}}},
		{"countries_of_operation", `["XX"]`, []partError{{"", "Select the countries of operation from the list"}}},
		{"regulated_entity", `"maybe"`, []partError{{"", "Select yes or no"}}},
		{"website", `"www.example.com"`, []partError{{"", "Enter the website in the correct format, like https://www.example.com"}}},
		{"company_country", `"Britain"`, []partError{{"", "Enter the country of incorporation as a two-letter country code, like GB or IE"}}},
		{"bank_account_iban", `"GB00 WEST 1234 5698 7654 32"`, []partError{{"", "Enter a real IBAN, like GB82 WEST 1234 5698 7654 32"}}},
		{"business_description", `"` + strings.Repeat("x", 2001) + `"`, []partError{{"", "What the business does must be 2000 characters or fewer"}}},
		{"website", `"https://north\u0000wind.example"`, []partError{{"", "Website must not contain tabs, line breaks or other special characters"}}},
	}
	for _, tt := range tests {
		t.Run(tt.field+" "+tt.value[:min(len(tt.value), 30)], func(t *testing.T) {
			f, ok := form.Field(tt.field)
			if !ok {
				t.Fatalf("no field %s", tt.field)
			}
			_, err := f.Normalize(json.RawMessage(tt.value), now)
			if err == nil {
				t.Fatalf("%s accepts %s", tt.field, tt.value)
			}
			var pr onboarding.Problem
			if !errors.As(err, &pr) {
				t.Fatalf("%s: %v is not a Problem", tt.field, err)
			}
			got := plainErrors(f, pr, json.RawMessage(tt.value))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plainErrors(%s, %q) (-want +got):\n%s", tt.field, err, diff)
			}
			for _, pe := range got {
				for _, jargon := range []string{"must match the pattern", "E.164", "line1", "ISO", "JSON", "object"} {
					if strings.Contains(pe.Message, jargon) {
						t.Errorf("%q speaks of %s", pe.Message, jargon)
					}
				}
			}
		})
	}
}

// TestFormWordsEveryProblem: the form has words, or the explicit choice of
// the domain's words after the label, for every problem the domain can
// report, so that a code added without form wording fails here.
func TestFormWordsEveryProblem(t *testing.T) {
	f := &onboarding.Field{ID: "note", Label: "Note", Type: onboarding.TypeText}
	for _, c := range onboarding.ProblemCodes() {
		if m, known := textWording(f, onboarding.Problem{Code: c, Text: "x"}); !known || m == "" {
			t.Errorf("the form has no wording for problem %q (it shows %q)", c, m)
		}
	}
}
