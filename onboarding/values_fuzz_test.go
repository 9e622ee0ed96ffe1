package onboarding

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// fuzzFields are the fields FuzzFieldNormalize tries every input on: each field
// of the standard form (text with and without a pattern, names, long text,
// the IBAN rule, select, multi-select, boolean, dates, phone, address,
// currency, percentage, documents), a text field with a pattern of a form
// file, one whose pattern is not a valid regular expression and one of an
// unknown type. (FuzzNormalize in values_test.go checks the fixed point
// only; this target checks the error contract too.)
func fuzzFields() []Field {
	fields := slices.Clone(StandardForm().Fields())
	return append(fields,
		Field{ID: "custom_code", Type: TypeText, Pattern: `^[A-Z]{3}-[0-9]+$`, MaxLength: 12},
		Field{ID: "broken_pattern", Type: TypeText, Pattern: `(`},
		Field{ID: "unknown_type", Type: "colour"},
	)
}

// FuzzFieldNormalize sends one raw JSON value to Field.Normalize for every field
// of the standard form. Normalize must not panic; it returns either a value
// or an error with a message, never both; (nil, nil) only for null or a
// blank string; a value is valid JSON and normalizing it again gives it back
// unchanged (the canonical form is a fixed point).
func FuzzFieldNormalize(f *testing.F) {
	for _, seed := range []string{
		`null`, `""`, `"   "`, `"Northwind Trading Ltd"`, `"  padded  "`, `"line\nbreak"`, `"tab\there"`, `"nul\u0000"`,
		`"software"`, `"mining"`, `["GB","IE"]`, `["GB","GB"]`, `[]`, `[1]`, `[null]`, `["OTHER",`,
		`true`, `false`, `"true"`, `0`, `-0`, `100`, `100.0000001`, `1e2`, `1E-400`, `1e400`, `-1`, `"50"`,
		`"2020-02-29"`, `"2021-02-29"`, `"2999-01-01"`, `"0000-00-00"`, `"2020-2-9"`,
		`"+44 (0)20 7946 0958"`, `"+442079460958"`, `"020 7946 0958"`, `"+1-202-555-0101"`, `"(0)"`,
		`{"line1":"1 High St","city":"London","country":"gb","postcode":"SW1A 1AA"}`,
		`{"line1":"1 Rue","city":"Paris","country":"FR","line2":null}`,
		`{"line1":"1","city":"x","country":"GB"}`, `{"line1":1}`, `{"street":"x"}`, `{}`,
		`{"amount":1000,"currency":"GBP"}`, `{"amount":-0,"currency":"EUR"}`, `{"amount":"1","currency":"USD"}`,
		`{"amount":1e308,"currency":"USD"}`, `{"amount":1,"currency":"JPY"}`, `{"amount":1}`,
		`"GB82 WEST 1234 5698 7654 32"`, `"gb82west12345698765432"`, `"GB00WEST12345698765432"`,
		`"GB"`, `"gb"`, `"https://example.com"`, `"example.com"`, `"ABC-123"`,
		`"jane@northwind.example"`, `"\ud800"`, "\"\xff\xfe\"", `"\u202e"`, ` "x" `, ``, `{`, `[[[[[]]]]]`,
	} {
		f.Add([]byte(seed))
	}
	fields := fuzzFields()
	now := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for i := range fields {
			field := &fields[i]
			got, err := field.Normalize(raw, now)
			switch {
			case err != nil:
				if got != nil {
					t.Fatalf("%s: Normalize(%q) = %s and error %v", field.ID, raw, got, err)
				}
				if err.Error() == "" {
					t.Fatalf("%s: Normalize(%q): error without a message", field.ID, raw)
				}
			case got == nil:
				if !clears(raw) {
					t.Fatalf("%s: Normalize(%q) = nil, nil, but the value is neither null nor blank", field.ID, raw)
				}
			default:
				if !json.Valid(got) {
					t.Fatalf("%s: Normalize(%q) = %q, not valid JSON", field.ID, raw, got)
				}
				again, err := field.Normalize(got, now)
				if err != nil || !bytes.Equal(again, got) {
					t.Fatalf("%s: Normalize(%q) = %s, but normalizing that gives %s, %v", field.ID, raw, got, again, err)
				}
			}
		}
	})
}

// clears reports whether raw is JSON null or a string blank after trimming.
func clears(raw []byte) bool {
	v := bytes.TrimSpace(raw)
	if string(v) == "null" {
		return true
	}
	var s string
	return len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && len(bytes.TrimSpace([]byte(s))) == 0
}
