package server

import (
	"encoding/json"
	"strconv"
	"strings"

	"onboard/onboarding"
)

// The form's error messages in plain words, in the GOV.UK style: what to
// do ("Enter the town or city"), not what the value failed ("must include
// line1, city and country; missing: city, country"). The domain's messages
// are the API's contract and stay as they are; the form words each
// problem by its code and parameters, never by reading the message, and
// says which input of a group is wrong, so that only that input is
// marked.

// partError is one message of a field: about one input of its group
// (Part, such as "city" of an address or "amount" of a currency) or, with
// Part empty, about the field as a whole.
type partError struct{ Part, Message string }

// plainErrors words problem pr of field f in plain words, one message per
// wrong input; posted is the value the save posted (JSON, may be nil),
// which says which part of a date is missing.
func plainErrors(f *onboarding.Field, pr onboarding.Problem, posted json.RawMessage) []partError {
	label := f.Label
	lower := lowerFirst(label)
	switch f.Type {
	case onboarding.TypeAddress:
		if parts := addressErrors(lower, pr); len(parts) > 0 {
			return parts
		}
		return []partError{{"line1", "Enter the " + lower + " in full"}}
	case onboarding.TypeCurrency:
		switch {
		case pr.Part == "currency":
			return []partError{{"currency", "Select the currency of the " + lower}}
		case pr.Part == "amount" && pr.Code == onboarding.ProblemTooLarge:
			return []partError{{"amount", label + " must be " + strconv.FormatInt(pr.Limit, 10) + " or less"}}
		default:
			return []partError{{"amount", "Enter the " + lower + " in numbers, like 250000"}}
		}
	case onboarding.TypeDate:
		switch pr.Code {
		case onboarding.ProblemFutureDate:
			return []partError{{"", label + " must be today or in the past"}}
		case onboarding.ProblemDateTooEarly:
			return []partError{{"", label + " must be a real date, in the year " + strconv.FormatInt(pr.Limit, 10) + " or later"}}
		}
		var s string
		_ = json.Unmarshal(posted, &s)
		day, month, year := dateParts(s)
		var missing []string
		for _, p := range []struct{ name, value string }{{"day", day}, {"month", month}, {"year", year}} {
			if p.value == "" {
				missing = append(missing, p.name)
			}
		}
		switch {
		case !strings.Contains(s, "-") || len(missing) == 0:
			return []partError{{"", label + " must be a real date"}}
		case len(missing) == 3:
			return []partError{{"", "Enter the " + lower}}
		}
		return []partError{{"", label + " must include a " + strings.Join(missing, " and ")}}
	case onboarding.TypePhone:
		return []partError{{"", "Enter the " + lower + " in international format, like +44 20 7946 0958"}}
	case onboarding.TypePercentage:
		if pr.Code == onboarding.ProblemNotPercentage {
			return []partError{{"", "Enter the " + lower + " as a number from 0 to 100"}}
		}
	case onboarding.TypeSelect, onboarding.TypeMultiSelect:
		switch pr.Code {
		case onboarding.ProblemRequired:
			return []partError{{"", "Select the " + lower}}
		case onboarding.ProblemNotOption, onboarding.ProblemUnknownOption, onboarding.ProblemNotOptionList, onboarding.ProblemNotOptionStrings:
			return []partError{{"", "Select the " + lower + " from the list"}}
		}
	case onboarding.TypeBoolean:
		return []partError{{"", "Select yes or no"}}
	}
	return []partError{{"", textError(f, pr)}}
}

// textError is the message of a text field's problem, and of any problem
// the field's type has no words of its own for.
func textError(f *onboarding.Field, pr onboarding.Problem) string {
	m, _ := textWording(f, pr)
	return m
}

