package onboarding

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

var (
	ibanPattern = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	e164Pattern = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)
	datePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// Normalize validates raw, one JSON value, for the field and returns its
// canonical compact JSON: strings trimmed, phone numbers and IBANs without
// separators, country codes upper-cased, numbers in their shortest form,
// addresses without empty optional members.
//
// It returns (nil, nil) when raw is JSON null or a string that is empty after
// trimming spaces: the field is to be cleared. A value that fails returns a
// Problem as the error, whose message is a short reason without the field
// id, such as "must be one of software, retail, ...", for the caller to
// prefix with the id. now is the reference time of date rules, taken as a
// date in UTC.
//
// Document fields are never set this way; Normalize always refuses them.
func (f *Field) Normalize(raw json.RawMessage, now time.Time) (json.RawMessage, error) {
	if f.Type == TypeDocument {
		return fail(Problem{Code: ProblemDocumentValue})
	}
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || !json.Valid(v) {
		return fail(Problem{Code: ProblemNotJSON})
	}
	if string(v) == "null" {
		return nil, nil
	}
	var s string
	isString := v[0] == '"'
	if isString {
		if err := json.Unmarshal(v, &s); err != nil {
			return fail(Problem{Code: ProblemNotJSON})
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, nil
		}
	}

	switch f.Type {
	case TypeText:
		if !isString {
			return fail(Problem{Code: ProblemNotString})
		}
		return f.normalizeText(s)
	case TypeSelect:
		if !isString || !f.hasOption(s) {
			return fail(Problem{Code: ProblemNotOption, Allowed: f.optionValues()})
		}
		return marshalValue(s)
	case TypeMultiSelect:
		return f.normalizeMultiSelect(v)
	case TypeBoolean:
		if s := string(v); s != "true" && s != "false" {
			return fail(Problem{Code: ProblemNotBoolean})
		}
		return json.RawMessage(slices.Clone(v)), nil
	case TypeDate:
		if !isString {
			return fail(Problem{Code: ProblemNotDate})
		}
		return f.normalizeDate(s, now)
	case TypePhone:
		if !isString {
			return fail(Problem{Code: ProblemNotPhone})
		}
		return normalizePhone(s)
	case TypeAddress:
		return normalizeAddress(v)
	case TypeCurrency:
		return normalizeCurrency(v)
	case TypePercentage:
		p, ok := parseJSONNumber(v)
		if !ok || p < 0 || p > 100 {
			return fail(Problem{Code: ProblemNotPercentage})
		}
		return marshalValue(p)
	}
	return fail(Problem{Code: ProblemUnknownType, Value: string(f.Type)})
}

// fail returns the result of a value that fails with problem p.
func fail(p Problem) (json.RawMessage, error) { return nil, p }

// Length limits of text values (in characters) where the form gives none.
const (
	// DefaultTextMaxLength bounds a text field without max_length.
	DefaultTextMaxLength = 500
	// DefaultNameMaxLength bounds a text field without max_length whose id
	// ends in "_name" (company_name, person_full_name), and the names of
	// create and RFI request bodies.
	DefaultNameMaxLength = 200
	// MaxAddressPartLength bounds each part of an address value.
	MaxAddressPartLength = 200
	// multilineFrom is the max_length above which a text field is long
	// text: it takes line breaks (the form shows it as a textarea).
	multilineFrom = 200
)

// TextLimit is the most characters a text field's value may have: its
// MaxLength, or when that is 0 DefaultNameMaxLength for a name (an id
// ending in "_name") and DefaultTextMaxLength for any other text.
func (f *Field) TextLimit() int {
	switch {
	case f.MaxLength > 0:
		return f.MaxLength
	case strings.HasSuffix(f.ID, "_name"):
		return DefaultNameMaxLength
	default:
		return DefaultTextMaxLength
	}
}

// Multiline reports whether f is long text, which may contain line breaks
// and tabs: a text field whose MaxLength is over 200 characters. Every
// other text value is one line.
func (f *Field) Multiline() bool {
	return f.Type == TypeText && f.MaxLength > multilineFrom
}

// hasControl reports whether s contains a control character (Unicode Cc:
// NUL and the other C0 codes, DEL, C1), allowing tab, CR and LF when
// multiline.
func hasControl(s string, multiline bool) bool {
	for _, r := range s {
		if !unicode.IsControl(r) {
			continue
		}
		if multiline && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		return true
	}
	return false
}

