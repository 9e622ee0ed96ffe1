package server

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"onboard/onboarding"
)

// The applicant form's binding: a form post becomes the JSON value each
// field takes through the API (so one implementation validates both), and
// a stored (or just posted) JSON value becomes what the page's controls
// show.

// addressParts are the members of an address, in the order shown.
var addressParts = [...]string{"line1", "line2", "city", "region", "postcode", "country"}

// bindField reads field f's controls, named after name, from a form post
// and returns its value as JSON: null when left empty.
func bindField(f *onboarding.Field, name string, form url.Values) json.RawMessage {
	get := func(k string) string { return strings.TrimSpace(form.Get(k)) }
	switch f.Type {
	case onboarding.TypeMultiSelect:
		vals := form[name]
		if len(vals) == 0 {
			return jsonNull
		}
		return toJSON(vals)
	case onboarding.TypeBoolean:
		switch v := get(name); v {
		case "true":
			return json.RawMessage("true")
		case "false":
			return json.RawMessage("false")
		case "":
			return jsonNull
		default:
			// Not one of the page's choices: refused, not taken as no
			// answer (which would clear the stored one).
			return toJSON(v)
		}
	case onboarding.TypePercentage:
		return numberOrString(get(name))
	case onboarding.TypeCurrency:
		amount, cur := get(name+".amount"), get(name+".currency")
		if amount == "" {
			return jsonNull
		}
		return toJSON(map[string]json.RawMessage{"amount": numberOrString(strings.ReplaceAll(amount, ",", "")), "currency": toJSON(cur)})
	case onboarding.TypeAddress:
		a := map[string]string{}
		for _, p := range addressParts {
			if v := get(name + "." + p); v != "" {
				a[p] = v
			}
		}
		if len(a) == 0 {
			return jsonNull
		}
		if c, ok := a["country"]; ok {
			a["country"] = strings.ToUpper(c)
		}
		return toJSON(a)
	case onboarding.TypeDate:
		return bindDate(get(name+".day"), get(name+".month"), get(name+".year"))
	}
	if isCountry(f) {
		return toJSON(strings.ToUpper(get(name)))
	}
	if isWebAddress(f) && bareHost.MatchString(get(name)) {
		// "northwind.example" is a web address without its scheme.
		return toJSON("https://" + get(name))
	}
	return toJSON(get(name))
}

// isWebAddress reports whether f asks for a web address (its pattern
// requires http:// or https://).
func isWebAddress(f *onboarding.Field) bool {
	return f.Type == onboarding.TypeText && strings.HasPrefix(f.Pattern, "^https?://")
}

// bareHost matches a web address typed without its scheme: a name with a
// dot, and perhaps a path ("www.northwind.example/about").
var bareHost = regexp.MustCompile(`^[^\s/:@]+\.[^\s/:@]+(/\S*)?$`)

// bindDate joins the GOV.UK date input's parts into the YYYY-MM-DD the
// domain checks: null when all are empty, YYYY-MM without a day (a
// registry's partial date of birth, kept when the applicant leaves it as
// it was), and otherwise the parts as given, so that one missing or wrong
// part is reported (plainErrors reads them back).
func bindDate(day, month, year string) json.RawMessage {
	if day == "" && month == "" && year == "" {
		return jsonNull
	}
	pad := func(s string) string {
		if len(s) == 1 && s[0] >= '0' && s[0] <= '9' {
			return "0" + s
		}
		return s
	}
	if day == "" && month != "" && year != "" {
		return toJSON(year + "-" + pad(month))
	}
	return toJSON(year + "-" + pad(month) + "-" + pad(day))
}

// dateParts splits a date value (YYYY-MM-DD, YYYY-MM, or what bindDate
// made of incomplete parts) into day, month and year.
func dateParts(s string) (day, month, year string) {
	parts := strings.Split(s, "-")
	switch len(parts) {
	case 3:
		return strings.TrimPrefix(parts[2], "0"), strings.TrimPrefix(parts[1], "0"), parts[0]
	case 2:
		return "", strings.TrimPrefix(parts[1], "0"), parts[0]
	}
	return "", "", s
}

