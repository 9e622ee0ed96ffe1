package form

import (
	"encoding/json"
	"strings"

	"onboard/onboarding"
)

// The form's error messages in plain words, in the GOV.UK style: what to
// do ("Enter the town or city"), not what the value failed ("must include
// line1, city and country; missing: city, country"). The domain's reasons
// are the API's contract and stay as they are; this table rewrites them
// for the applicant, and says which input of a group is wrong, so that
// only that input is marked.

// partError is one message of a field: about one input of its group
// (Part, such as "city" of an address or "amount" of a currency) or, with
// Part empty, about the field as a whole.
type partError struct{ Part, Message string }

// plainErrors rewrites the domain's reason for field f in plain words, one
// message per wrong input; posted is the value the save posted (JSON, may
// be nil), which says which part of a date is missing.
func plainErrors(f *onboarding.Field, reason string, posted json.RawMessage) []partError {
	label := f.Label
	lower := lowerFirst(label)
	switch f.Type {
	case onboarding.TypeAddress:
		if parts := addressErrors(lower, reason); len(parts) > 0 {
			return parts
		}
		return []partError{{"line1", "Enter the " + lower + " in full"}}
	case onboarding.TypeCurrency:
		switch {
		case strings.HasPrefix(reason, "currency "):
			return []partError{{"currency", "Select the currency of the " + lower}}
		case strings.HasPrefix(reason, "amount must be at most "):
			return []partError{{"amount", label + " must be " + strings.TrimPrefix(reason, "amount must be at most ") + " or less"}}
		default:
			return []partError{{"amount", "Enter the " + lower + " in numbers, like 250000"}}
		}
	case onboarding.TypeDate:
		if reason == "must not be in the future" {
			return []partError{{"", label + " must be today or in the past"}}
		}
		if reason == "must be in the year 1000 or later" {
			return []partError{{"", label + " must be a real date, in the year 1000 or later"}}
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
		if reason == "must be a number from 0 to 100" {
			return []partError{{"", "Enter the " + lower + " as a number from 0 to 100"}}
		}
	case onboarding.TypeSelect, onboarding.TypeMultiSelect:
		switch {
		case strings.HasPrefix(reason, "is required"):
			return []partError{{"", "Select the " + lower}}
		case strings.HasPrefix(reason, "must be one of"), strings.HasPrefix(reason, "must contain only values"), strings.HasPrefix(reason, "must be an array"):
			return []partError{{"", "Select the " + lower + " from the list"}}
		}
	case onboarding.TypeBoolean:
		return []partError{{"", "Select yes or no"}}
	}
	return []partError{{"", textError(f, reason)}}
}

// textError is the message of a text field's reason.
func textError(f *onboarding.Field, reason string) string {
	label, lower := f.Label, lowerFirst(f.Label)
	switch {
	case strings.HasPrefix(reason, "is required"):
		return "Enter the " + lower
	case strings.HasPrefix(reason, "must be at most "):
		n, _, _ := strings.Cut(strings.TrimPrefix(reason, "must be at most "), " ")
		return label + " must be " + n + " characters or fewer"
	case strings.Contains(reason, "control characters"):
		return label + " must not contain tabs, line breaks or other special characters"
	case strings.Contains(reason, "IBAN"):
		return "Enter a real IBAN, like GB82 WEST 1234 5698 7654 32"
	case strings.Contains(reason, "e-mail address") || strings.Contains(reason, "email address"):
		return "Enter an email address in the correct format, like name@example.com"
	case strings.HasPrefix(f.Pattern, "^https?://"):
		return "Enter the " + lower + " in the correct format, like https://www.example.com"
	case f.Pattern == "^[A-Z]{2}$" || f.Pattern == "^[A-Za-z]{2}$":
		return "Enter the " + lower + " as a two-letter country code, like GB or IE"
	case f.PatternMessage != "" && reason == f.PatternMessage:
		return label + " " + reason
	case strings.HasPrefix(reason, "must match the pattern"):
		return "Enter the " + lower + " in the correct format"
	case reason == "must be a string":
		return "Enter the " + lower
	}
	return label + " " + reason
}

// addressErrors finds the wrong inputs of an address in the domain's
// reason (the missing ones, the country or the postcode), each message
// naming the address, lower ("the trading address"), since a page may ask
// for two.
func addressErrors(lower, reason string) []partError {
	of := " of the " + lower
	if _, missing, ok := strings.Cut(reason, "missing: "); ok {
		var out []partError
		for _, p := range strings.Split(missing, ", ") {
			switch strings.TrimSpace(p) {
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
	switch {
	case strings.HasPrefix(reason, "country "):
		return []partError{{"country", "Choose the country" + of + " from the list"}}
	case strings.HasPrefix(reason, "postcode "):
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
