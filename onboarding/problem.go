package onboarding

import (
	"errors"
	"fmt"
	"strings"
)

// ProblemCode names what is wrong with a value: the reason a reader that
// words problems itself (the applicant form) chooses its words by, so that
// it never has to read the API's message.
type ProblemCode string

// The problems of field values and form controls. The comment of each
// gives the Problem members it uses; Problem.Message gives its words.
const (
	// ProblemOther is a problem known only by its words (Text): a
	// configuration's or a form file's.
	ProblemOther ProblemCode = "other"
	// ProblemRequired: no value where one is needed; Text, when set, says
	// what to enter.
	ProblemRequired ProblemCode = "required"
	// ProblemNotJSON: the value is not one JSON value.
	ProblemNotJSON ProblemCode = "not_json"
	// ProblemDocumentValue: a document field was given a value, not a file.
	ProblemDocumentValue ProblemCode = "document_value"
	// ProblemUnknownType: the form gives the field a type this version does
	// not know (Value).
	ProblemUnknownType ProblemCode = "unknown_type"
	// ProblemNotString: the value (or its Part) is not a string.
	ProblemNotString ProblemCode = "not_string"
	// ProblemNotBoolean: the value is not true or false.
	ProblemNotBoolean ProblemCode = "not_boolean"
	// ProblemNotOption: the value (or its Part) is none of Allowed.
	ProblemNotOption ProblemCode = "not_option"
	// ProblemNotOptionList: a multi_select value is not an array.
	ProblemNotOptionList ProblemCode = "not_option_list"
	// ProblemNotOptionStrings: an item of a multi_select value is not a
	// string; Allowed are the option values.
	ProblemNotOptionStrings ProblemCode = "not_option_strings"
	// ProblemUnknownOption: an item (Value) of a multi_select value is
	// none of Allowed.
	ProblemUnknownOption ProblemCode = "unknown_option"
	// ProblemRepeatedOption: a multi_select value lists Value twice.
	ProblemRepeatedOption ProblemCode = "repeated_option"
	// ProblemControlCharacters: one-line text (or its Part) contains a
	// control character.
	ProblemControlCharacters ProblemCode = "control_characters"
	// ProblemControlCharactersMultiline: long text contains a control
	// character other than a line break or a tab.
	ProblemControlCharactersMultiline ProblemCode = "control_characters_multiline"
	// ProblemTooLong: text (or its Part) has more than Limit characters;
	// Length is how many it has, when the message says it.
	ProblemTooLong ProblemCode = "too_long"
	// ProblemBadPattern: the form's Pattern does not compile, so the value
	// cannot be checked.
	ProblemBadPattern ProblemCode = "bad_pattern"
	// ProblemPattern: the text does not match Pattern; Text is the form's
	// pattern_message, when it has one.
	ProblemPattern ProblemCode = "pattern"
	// ProblemNotCountry: text matching the country-code pattern is not an
	// assigned country code (Value).
	ProblemNotCountry ProblemCode = "not_country"
	// ProblemNotTwoLetterCountry: a related company's country is not a
	// country code.
	ProblemNotTwoLetterCountry ProblemCode = "not_two_letter_country"
	// ProblemNotIBAN: the text is not in the form of an IBAN.
	ProblemNotIBAN ProblemCode = "not_iban"
	// ProblemIBANCheckDigits: the IBAN's check digits do not match.
	ProblemIBANCheckDigits ProblemCode = "iban_check_digits"
	// ProblemNotEmail: the text is not an email address.
	ProblemNotEmail ProblemCode = "not_email"
	// ProblemNotDate: the value is not a date in YYYY-MM-DD form.
	ProblemNotDate ProblemCode = "not_date"
	// ProblemNoSuchDate: the date (Value) is not on the calendar.
	ProblemNoSuchDate ProblemCode = "no_such_date"
	// ProblemDateTooEarly: the date is before the year Limit.
	ProblemDateTooEarly ProblemCode = "date_too_early"
	// ProblemFutureDate: the date is after today, against the not_future
	// rule.
	ProblemFutureDate ProblemCode = "future_date"
	// ProblemNotPhone: the value is not a phone number in E.164 form.
	ProblemNotPhone ProblemCode = "not_phone"
	// ProblemNotAddress: the value is not an address object.
	ProblemNotAddress ProblemCode = "not_address"
	// ProblemAddressMembers: an address has members (Values) other than
	// Allowed.
	ProblemAddressMembers ProblemCode = "address_members"
	// ProblemAddressIncomplete: an address lacks the parts Values.
	ProblemAddressIncomplete ProblemCode = "address_incomplete"
	// ProblemAddressCountry: an address's country (Value) is not a country
	// code; Part is "country".
	ProblemAddressCountry ProblemCode = "address_country"
	// ProblemPostcodeRequired: an address in the country Value has no
	// postcode; Part is "postcode".
	ProblemPostcodeRequired ProblemCode = "postcode_required"
	// ProblemNotCurrency: the value is not an amount with its currency.
	ProblemNotCurrency ProblemCode = "not_currency"
	// ProblemCurrencyMembers: a currency value has members (Values) other
	// than amount and currency.
	ProblemCurrencyMembers ProblemCode = "currency_members"
	// ProblemNotAmount: the amount (Part) is not a number, 0 or more.
	ProblemNotAmount ProblemCode = "not_amount"
	// ProblemTooLarge: the amount (Part) is over Limit.
	ProblemTooLarge ProblemCode = "too_large"
	// ProblemNotPercentage: the value is not a number from 0 to 100.
	ProblemNotPercentage ProblemCode = "not_percentage"
	// ProblemNotTicked: a required declaration is not ticked.
	ProblemNotTicked ProblemCode = "not_ticked"
	// ProblemNoRole: a person has no role.
	ProblemNoRole ProblemCode = "no_role"
	// ProblemNoOwner: an ownership statement names no known owner.
	ProblemNoOwner ProblemCode = "no_owner"
	// ProblemNoOwned: an ownership statement names no known owned company.
	ProblemNoOwned ProblemCode = "no_owned"
	// ProblemOwnsItself: an ownership statement has a company own itself.
	ProblemOwnsItself ProblemCode = "owns_itself"
)

