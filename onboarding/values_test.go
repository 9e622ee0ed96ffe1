package onboarding

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testNow is 22:00 on 15 June 2025 in New York: already 16 June in UTC, the
// zone date rules use.
var testNow = time.Date(2025, 6, 15, 22, 0, 0, 0, time.FixedZone("EDT", -4*60*60))

// standardField returns the standard form's field id.
func standardField(t testing.TB, id string) *Field {
	t.Helper()
	f, ok := StandardForm().Field(id)
	if !ok {
		t.Fatalf("StandardForm().Field(%q) not found", id)
	}
	return f
}

// customField returns a field the standard form does not have, to reach
// the other rules, or nil.
func customField(id string) *Field {
	switch id {
	case "short":
		return &Field{ID: id, Label: "Short", Type: TypeText, Category: "company", MaxLength: 5}
	case "code":
		return &Field{ID: id, Label: "Code", Type: TypeText, Category: "company", Pattern: `^[0-9]{3}-[0-9]{3}$`}
	case "broken":
		return &Field{ID: id, Label: "Broken", Type: TypeText, Category: "company", Pattern: `([`}
	case "plain":
		return &Field{ID: id, Label: "Plain", Type: TypeDate, Category: "company"}
	case "odd":
		return &Field{ID: id, Label: "Odd", Type: "colour", Category: "company"}
	}
	return nil
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		field string // standard field id
		raw   string
		want  string // canonical JSON; "" when the field is cleared
	}{
		// text
		{"text", "company_name", `"Acme Widgets Ltd"`, `"Acme Widgets Ltd"`},
		{"text trimmed", "company_name", "  \"\\tAcme Widgets Ltd \\n\"  ", `"Acme Widgets Ltd"`},
		{"text with HTML characters", "company_name", `"A & B <Holdings> Ltd"`, `"A & B <Holdings> Ltd"`},
		{"text unicode", "company_name", `"Café Ñandú Ltd"`, `"Café Ñandú Ltd"`},
		{"text pattern", "company_country", `"GB"`, `"GB"`},
		{"text pattern after trim", "company_country", `" IE "`, `"IE"`},
		{"website https", "website", `"https://example.com"`, `"https://example.com"`},
		{"website http", "website", `"http://example.com/shop"`, `"http://example.com/shop"`},
		{"max length exactly", "business_description", `"` + strings.Repeat("é", 2000) + `"`, `"` + strings.Repeat("é", 2000) + `"`},
		{"sensitive text", "tax_id", `"GB123456789"`, `"GB123456789"`},
		{"person-scoped text", "person_nationality", `"FR"`, `"FR"`},

		// iban
		{"iban GB", "bank_account_iban", `"GB82WEST12345698765432"`, `"GB82WEST12345698765432"`},
		{"iban GB spaced", "bank_account_iban", `"GB82 WEST 1234 5698 7654 32"`, `"GB82WEST12345698765432"`},
		{"iban DE", "bank_account_iban", `"DE89370400440532013000"`, `"DE89370400440532013000"`},
		{"iban DE spaced", "bank_account_iban", `"DE89 3704 0044 0532 0130 00"`, `"DE89370400440532013000"`},
		{"iban IE", "bank_account_iban", `"IE29AIBK93115212345678"`, `"IE29AIBK93115212345678"`},
		{"iban IE spaced lower case", "bank_account_iban", `" ie29 aibk 9311 5212 3456 78 "`, `"IE29AIBK93115212345678"`},

		// select
		{"select", "industry", `"software"`, `"software"`},
		{"select last option", "company_type", `"other"`, `"other"`},

		// multi_select
		{"multi select", "countries_of_operation", `["GB","IE"]`, `["GB","IE"]`},
		{"multi select keeps order", "countries_of_operation", `[ "US", "GB", "OTHER" ]`, `["US","GB","OTHER"]`},
		{"multi select empty", "countries_of_operation", `[]`, `[]`},
		{"multi select empty spaced", "countries_of_operation", `[ ]`, `[]`},

		// boolean
		{"boolean true", "regulated_entity", `true`, `true`},
		{"boolean false", "regulated_entity", ` false `, `false`},
		{"confirmation", "confirm_terms", `true`, `true`},

		// date
		{"date", "incorporation_date", `"2019-03-14"`, `"2019-03-14"`},
		{"date leap day", "incorporation_date", `"2024-02-29"`, `"2024-02-29"`},
		{"date at the floor", "incorporation_date", `"1000-01-01"`, `"1000-01-01"`},
		{"date of a chartered company", "incorporation_date", `"1670-05-02"`, `"1670-05-02"`},
		{"date trimmed", "incorporation_date", `" 2019-03-14 "`, `"2019-03-14"`},
		{"date today in UTC", "incorporation_date", `"2025-06-16"`, `"2025-06-16"`},
		{"date of birth", "person_date_of_birth", `"1980-12-31"`, `"1980-12-31"`},

		// phone
		{"phone", "phone", `"+442079460958"`, `"+442079460958"`},
		{"phone with spaces", "phone", `"+44 20 7946 0958"`, `"+442079460958"`},
		{"phone with separators", "person_phone", `"+1 (212) 555-0123"`, `"+12125550123"`},
		{"phone with dots", "phone", `"+353.1.234.5678"`, `"+35312345678"`},
		{"phone shortest", "phone", `"+12345678"`, `"+12345678"`},
		{"phone longest", "phone", `"+123456789012345"`, `"+123456789012345"`},

		// address
		{
			"address GB", "registered_address",
			`{"line1":"1 High Street","city":"London","postcode":"EC1A 1BB","country":"GB"}`,
			`{"line1":"1 High Street","city":"London","postcode":"EC1A 1BB","country":"GB"}`,
		},
		{
			"address all members reordered", "registered_address",
			`{"country":"GB","postcode":"M1 1AE","region":"Greater Manchester","city":"Manchester","line2":"Floor 2","line1":"10 Piccadilly"}`,
			`{"line1":"10 Piccadilly","line2":"Floor 2","city":"Manchester","region":"Greater Manchester","postcode":"M1 1AE","country":"GB"}`,
		},
		{
			"address IE without postcode", "trading_address",
			`{"line1":"1 Main Street","city":"Galway","country":"IE"}`,
			`{"line1":"1 Main Street","city":"Galway","country":"IE"}`,
		},
		{
			"address trimmed, country upper-cased, empty optionals dropped", "person_home_address",
			`{"line1":"  5 Rue de Rivoli ","line2":"","region":" ","city":" Paris","postcode":"75001","country":"fr"}`,
			`{"line1":"5 Rue de Rivoli","city":"Paris","postcode":"75001","country":"FR"}`,
		},

		// currency
		{"currency", "annual_turnover", `{"amount":1250000,"currency":"GBP"}`, `{"amount":1250000,"currency":"GBP"}`},
		{"currency reordered", "annual_turnover", `{ "currency": "EUR", "amount": 99.50 }`, `{"amount":99.5,"currency":"EUR"}`},
		{"currency zero", "expected_monthly_volume", `{"amount":0,"currency":"USD"}`, `{"amount":0,"currency":"USD"}`},
		{"currency at the bound", "annual_turnover", `{"amount":1000000000000000,"currency":"USD"}`, `{"amount":1000000000000000,"currency":"USD"}`},
		{"currency negative zero", "expected_monthly_volume", `{"amount":-0,"currency":"USD"}`, `{"amount":0,"currency":"USD"}`},
		{"currency exponent", "annual_turnover", `{"amount":1.5e6,"currency":"GBP"}`, `{"amount":1500000,"currency":"GBP"}`},

		// percentage
		{"percentage", "high_risk_revenue_percentage", `12.5`, `12.5`},
		{"percentage zero", "high_risk_revenue_percentage", `0`, `0`},
		{"percentage hundred", "high_risk_revenue_percentage", `100`, `100`},
		{"percentage trailing zeros", "high_risk_revenue_percentage", `100.000`, `100`},

		// clearing
		{"clear text with null", "company_name", `null`, ""},
		{"clear text with empty string", "company_name", `""`, ""},
		{"clear text with spaces", "company_name", `"   "`, ""},
		{"clear select", "industry", `""`, ""},
		{"clear multi select", "countries_of_operation", `null`, ""},
		{"clear boolean", "regulated_entity", `""`, ""},
		{"clear date", "incorporation_date", ` null `, ""},
		{"clear phone", "phone", `""`, ""},
		{"clear address", "registered_address", `null`, ""},
		{"clear address with empty string", "registered_address", `""`, ""},
		{"clear currency", "annual_turnover", `""`, ""},
		{"clear percentage", "high_risk_revenue_percentage", `null`, ""},
		{"clear iban", "bank_account_iban", `""`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := standardField(t, tt.field)
			got, err := f.Normalize(json.RawMessage(tt.raw), testNow)
			if err != nil {
				t.Fatalf("%s.Normalize(%s) error: %v", tt.field, tt.raw, err)
			}
			if tt.want == "" {
				if got != nil {
					t.Errorf("%s.Normalize(%s) = %s, want nil (cleared)", tt.field, tt.raw, got)
				}
				return
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("%s.Normalize(%s) mismatch (-got +want):\n%s", tt.field, tt.raw, diff)
			}
			// The canonical form is a fixed point.
			again, err := f.Normalize(got, testNow)
			if err != nil || string(again) != string(got) {
				t.Errorf("%s.Normalize(%s) = %s, %v; want %s, nil", tt.field, got, again, err, got)
			}
		})
	}
}

func TestNormalizeCustomFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		field string // customField id
		raw   string
		want  string
	}{
		{"max length in runes", "short", `"ÉÉÉÉÉ"`, `"ÉÉÉÉÉ"`},
		{"max length after trim", "short", `"  abcde  "`, `"abcde"`},
		{"form-file pattern", "code", `"123-456"`, `"123-456"`},
		{"date in the future without rule", "plain", `"2100-01-01"`, `"2100-01-01"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := customField(tt.field).Normalize(json.RawMessage(tt.raw), testNow)
			if err != nil {
				t.Fatalf("%s.Normalize(%s) error: %v", tt.field, tt.raw, err)
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("%s.Normalize(%s) mismatch (-got +want):\n%s", tt.field, tt.raw, diff)
			}
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	t.Parallel()
	const (
		industries = "software, financial_services, retail, e_commerce, professional_services, manufacturing, hospitality, healthcare, construction, transport, other"
		countries  = "GB, IE, FR, DE, ES, IT, NL, US, OTHER"
		ibanFormat = "must be an IBAN: a 2-letter country code, 2 check digits and 11 to 30 letters or digits, for example GB82 WEST 1234 5698 7654 32"
		ibanCheck  = "is not a valid IBAN: the check digits do not match; check it for typing errors"
		phone      = "must be a phone number in international E.164 form, for example +442079460958"
		address    = "must be an address object with line1, city and country, and optionally line2, region and postcode"
		currency   = "must be an object with amount and currency"
		percentage = "must be a number from 0 to 100"
		date       = "must be a date in YYYY-MM-DD form"
		document   = "is a document: it is uploaded in the application form and cannot be set as a value"
	)
	tests := []struct {
		name  string
		field string // standard field id, or the ID of a custom field below
		raw   string
		want  string
	}{
		// any type
		{"invalid JSON", "company_name", `"unterminated`, "must be a valid JSON value"},
		{"empty raw", "company_name", ``, "must be a valid JSON value"},
		{"two values", "company_name", `"a" "b"`, "must be a valid JSON value"},

		// text
		{"text number", "company_number", `12345678`, "must be a string"},
		{"text object", "company_name", `{"name":"Acme"}`, "must be a string"},
		{"text boolean", "tax_id", `true`, "must be a string"},
		{"text pattern", "company_country", `"gb"`, "must be a two-letter country code in capitals, such as GB or IE"},
		{"text pattern too long", "company_country", `"GBR"`, "must be a two-letter country code in capitals, such as GB or IE"},
		{"country code not assigned", "company_country", `"ZZ"`, `must be an ISO 3166-1 country code, such as GB or IE; "ZZ" is not one`},
		{"nationality UK is not a code", "person_nationality", `"UK"`, `must be an ISO 3166-1 country code, such as GB or IE; "UK" is not one`},
		{"address country not assigned", "trading_address", `{"line1":"a","city":"X","postcode":"AB1","country":"ZZ"}`, `country must be a two-letter ISO 3166-1 alpha-2 code, for example GB; got "ZZ"`},
		{"website without scheme", "website", `"example.com"`, "must start with https:// or http://, for example https://example.com"},
		{"text too long", "business_description", `"` + strings.Repeat("é", 2001) + `"`, "must be at most 2000 characters long (it has 2001)"},
		{"custom max length", "short", `"abcdef"`, "must be at most 5 characters long (it has 6)"},
		{"custom pattern", "code", `"123456"`, "must match the pattern ^[0-9]{3}-[0-9]{3}$"},
		{"broken pattern", "broken", `"x"`, `cannot be checked: the form's pattern "([" is invalid`},

		// iban
		{"iban checksum", "bank_account_iban", `"GB82WEST12345698765433"`, ibanCheck},
		{"iban transposed digits", "bank_account_iban", `"DE89370400440532031000"`, ibanCheck},
		{"iban check digits", "bank_account_iban", `"IE30AIBK93115212345678"`, ibanCheck},
		{"iban too short", "bank_account_iban", `"GB82WEST1234"`, ibanFormat},
		{"iban too long", "bank_account_iban", `"GB82` + strings.Repeat("1", 31) + `"`, ibanFormat},
		{"iban letters for check digits", "bank_account_iban", `"GBXXWEST12345698765432"`, ibanFormat},
		{"iban punctuation", "bank_account_iban", `"GB82-WEST-1234-5698-7654-32"`, ibanFormat},
		{"iban number", "bank_account_iban", `82`, "must be a string"},

		// select
		{"select off list", "industry", `"mining"`, "must be one of " + industries},
		{"select wrong case", "company_type", `"LLP"`, "must be one of private_limited, public_limited, llp, partnership, sole_trader, charity, other"},
		{"select number", "industry", `3`, "must be one of " + industries},
		{"select array", "industry", `["software"]`, "must be one of " + industries},

		// multi_select
		{"multi select string", "countries_of_operation", `"GB"`, "must be an array of option values"},
		{"multi select object", "countries_of_operation", `{"GB":true}`, "must be an array of option values"},
		{"multi select off list", "countries_of_operation", `["GB","XX"]`, `must contain only values from ` + countries + `; "XX" is not one of them`},
		{"multi select lower case", "countries_of_operation", `["gb"]`, `must contain only values from ` + countries + `; "gb" is not one of them`},
		{"multi select duplicate", "countries_of_operation", `["GB","IE","GB"]`, `must not list "GB" more than once`},
		{"multi select number item", "countries_of_operation", `["GB",1]`, "must be an array of option values, strings from " + countries},
		{"multi select null item", "countries_of_operation", `[null]`, "must be an array of option values, strings from " + countries},

		// boolean
		{"boolean string", "regulated_entity", `"true"`, "must be a boolean"},
		{"boolean number", "regulated_entity", `1`, "must be a boolean"},
		{"confirmation string", "confirm_accuracy", `"yes"`, "must be a boolean"},

		// date
		{"date not leap year", "incorporation_date", `"2023-02-29"`, "must be a real calendar date; 2023-02-29 does not exist"},
		{"date february 30", "incorporation_date", `"2023-02-30"`, "must be a real calendar date; 2023-02-30 does not exist"},
		{"date month 13", "person_date_of_birth", `"1990-13-01"`, "must be a real calendar date; 1990-13-01 does not exist"},
		{"date day zero", "person_date_of_birth", `"1990-01-00"`, "must be a real calendar date; 1990-01-00 does not exist"},
		{"date future", "incorporation_date", `"2025-06-17"`, "must not be in the future"},
		{"date far future", "incorporation_date", `"2100-01-01"`, "must not be in the future"},
		{"date other order", "incorporation_date", `"14/03/2019"`, date},
		{"date with time", "incorporation_date", `"2019-03-14T00:00:00Z"`, date},
		{"date short", "incorporation_date", `"2019-3-14"`, date},
		{"date number", "incorporation_date", `20190314`, date},

		// phone
		{"phone without plus", "phone", `"02079460958"`, phone},
		{"phone leading zero", "phone", `"+0442079460958"`, phone},
		{"phone too short", "phone", `"+4420794"`, phone},
		{"phone too long", "phone", `"+4420794609581234"`, phone},
		{"phone letters", "phone", `"+44 20 CALL NOW"`, phone},
		{"phone slash", "person_phone", `"+44/2079460958"`, phone},
		{"phone number", "phone", `442079460958`, phone},

		// address
		{"address string", "registered_address", `"1 High Street, London"`, address},
		{"address array", "registered_address", `["1 High Street"]`, address},
		{
			"address GB without postcode", "registered_address",
			`{"line1":"1 High Street","city":"London","country":"GB"}`,
			"postcode is required when country is GB",
		},
		{
			"address gb without postcode", "registered_address",
			`{"line1":"1 High Street","city":"London","postcode":"  ","country":"gb"}`,
			"postcode is required when country is GB",
		},
		{
			"address unknown members", "trading_address",
			`{"line1":"1 High Street","city":"London","postcode":"EC1A 1BB","country":"GB","zip":"x","address_line_1":"y"}`,
			"has unknown members address_line_1, zip; an address has only line1, line2, city, region, postcode, country",
		},
		{
			"address missing required", "registered_address",
			`{"line2":"Floor 2","country":"IE"}`,
			"must include line1, city and country; missing: line1, city",
		},
		{"address empty object", "registered_address", `{}`, "must include line1, city and country; missing: line1, city, country"},
		{
			"address blank city", "registered_address",
			`{"line1":"1 Main Street","city":"  ","country":"IE"}`,
			"must include line1, city and country; missing: city",
		},
		{
			"address member not a string", "registered_address",
			`{"line1":1,"city":"London","postcode":"EC1A 1BB","country":"GB"}`,
			"line1 must be a string",
		},
		{
			"address optional part null", "trading_address",
			`{"line1":"1 Rue","city":"Paris","country":"FR","region":null}`,
			"region must be a string",
		},
		{
			"address required part null", "registered_address",
			`{"line1":null,"city":"London","postcode":"EC1A 1BB","country":"GB"}`,
			"line1 must be a string",
		},
		{
			"address country name", "registered_address",
			`{"line1":"1 Main Street","city":"Dublin","country":"Ireland"}`,
			`country must be a two-letter ISO 3166-1 alpha-2 code, for example GB; got "Ireland"`,
		},
		{
			"address country digits", "person_home_address",
			`{"line1":"1 Main Street","city":"Dublin","country":"1E"}`,
			`country must be a two-letter ISO 3166-1 alpha-2 code, for example GB; got "1E"`,
		},

		// currency
		{"currency number", "annual_turnover", `1000`, currency},
		{"currency string", "annual_turnover", `"1000 GBP"`, currency},
		{"currency missing currency", "annual_turnover", `{"amount":1000}`, currency},
		{"currency missing amount", "annual_turnover", `{"currency":"GBP"}`, currency},
		{"currency extra member", "annual_turnover", `{"amount":1,"currency":"GBP","period":"year"}`, currency + " only; unknown members: period"},
		{"currency negative", "annual_turnover", `{"amount":-1,"currency":"GBP"}`, "amount must be a number, 0 or more"},
		{"currency amount string", "annual_turnover", `{"amount":"1000","currency":"GBP"}`, "amount must be a number, 0 or more"},
		{"currency amount overflow", "annual_turnover", `{"amount":1e400,"currency":"GBP"}`, "amount must be at most 1000000000000000"},
		{"currency amount of 5,000 digits", "annual_turnover", `{"amount":` + strings.Repeat("9", 5000) + `,"currency":"GBP"}`, "amount must be at most 1000000000000000"},
		{"currency amount negative overflow", "annual_turnover", `{"amount":-1e400,"currency":"GBP"}`, "amount must be a number, 0 or more"},
		{"percentage overflow", "high_risk_revenue_percentage", `1e400`, "must be a number from 0 to 100"},
		{"currency amount over the bound", "annual_turnover", `{"amount":1e308,"currency":"GBP"}`, "amount must be at most 1000000000000000"},
		{"currency amount past exact integers", "annual_turnover", `{"amount":99999999999999999999,"currency":"GBP"}`, "amount must be at most 1000000000000000"},
		{"date year 0000", "incorporation_date", `"0000-01-01"`, "must be in the year 1000 or later"},
		{"date year 999", "incorporation_date", `"0999-12-31"`, "must be in the year 1000 or later"},
		{"currency unknown code", "expected_monthly_volume", `{"amount":1,"currency":"JPY"}`, "currency must be one of GBP, EUR, USD"},
		{"currency lower case code", "expected_monthly_volume", `{"amount":1,"currency":"gbp"}`, "currency must be one of GBP, EUR, USD"},
		{"currency code number", "expected_monthly_volume", `{"amount":1,"currency":826}`, "currency must be one of GBP, EUR, USD"},

		// percentage
		{"percentage over", "high_risk_revenue_percentage", `100.01`, percentage},
		{"percentage negative", "high_risk_revenue_percentage", `-1`, percentage},
		{"percentage string", "high_risk_revenue_percentage", `"50"`, percentage},
		{"percentage percent sign", "high_risk_revenue_percentage", `"50%"`, percentage},

		// document: never a value, not even a clearing one
		{"document", "certificate_of_incorporation", `"file.pdf"`, document},
		{"document null", "person_id_document", `null`, document},

		{"unknown type", "odd", `"red"`, `cannot be set: the form gives it the unknown type "colour"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := customField(tt.field)
			if f == nil {
				f = standardField(t, tt.field)
			}
			got, err := f.Normalize(json.RawMessage(tt.raw), testNow)
			if err == nil {
				t.Fatalf("%s.Normalize(%s) = %s, nil; want error %q", tt.field, tt.raw, got, tt.want)
			}
			if got != nil {
				t.Errorf("%s.Normalize(%s) = %s with an error; want nil", tt.field, tt.raw, got)
			}
			if diff := cmp.Diff(err.Error(), tt.want); diff != "" {
				t.Errorf("%s.Normalize(%s) error mismatch (-got +want):\n%s", tt.field, tt.raw, diff)
			}
		})
	}
}

// FuzzNormalize checks, for every value field of the standard form, that an
// accepted value is valid JSON and normalizes to itself.
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{
		`"Acme Ltd"`, `"GB82 WEST 1234 5698 7654 32"`, `["GB","IE"]`, `true`, `"2024-02-29"`,
		`"+44 20 7946 0958"`, `{"line1":"1 High St","city":"London","postcode":"E1","country":"gb"}`,
		`{"amount":1.50,"currency":"EUR"}`, `12.5`, `null`, `""`, `-0`, `1e2`,
	} {
		f.Add(seed)
	}
	form := StandardForm()
	f.Fuzz(func(t *testing.T, raw string) {
		for _, field := range form.Fields() {
			if field.Type == TypeDocument {
				continue
			}
			got, err := field.Normalize(json.RawMessage(raw), testNow)
			if err != nil || got == nil {
				continue
			}
			if !json.Valid(got) {
				t.Fatalf("%s.Normalize(%q) = %s, not valid JSON", field.ID, raw, got)
			}
			again, err := field.Normalize(got, testNow)
			if err != nil || string(again) != string(got) {
				t.Fatalf("%s.Normalize(%s) = %s, %v; want %s, nil", field.ID, got, again, err, got)
			}
		}
	})
}

func BenchmarkNormalize(b *testing.B) {
	form := StandardForm()
	values := []struct{ field, raw string }{
		{"company_name", `"Acme Widgets Ltd"`},
		{"company_country", `"GB"`},
		{"industry", `"financial_services"`},
		{"countries_of_operation", `["GB","IE","FR"]`},
		{"regulated_entity", `true`},
		{"incorporation_date", `"2019-03-14"`},
		{"phone", `"+44 20 7946 0958"`},
		{"registered_address", `{"line1":"1 High Street","city":"London","postcode":"EC1A 1BB","country":"GB"}`},
		{"annual_turnover", `{"amount":1250000,"currency":"GBP"}`},
		{"high_risk_revenue_percentage", `12.5`},
		{"bank_account_iban", `"GB82 WEST 1234 5698 7654 32"`},
	}
	type input struct {
		field *Field
		raw   json.RawMessage
	}
	inputs := make([]input, len(values))
	for i, v := range values {
		f, ok := form.Field(v.field)
		if !ok {
			b.Fatalf("no field %q", v.field)
		}
		inputs[i] = input{f, json.RawMessage(v.raw)}
	}
	run := func(b *testing.B, inputs []input) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			in := inputs[i%len(inputs)]
			if _, err := in.field.Normalize(in.raw, testNow); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("mix", func(b *testing.B) { run(b, inputs) })
	for _, in := range inputs {
		b.Run(in.field.ID, func(b *testing.B) { run(b, []input{in}) })
	}
}