// isCountry reports whether text field f asks for a country: its pattern
// is a two-letter code.
func isCountry(f *onboarding.Field) bool {
	return f.Type == onboarding.TypeText && (f.Pattern == "^[A-Z]{2}$" || f.Pattern == "^[A-Za-z]{2}$")
}

var jsonNull = json.RawMessage("null")

// numberOrString is a JSON number when s is one, else the JSON string s
// (which validation then refuses with its own message), or null when empty.
func numberOrString(s string) json.RawMessage {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if s == "" {
		return jsonNull
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return toJSON(s)
}

func toJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonNull
	}
	return b
}

// fieldView is what a template needs to draw one field's control.
type fieldView struct {
	ID          string // the control's id and name
	Label       string
	Description string
	Type        string
	Required    bool
	ReadOnly    bool
	Error       string
	// PartErrors are the messages of the wrong inputs of a group (an
	// address's "city", a currency's "amount"): only those are marked.
	PartErrors   map[string]string
	Value        string          // text-like fields, select, boolean ("true"/"false")
	Selected     map[string]bool // multi_select
	Address      map[string]string
	Amount       string // currency
	Currency     string
	Options      []onboarding.Option
	Currencies   []string
	MaxLength    int
	InputType    string // the <input type> of text-like fields
	Width        string // a width class fitting short answers (input--width-N), or ""
	InputMode    string
	Autocomplete string
	Pattern      string // checked in the browser too, by form.js
	PatternText  string // form.js's message when Pattern fails
	Confirm      bool   // a declaration: one checkbox
	// Long answers (a text field the catalog lets run past 200
	// characters) get a textarea.
	Long bool
	// Country asks for a country: a select of countries by name.
	Country bool
	// Countries are the choices of a country question, with the stored
	// value first when it is a code the list does not have.
	Countries []countryChoice
	// Day, Month and Year are a date's parts; DateMarked are the parts
	// marked wrong after an error.
	Day, Month, Year string
	DateMarked       map[string]bool
	// Shown is the fingerprint of the value the page first showed, posted
	// back so that a save keeps what others changed meanwhile.
	Shown string
}

// newFieldView draws field f with value raw (JSON, may be nil), under the
// control name name.
func newFieldView(f *onboarding.Field, name string, raw json.RawMessage, errMsg string) fieldView {
	v := fieldView{
		ID: name, Label: f.Label, Description: f.Description, Type: string(f.Type), Required: f.Required,
		Error: errMsg, Options: f.Options, MaxLength: f.MaxLength, InputType: "text", Pattern: f.Pattern,
	}
	if f.Pattern != "" {
		// The same words the server uses when the pattern fails.
		v.PatternText = textError(f, onboarding.Problem{Code: onboarding.ProblemPattern, Pattern: f.Pattern, Text: f.PatternMessage})
	}
	v.Long = f.Type == onboarding.TypeText && f.MaxLength > 200
	v.setValue(f, raw)
	v.setInput(f)
	if f.Type == onboarding.TypeDate {
		v.markDate()
	}
	if f.Type == onboarding.TypeAddress || isCountry(f) {
		v.Countries = countryChoices(v.countryValue())
		v.Country = isCountry(f)
	}
	return v
}

// countryValue is the country code the field shows.
func (v *fieldView) countryValue() string {
	if v.Address != nil {
		return strings.ToUpper(v.Address["country"])
	}
	return strings.ToUpper(v.Value)
}

// countryChoice is one option of a country question.
type countryChoice struct {
	onboarding.Country
	Selected bool
}

// countryChoices are the countries to choose from, value selected; a
// value the list does not have comes first, so that nothing stored is
// lost.
func countryChoices(value string) []countryChoice {
	countries := onboarding.Countries()
	out := make([]countryChoice, 0, len(countries)+1)
	if value != "" && countryName(value) == value {
		out = append(out, countryChoice{onboarding.Country{Code: value, Name: value}, true})
	}
	for _, c := range countries {
		out = append(out, countryChoice{c, c.Code == value})
	}
	return out
}