// ProblemCodes lists every ProblemCode, for the tests that hold each
// reader of problems to a wording of each.
func ProblemCodes() []ProblemCode {
	return []ProblemCode{
		ProblemOther, ProblemRequired, ProblemNotJSON, ProblemDocumentValue, ProblemUnknownType,
		ProblemNotString, ProblemNotBoolean, ProblemNotOption, ProblemNotOptionList,
		ProblemNotOptionStrings, ProblemUnknownOption, ProblemRepeatedOption,
		ProblemControlCharacters, ProblemControlCharactersMultiline, ProblemTooLong,
		ProblemBadPattern, ProblemPattern, ProblemNotCountry, ProblemNotTwoLetterCountry,
		ProblemNotIBAN, ProblemIBANCheckDigits, ProblemNotEmail, ProblemNotDate,
		ProblemNoSuchDate, ProblemDateTooEarly, ProblemFutureDate, ProblemNotPhone,
		ProblemNotAddress, ProblemAddressMembers, ProblemAddressIncomplete,
		ProblemAddressCountry, ProblemPostcodeRequired, ProblemNotCurrency,
		ProblemCurrencyMembers, ProblemNotAmount, ProblemTooLarge, ProblemNotPercentage,
		ProblemNotTicked, ProblemNoRole, ProblemNoOwner, ProblemNoOwned, ProblemOwnsItself,
	}
}

// Problem is one thing wrong with a value: its code and the parameters
// its words need. Field.Normalize returns one as its error; Problems
// collects them by field. Message is the API's wording of it.
type Problem struct {
	Code ProblemCode
	// Part is the member of a structured value the problem is about
	// ("city" of an address, "amount" of a currency); empty for the value
	// as a whole.
	Part string
	// Limit is the bound the value broke: characters (ProblemTooLong), an
	// amount (ProblemTooLarge) or a year (ProblemDateTooEarly).
	Limit int64
	// Length is the number of characters of a ProblemTooLong value; 0 when
	// the message does not say it.
	Length int
	// Allowed are the values that would have been accepted.
	Allowed []string
	// Values are the members or parts missing or unknown.
	Values []string
	// Value is the input the message quotes (clipped with ClipInput where
	// it may be long), or the name it quotes.
	Value string
	// Pattern is the text field's pattern.
	Pattern string
	// Text is the problem's own words: what to enter (ProblemRequired),
	// the form's pattern_message (ProblemPattern), or the whole message
	// (ProblemOther).
	Text string
}

// Messages used in more than one place.
const (
	msgNotString        = "must be a string"
	msgNotDate          = "must be a date in YYYY-MM-DD form"
	msgNotPhone         = "must be a phone number in international E.164 form, for example +442079460958"
	msgNotCurrency      = "must be an object with amount and currency"
	msgNotPercent       = "must be a number from 0 to 100"
	msgNotMulti         = "must be an array of option values"
	msgControlOneLine   = "must not contain control characters such as NUL, tab or a line break"
	msgControlMultiline = "must not contain control characters other than line breaks and tabs"
)

// Message is the problem in the API's words, without the field id: a
// short reason such as "must be one of software, retail" or, about a
// Part, "city must be a string".
func (p Problem) Message() string {
	m, _ := p.words()
	if p.Part != "" {
		return p.Part + " " + m
	}
	return m
}

// Error returns Message, so that a Problem is an error.
func (p Problem) Error() string { return p.Message() }

