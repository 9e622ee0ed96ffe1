package onboarding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// The currencies a currency field accepts.
var fieldCurrencies = [...]string{"GBP", "EUR", "USD"}

// Messages used in more than one place.
const (
	msgNotString   = "must be a string"
	msgNotBoolean  = "must be a boolean"
	msgNotDate     = "must be a date in YYYY-MM-DD form"
	msgNotPhone    = "must be a phone number in international E.164 form, for example +442079460958"
	msgNotAddress  = "must be an address object with line1, city and country, and optionally line2, region and postcode"
	msgNotCurrency = "must be an object with amount and currency"
	msgNotPercent  = "must be a number from 0 to 100"
	msgNotMulti    = "must be an array of option values"
)

// Normalize validates raw, one JSON value, for the field and returns its
// canonical compact JSON: strings trimmed, phone numbers and IBANs without
// separators, country codes upper-cased, numbers in their shortest form,
// addresses without empty optional members.
//
// It returns (nil, nil) when raw is JSON null or a string that is empty after
// trimming spaces: the field is to be cleared. A value that fails returns an
// error whose message is a short reason without the field id, such as
// "must be one of software, retail, ...", for the caller to prefix with the
// id. now is the reference time of date rules, taken as a date in UTC.
//
// Document fields are never set this way; Normalize always refuses them.
func (f *Field) Normalize(raw json.RawMessage, now time.Time) (json.RawMessage, error) {
	if f.Type == TypeDocument {
		return nil, errors.New("is a document: it is uploaded in the application form and cannot be set as a value")
	}
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || !json.Valid(v) {
		return nil, errors.New("must be a valid JSON value")
	}
	if string(v) == "null" {
		return nil, nil
	}
	var s string
	isString := v[0] == '"'
	if isString {
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, errors.New("must be a valid JSON value")
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, nil
		}
	}

	switch f.Type {
	case TypeText:
		if !isString {
			return nil, errors.New(msgNotString)
		}
		return f.normalizeText(s)
	case TypeSelect:
		if !isString || !f.hasOption(s) {
			return nil, fmt.Errorf("must be one of %s", f.optionValues())
		}
		return marshalValue(s)
	case TypeMultiSelect:
		return f.normalizeMultiSelect(v)
	case TypeBoolean:
		if s := string(v); s != "true" && s != "false" {
			return nil, errors.New(msgNotBoolean)
		}
		return json.RawMessage(slices.Clone(v)), nil
	case TypeDate:
		if !isString {
			return nil, errors.New(msgNotDate)
		}
		return f.normalizeDate(s, now)
	case TypePhone:
		if !isString {
			return nil, errors.New(msgNotPhone)
		}
		return normalizePhone(s)
	case TypeAddress:
		return normalizeAddress(v)
	case TypeCurrency:
		return normalizeCurrency(v)
	case TypePercentage:
		p, ok := parseJSONNumber(v)
		if !ok || p < 0 || p > 100 {
			return nil, errors.New(msgNotPercent)
		}
		return marshalValue(p)
	}
	return nil, fmt.Errorf("cannot be set: the form gives it the unknown type %q", f.Type)
}

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

// Reasons for a value with control characters.
const (
	msgControlOneLine   = "must not contain control characters such as NUL, tab or a line break"
	msgControlMultiline = "must not contain control characters other than line breaks and tabs"
)

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

// checkText refuses control characters (but line breaks and tabs when
// multiline) and more than limit characters in a text value, naming the
// problem without the value.
func checkText(s string, limit int, multiline bool) error {
	if hasControl(s, multiline) {
		if multiline {
			return errors.New(msgControlMultiline)
		}
		return errors.New(msgControlOneLine)
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("must be at most %d characters long (it has %d)", limit, n)
	}
	return nil
}

// checkRequestText checks one text member of a request body (create, RFI
// create) as checkText does a one-line field, naming the member.
func checkRequestText(member, s string, limit int) error {
	if err := checkText(s, limit, false); err != nil {
		return Errorf(KindInvalid, "%s %s", member, err)
	}
	return nil
}