// markDate marks the parts of a date to fix after an error: the empty
// ones, or all three when none is empty (the date as a whole is wrong).
func (v *fieldView) markDate() {
	if v.Error == "" {
		return
	}
	v.DateMarked = map[string]bool{}
	for part, val := range map[string]string{"day": v.Day, "month": v.Month, "year": v.Year} {
		if val == "" {
			v.DateMarked[part] = true
		}
	}
	if len(v.DateMarked) == 0 {
		v.DateMarked = map[string]bool{"day": true, "month": true, "year": true}
	}
}

// setValue fills the members that show value raw of field f.
func (v *fieldView) setValue(f *onboarding.Field, raw json.RawMessage) {
	switch f.Type {
	case onboarding.TypeMultiSelect:
		var vals []string
		_ = json.Unmarshal(raw, &vals)
		v.Selected = map[string]bool{}
		for _, s := range vals {
			v.Selected[s] = true
		}
	case onboarding.TypeBoolean:
		if s := string(raw); s == "true" || s == "false" {
			v.Value = s
		}
	case onboarding.TypeCurrency:
		var c map[string]json.RawMessage
		_ = json.Unmarshal(raw, &c)
		v.Amount, v.Currency = scalarText(c["amount"]), scalarText(c["currency"])
		v.Currencies = onboarding.CurrencyCodes()
		v.InputMode = "decimal"
	case onboarding.TypeAddress:
		var a map[string]json.RawMessage
		_ = json.Unmarshal(raw, &a)
		v.Address = map[string]string{}
		for _, p := range addressParts {
			v.Address[p] = scalarText(a[p])
		}
	case onboarding.TypeDate:
		v.Value = scalarText(raw)
		v.Day, v.Month, v.Year = dateParts(v.Value)
	default:
		v.Value = scalarText(raw)
	}
}

// textLimits are the browser-side lengths of text fields the catalog
// leaves unbounded: room for any real answer, not for a pasted page.
var textLimits = map[string]int{
	"company_name": 160, "company_number": 20, "tax_id": 30, "bank_account_iban": 42, "website": 200,
	onboarding.FieldPersonFullName: 100, "person_email": 254, "person_nationality": 2,
}

// setInput chooses the kind of <input> of text-like field f. The browser
// may not fill any of them from the applicant's own details: every field
// of the form is about the company or about other people (directors,
// owners), so autocomplete is off.
func (v *fieldView) setInput(f *onboarding.Field) {
	v.Autocomplete = "off"
	if v.MaxLength == 0 {
		v.MaxLength = textLimits[f.ID]
		if v.MaxLength == 0 && f.Type == onboarding.TypeText {
			v.MaxLength = 200
		}
	}
	switch f.Type {
	case onboarding.TypePhone:
		v.InputType, v.MaxLength, v.Width = "tel", 20, "input--width-20"
	case onboarding.TypePercentage:
		v.InputMode, v.Width = "decimal", "input--width-4"
	case onboarding.TypeText:
		// A pattern of exactly two letters is a country code.
		if strings.HasSuffix(f.Pattern, "]{2}$") {
			v.Width = "input--width-2"
		}
		switch {
		case strings.Contains(f.ID, "email"):
			v.InputType = "email"
			v.PatternText = "Enter an email address in the correct format, like name@example.com"
		case isWebAddress(f):
			// A text input, not type=url, which would refuse an address
			// without its scheme; the browser's check accepts one, as the
			// server adds https:// to it.
			v.InputMode = "url"
			v.Pattern = `^(https?://\S+|[^\s/:@]+\.[^\s/:@]+(/\S*)?)$`
		}
	}
}

// scalarText renders a JSON string or number as text; anything else as "".
func scalarText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