// words is the message of p's code, without Part; known is false for a
// code that has none (the message is then the code and Text).
func (p Problem) words() (msg string, known bool) {
	switch p.Code {
	case ProblemOther:
		return p.Text, true
	case ProblemRequired:
		if p.Text != "" {
			return "is required: " + p.Text, true
		}
		return "is required", true
	case ProblemNotJSON:
		return "must be a valid JSON value", true
	case ProblemDocumentValue:
		return "is a document: it is uploaded in the application form and cannot be set as a value", true
	case ProblemUnknownType:
		return fmt.Sprintf("cannot be set: the form gives it the unknown type %q", p.Value), true
	case ProblemNotString:
		return msgNotString, true
	case ProblemNotBoolean:
		return "must be a boolean", true
	case ProblemNotOption:
		return "must be one of " + strings.Join(p.Allowed, ", "), true
	case ProblemNotOptionList:
		return msgNotMulti, true
	case ProblemNotOptionStrings:
		return msgNotMulti + ", strings from " + strings.Join(p.Allowed, ", "), true
	case ProblemUnknownOption:
		return fmt.Sprintf("must contain only values from %s; %q is not one of them", strings.Join(p.Allowed, ", "), p.Value), true
	case ProblemRepeatedOption:
		return fmt.Sprintf("must not list %q more than once", p.Value), true
	case ProblemControlCharacters:
		return msgControlOneLine, true
	case ProblemControlCharactersMultiline:
		return msgControlMultiline, true
	case ProblemTooLong:
		if p.Length > 0 {
			return fmt.Sprintf("must be at most %d characters long (it has %d)", p.Limit, p.Length), true
		}
		return fmt.Sprintf("must be at most %d characters", p.Limit), true
	case ProblemBadPattern:
		return fmt.Sprintf("cannot be checked: the form's pattern %q is invalid", p.Pattern), true
	case ProblemPattern:
		if p.Text != "" {
			return p.Text, true
		}
		return "must match the pattern " + p.Pattern, true
	case ProblemNotCountry:
		return fmt.Sprintf("must be an ISO 3166-1 country code, such as GB or IE; %q is not one", p.Value), true
	case ProblemNotTwoLetterCountry:
		return "must be a two-letter country code such as GB or IE", true
	case ProblemNotIBAN:
		return "must be an IBAN: a 2-letter country code, 2 check digits and 11 to 30 letters or digits, for example GB82 WEST 1234 5698 7654 32", true
	case ProblemIBANCheckDigits:
		return "is not a valid IBAN: the check digits do not match; check it for typing errors", true
	case ProblemNotEmail:
		return "must be an email address such as name@example.com", true
	case ProblemNotDate:
		return msgNotDate, true
	case ProblemNoSuchDate:
		return fmt.Sprintf("must be a real calendar date; %s does not exist", p.Value), true
	case ProblemDateTooEarly:
		return fmt.Sprintf("must be in the year %d or later", p.Limit), true
	case ProblemFutureDate:
		return "must not be in the future", true
	case ProblemNotPhone:
		return msgNotPhone, true
	case ProblemNotAddress:
		return "must be an address object with line1, city and country, and optionally line2, region and postcode", true
	case ProblemAddressMembers:
		return fmt.Sprintf("has unknown members %s; an address has only %s", strings.Join(p.Values, ", "), strings.Join(p.Allowed, ", ")), true
	case ProblemAddressIncomplete:
		return "must include line1, city and country; missing: " + strings.Join(p.Values, ", "), true
	case ProblemAddressCountry:
		return fmt.Sprintf("must be a two-letter ISO 3166-1 alpha-2 code, for example GB; got %q", p.Value), true
	case ProblemPostcodeRequired:
		return "is required when country is " + p.Value, true
	case ProblemNotCurrency:
		return msgNotCurrency, true
	case ProblemCurrencyMembers:
		return msgNotCurrency + " only; unknown members: " + strings.Join(p.Values, ", "), true
	case ProblemNotAmount:
		return "must be a number, 0 or more", true
	case ProblemTooLarge:
		return fmt.Sprintf("must be at most %d", p.Limit), true
	case ProblemNotPercentage:
		return msgNotPercent, true
	case ProblemNotTicked:
		return ErrDeclarationNotMade, true
	case ProblemNoRole:
		return "choose at least one role", true
	case ProblemNoOwner:
		return "choose who owns the shares", true
	case ProblemNoOwned:
		return "choose which company is owned", true
	case ProblemOwnsItself:
		return "a company cannot own itself", true
	}
	return strings.TrimSpace(string(p.Code) + " " + p.Text), false
}

// problemOf is the Problem err is or wraps; any other error becomes a
// ProblemOther in its words.
func problemOf(err error) Problem {
	var p Problem
	if errors.As(err, &p) {
		return p
	}
	return Problem{Code: ProblemOther, Text: err.Error()}
}

// Problem is the typed problem of key (a field id or a form control) of a
// validation error: the one in Problems, or else a ProblemOther in the
// words of Details, so that a reader always has one to word.
func (e *Error) Problem(key string) Problem {
	if p, ok := e.Problems[key]; ok {
		return p
	}
	return Problem{Code: ProblemOther, Text: e.Details[key]}
}