// normalizeText checks a trimmed text value against control characters,
// TextLimit, Pattern and Rule.
func (f *Field) normalizeText(s string) (json.RawMessage, error) {
	if err := checkText(s, f.TextLimit(), f.Multiline()); err != nil {
		return nil, err
	}
	if f.Pattern != "" {
		re, err := compileFieldPattern(f.Pattern)
		if err != nil {
			return nil, fmt.Errorf("cannot be checked: the form's pattern %q is invalid", f.Pattern)
		}
		if !re.MatchString(s) {
			if f.PatternMessage != "" {
				return nil, errors.New(f.PatternMessage)
			}
			return nil, fmt.Errorf("must match the pattern %s", f.Pattern)
		}
		if f.Pattern == patternCountryCode && !IsCountryCode(s) {
			return nil, fmt.Errorf("must be an ISO 3166-1 country code, such as GB or IE; %q is not one", s)
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
		return "", errors.New("must be an IBAN: a 2-letter country code, 2 check digits and 11 to 30 letters or digits, for example GB82 WEST 1234 5698 7654 32")
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
		return "", errors.New("is not a valid IBAN: the check digits do not match; check it for typing errors")
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

// optionValues lists the option values for messages: "a, b, c".
func (f *Field) optionValues() string {
	var b strings.Builder
	for i, o := range f.Options {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.Value)
	}
	return b.String()
}

// normalizeMultiSelect checks an array of distinct option values; the order
// of the request is kept.
func (f *Field) normalizeMultiSelect(v []byte) (json.RawMessage, error) {
	if v[0] != '[' {
		return nil, errors.New(msgNotMulti)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, errors.New(msgNotMulti)
	}
	values := make([]string, 0, len(items))
	for _, item := range items {
		var s string
		if item[0] != '"' || json.Unmarshal(item, &s) != nil {
			return nil, fmt.Errorf("%s, strings from %s", msgNotMulti, f.optionValues())
		}
		if !f.hasOption(s) {
			return nil, fmt.Errorf("must contain only values from %s; %q is not one of them", f.optionValues(), ClipInput(s))
		}
		if slices.Contains(values, s) {
			return nil, fmt.Errorf("must not list %q more than once", ClipInput(s))
		}
		values = append(values, s)
	}
	return marshalValue(values)
}

// normalizeDate checks a real calendar date in YYYY-MM-DD form and the
// not_future rule.
// minDate is the earliest date a date field takes: a year before 1000
// (0000, 0019) is a typing slip, while a chartered company's incorporation
// can date from the 1600s.
const minDate = "1000-01-01"

// msgDateTooEarly is the reason for a date before minDate.
const msgDateTooEarly = "must be in the year 1000 or later"

func (f *Field) normalizeDate(s string, now time.Time) (json.RawMessage, error) {
	if !datePattern.MatchString(s) {
		return nil, errors.New(msgNotDate)
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return nil, fmt.Errorf("must be a real calendar date; %s does not exist", s)
	}
	if s < minDate {
		return nil, errors.New(msgDateTooEarly)
	}
	// YYYY-MM-DD strings order as the dates do.
	if f.Rule == fieldRuleNotFuture && s > now.UTC().Format(time.DateOnly) {
		return nil, errors.New("must not be in the future")
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
		return nil, errors.New(msgNotPhone)
	}
	return marshalValue(stripped)
}

// addressMembers are the members of an address value, in stored order.
var addressMembers = [...]string{"line1", "line2", "city", "region", "postcode", "country"}

// normalizeAddress checks a structured address (DESIGN §6).
func normalizeAddress(v []byte) (json.RawMessage, error) {
	if v[0] != '{' {
		return nil, errors.New(msgNotAddress)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(v, &members); err != nil {
		return nil, errors.New(msgNotAddress)
	}
	var unknown []string
	for name := range members {
		if !slices.Contains(addressMembers[:], name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("has unknown members %s; an address has only %s",
			strings.Join(unknown, ", "), strings.Join(addressMembers[:], ", "))
	}
	var values [len(addressMembers)]string
	for i, name := range addressMembers {
		m, ok := members[name]
		if !ok || string(m) == "null" {
			continue
		}
		if m[0] != '"' || json.Unmarshal(m, &values[i]) != nil {
			return nil, fmt.Errorf("%s must be a string", name)
		}
		values[i] = strings.TrimSpace(values[i])
		if err := checkText(values[i], MaxAddressPartLength, false); err != nil {
			return nil, fmt.Errorf("%s %s", name, err)
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
		return nil, fmt.Errorf("must include line1, city and country; missing: %s", strings.Join(missing, ", "))
	}
	if !IsCountryCode(a.Country) {
		return nil, fmt.Errorf("country must be a two-letter ISO 3166-1 alpha-2 code, for example GB; got %q", ClipInput(values[5]))
	}
	if a.Country == "GB" && a.Postcode == "" {
		return nil, errors.New("postcode is required when country is GB")
	}
	return marshalValue(a)
}

// maxAmount bounds a currency amount: a thousand trillion, far above any
// company's figures, and low enough that whole amounts are stored exactly
// (a float64 holds every integer up to 2^53, about 9 × 10^15).
const maxAmount = 1e15

// msgAmountTooLarge is the reason for an amount over maxAmount.
const msgAmountTooLarge = "amount must be at most 1000000000000000"

// currencyValue is the stored form of a currency field.
type currencyValue struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// normalizeCurrency checks {"amount": number >= 0, "currency": GBP|EUR|USD}.
func normalizeCurrency(v []byte) (json.RawMessage, error) {
	if v[0] != '{' {
		return nil, errors.New(msgNotCurrency)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(v, &members); err != nil {
		return nil, errors.New(msgNotCurrency)
	}
	var unknown []string
	for name := range members {
		if name != "amount" && name != "currency" {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%s only; unknown members: %s", msgNotCurrency, strings.Join(unknown, ", "))
	}
	amountRaw, okAmount := members["amount"]
	currencyRaw, okCurrency := members["currency"]
	if !okAmount || !okCurrency {
		return nil, errors.New(msgNotCurrency)
	}
	amount, ok := parseJSONNumber(amountRaw)
	if !ok || amount < 0 {
		return nil, errors.New("amount must be a number, 0 or more")
	}
	if amount > maxAmount {
		return nil, errors.New(msgAmountTooLarge)
	}
	var code string
	if currencyRaw[0] != '"' || json.Unmarshal(currencyRaw, &code) != nil || !slices.Contains(fieldCurrencies[:], code) {
		return nil, fmt.Errorf("currency must be one of %s", strings.Join(fieldCurrencies[:], ", "))
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