// textWording is textError; known is false for a code it does not name,
// which gets the domain's words after the label (the test of the form's
// wording holds it to name every code).
func textWording(f *onboarding.Field, pr onboarding.Problem) (msg string, known bool) {
	label, lower := f.Label, lowerFirst(f.Label)
	switch pr.Code {
	case onboarding.ProblemRequired:
		return "Enter the " + lower, true
	case onboarding.ProblemTooLong:
		return label + " must be " + strconv.FormatInt(pr.Limit, 10) + " characters or fewer", true
	case onboarding.ProblemControlCharacters, onboarding.ProblemControlCharactersMultiline:
		return label + " must not contain tabs, line breaks or other special characters", true
	case onboarding.ProblemNotIBAN, onboarding.ProblemIBANCheckDigits:
		return "Enter a real IBAN, like GB82 WEST 1234 5698 7654 32", true
	case onboarding.ProblemNotEmail:
		return "Enter an email address in the correct format, like name@example.com", true
	}
	// Any other problem of a web address or a country code asks for one.
	switch {
	case strings.HasPrefix(f.Pattern, "^https?://"):
		return "Enter the " + lower + " in the correct format, like https://www.example.com", true
	case f.Pattern == "^[A-Z]{2}$" || f.Pattern == "^[A-Za-z]{2}$":
		return "Enter the " + lower + " as a two-letter country code, like GB or IE", true
	}
	switch pr.Code {
	case onboarding.ProblemPattern:
		if pr.Text != "" {
			return label + " " + pr.Text, true
		}
		return "Enter the " + lower + " in the correct format", true
	case onboarding.ProblemNotString:
		return "Enter the " + lower, true
	case onboarding.ProblemOther, onboarding.ProblemNotJSON, onboarding.ProblemDocumentValue,
		onboarding.ProblemUnknownType, onboarding.ProblemNotBoolean, onboarding.ProblemNotOption,
		onboarding.ProblemNotOptionList, onboarding.ProblemNotOptionStrings, onboarding.ProblemUnknownOption,
		onboarding.ProblemRepeatedOption, onboarding.ProblemBadPattern, onboarding.ProblemNotCountry,
		onboarding.ProblemNotTwoLetterCountry, onboarding.ProblemNotDate, onboarding.ProblemNoSuchDate,
		onboarding.ProblemDateTooEarly, onboarding.ProblemFutureDate, onboarding.ProblemNotPhone,
		onboarding.ProblemNotAddress, onboarding.ProblemAddressMembers, onboarding.ProblemAddressIncomplete,
		onboarding.ProblemAddressCountry, onboarding.ProblemPostcodeRequired, onboarding.ProblemNotCurrency,
		onboarding.ProblemCurrencyMembers, onboarding.ProblemNotAmount, onboarding.ProblemTooLarge,
		onboarding.ProblemNotPercentage, onboarding.ProblemNotTicked, onboarding.ProblemNoRole,
		onboarding.ProblemNoOwner, onboarding.ProblemNoOwned, onboarding.ProblemOwnsItself:
		// The domain's words read after the label, or the field's type
		// words them above.
		return label + " " + pr.Message(), true
	}
	return label + " " + pr.Message(), false
}

// addressErrors finds the wrong inputs of an address in its problem (the
// missing ones, the country or the postcode), each message naming the
// address, lower ("the trading address"), since a page may ask for two.
func addressErrors(lower string, pr onboarding.Problem) []partError {
	of := " of the " + lower
	if pr.Code == onboarding.ProblemAddressIncomplete {
		var out []partError
		for _, p := range pr.Values {
			switch p {
			case "line1":
				out = append(out, partError{"line1", "Enter address line 1" + of + ", typically the building and street"})
			case "city":
				out = append(out, partError{"city", "Enter the town or city" + of})
			case "country":
				out = append(out, partError{"country", "Choose the country" + of})
			}
		}
		return out
	}
	switch pr.Part {
	case "country":
		return []partError{{"country", "Choose the country" + of + " from the list"}}
	case "postcode":
		return []partError{{"postcode", "Enter the postcode" + of + ", as a UK address has one"}}
	}
	return nil
}

// lowerFirst lowers a label's first letter unless the label starts with
// an acronym ("IBAN", "VAT number").
func lowerFirst(label string) string {
	if len(label) < 2 || strings.ToUpper(label[:2]) == label[:2] {
		return label
	}
	return strings.ToLower(label[:1]) + label[1:]
}