// textProblem finds control characters (but line breaks and tabs when
// multiline) and more than limit characters in a text value; bad is false
// when there are none. The problem does not quote the value.
func textProblem(s string, limit int, multiline bool) (p Problem, bad bool) {
	if hasControl(s, multiline) {
		if multiline {
			return Problem{Code: ProblemControlCharactersMultiline}, true
		}
		return Problem{Code: ProblemControlCharacters}, true
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return Problem{Code: ProblemTooLong, Limit: int64(limit), Length: n}, true
	}
	return Problem{}, false
}

// checkRequestText checks one text member of a request body (create, RFI
// create) as textProblem does a one-line field, naming the member.
func checkRequestText(member, s string, limit int) error {
	if p, bad := textProblem(s, limit, false); bad {
		return Errorf(KindInvalid, "%s %s", member, p.Message())
	}
	return nil
}

// normalizeText checks a trimmed text value against control characters,
// TextLimit, Pattern and Rule.
func (f *Field) normalizeText(s string) (json.RawMessage, error) {
	if p, bad := textProblem(s, f.TextLimit(), f.Multiline()); bad {
		return fail(p)
	}
	if f.Pattern != "" {
		re, err := compileFieldPattern(f.Pattern)
		if err != nil {
			return fail(Problem{Code: ProblemBadPattern, Pattern: f.Pattern})
		}
		if !re.MatchString(s) {
			return fail(Problem{Code: ProblemPattern, Pattern: f.Pattern, Text: f.PatternMessage})
		}
		if f.Pattern == patternCountryCode && !IsCountryCode(s) {
			return fail(Problem{Code: ProblemNotCountry, Value: s})
		}
	}
	if f.Rule == fieldRuleIBAN {
		var err error
		if s, err = normalizeIBAN(s); err != nil {
			return nil, err
		}
	}
	return marshalValue(s)
}

// normalizeIBAN removes spaces, upper-cases, and checks the format and the
// ISO 13616 check digits (mod 97 == 1).
func normalizeIBAN(s string) (string, error) {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if !ibanPattern.MatchString(s) {
		return "", Problem{Code: ProblemNotIBAN}
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		if c >= '0' && c <= '9' {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	if rem != 1 {
		return "", Problem{Code: ProblemIBANCheckDigits}
	}
	return s, nil
}

func (f *Field) hasOption(v string) bool {
	for _, o := range f.Options {
		if o.Value == v {
			return true
		}
	}
	return false
}

// optionValues lists the option values, for problems.
func (f *Field) optionValues() []string {
	out := make([]string, len(f.Options))
	for i, o := range f.Options {
		out[i] = o.Value
	}
	return out
}

// normalizeMultiSelect checks an array of distinct option values; the order
// of the request is kept.
func (f *Field) normalizeMultiSelect(v []byte) (json.RawMessage, error) {
	if v[0] != '[' {
		return fail(Problem{Code: ProblemNotOptionList})
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return fail(Problem{Code: ProblemNotOptionList})
	}
	values := make([]string, 0, len(items))
	for _, item := range items {
		var s string
		if item[0] != '"' || json.Unmarshal(item, &s) != nil {
			return fail(Problem{Code: ProblemNotOptionStrings, Allowed: f.optionValues()})
		}
		if !f.hasOption(s) {
			return fail(Problem{Code: ProblemUnknownOption, Allowed: f.optionValues(), Value: ClipInput(s)})
		}
		if slices.Contains(values, s) {
			return fail(Problem{Code: ProblemRepeatedOption, Value: ClipInput(s)})
		}
		values = append(values, s)
	}
	return marshalValue(values)
}

// minYear is the earliest year a date field takes: a year before 1000
// (0000, 0019) is a typing slip, while a chartered company's incorporation
// can date from the 1600s.
const minYear = 1000

// normalizeDate checks a real calendar date in YYYY-MM-DD form and the
// not_future rule.
func (f *Field) normalizeDate(s string, now time.Time) (json.RawMessage, error) {
	if !datePattern.MatchString(s) {
		return fail(Problem{Code: ProblemNotDate})
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return fail(Problem{Code: ProblemNoSuchDate, Value: s})
	}
	if year, _ := strconv.Atoi(s[:4]); year < minYear {
		return fail(Problem{Code: ProblemDateTooEarly, Limit: minYear})
	}
	// YYYY-MM-DD strings order as the dates do.
	if f.Rule == fieldRuleNotFuture && s > now.UTC().Format(time.DateOnly) {
		return fail(Problem{Code: ProblemFutureDate})
	}
	return marshalValue(s)
}

// normalizePhone strips spaces, hyphens, dots and parentheses and checks the
// result is an E.164 number.
func normalizePhone(s string) (json.RawMessage, error) {
	// "+44 (0)20 …" writes the national trunk prefix beside the country
	// code; it is not dialled internationally, so it is not part of E.164.
	if strings.HasPrefix(strings.TrimSpace(s), "+") {
		s = strings.Replace(s, "(0)", "", 1)
	}
	stripped := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.', '(', ')':
			return -1
		}
		return r
	}, s)
	if !e164Pattern.MatchString(stripped) {
		return fail(Problem{Code: ProblemNotPhone})
	}
	return marshalValue(stripped)
}

// addressMembers are the members of an address value, in stored order.
var addressMembers = [...]string{"line1", "line2", "city", "region", "postcode", "country"}

// normalizeAddress checks a structured address.
func normalizeAddress(v []byte) (json.RawMessage, error) {
	if v[0] != '{' {
		return fail(Problem{Code: ProblemNotAddress})
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(v, &members); err != nil {
		return fail(Problem{Code: ProblemNotAddress})
	}
	var unknown []string
	for name := range members {
		if !slices.Contains(addressMembers[:], name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fail(Problem{Code: ProblemAddressMembers, Values: unknown, Allowed: addressMembers[:]})
	}
	var values [len(addressMembers)]string
	for i, name := range addressMembers {
		m, ok := members[name]
		if !ok {
			continue
		}
		// A part is a string: null is refused, not read as absent
		// (leave an optional part out, or send "").
		if m[0] != '"' || json.Unmarshal(m, &values[i]) != nil {
			return fail(Problem{Code: ProblemNotString, Part: name})
		}
		values[i] = strings.TrimSpace(values[i])
		if p, bad := textProblem(values[i], MaxAddressPartLength, false); bad {
			p.Part = name
			return fail(p)
		}
	}
	a := Address{
		Line1: values[0], Line2: values[1], City: values[2],
		Region: values[3], Postcode: values[4], Country: strings.ToUpper(values[5]),
	}
	var missing []string
	for _, m := range []struct{ name, value string }{{"line1", a.Line1}, {"city", a.City}, {"country", a.Country}} {
		if m.value == "" {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return fail(Problem{Code: ProblemAddressIncomplete, Values: missing})
	}
	if !IsCountryCode(a.Country) {
		return fail(Problem{Code: ProblemAddressCountry, Part: "country", Value: ClipInput(values[5])})
	}
	if a.Country == "GB" && a.Postcode == "" {
		return fail(Problem{Code: ProblemPostcodeRequired, Part: "postcode", Value: a.Country})
	}
	return marshalValue(a)
}

// maxAmount bounds a currency amount: a thousand trillion, far above any
// company's figures, and low enough that whole amounts are stored exactly
// (a float64 holds every integer up to 2^53, about 9 × 10^15).
const maxAmount = 1e15

// currencyValue is the stored form of a currency field.
type currencyValue struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// normalizeCurrency checks {"amount": number >= 0, "currency": one of
// CurrencyCodes}.
func normalizeCurrency(v []byte) (json.RawMessage, error) {
	if v[0] != '{' {
		return fail(Problem{Code: ProblemNotCurrency})
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(v, &members); err != nil {
		return fail(Problem{Code: ProblemNotCurrency})
	}
	var unknown []string
	for name := range members {
		if name != "amount" && name != "currency" {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fail(Problem{Code: ProblemCurrencyMembers, Values: unknown})
	}
	amountRaw, okAmount := members["amount"]
	currencyRaw, okCurrency := members["currency"]
	if !okAmount || !okCurrency {
		return fail(Problem{Code: ProblemNotCurrency})
	}
	amount, ok := parseJSONNumber(amountRaw)
	if !ok || amount < 0 {
		return fail(Problem{Code: ProblemNotAmount, Part: "amount"})
	}
	if amount > maxAmount {
		return fail(Problem{Code: ProblemTooLarge, Part: "amount", Limit: maxAmount})
	}
	var code string
	if currencyRaw[0] != '"' || json.Unmarshal(currencyRaw, &code) != nil || !IsCurrencyCode(code) {
		return fail(Problem{Code: ProblemNotOption, Part: "currency", Allowed: CurrencyCodes()})
	}
	return marshalValue(currencyValue{Amount: amount, Currency: code})
}

// parseJSONNumber parses a valid JSON value that must be a number. One too
// large for a float64 (1e400, or 5,000 digits) is an infinity, which every
// caller's upper bound refuses. Negative zero becomes zero.
func parseJSONNumber(v []byte) (float64, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	n, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !math.IsInf(n, 0) {
		return 0, false
	}
	if n == 0 {
		n = 0 // not -0
	}
	return n, true
}

// marshalValue encodes v as compact JSON without HTML escaping, so that
// stored text reads as the applicant wrote it.
func marshalValue(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
