package web

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"onboard/onboarding"
)

// Strict query strings. url.ParseQuery, and echo's QueryParam over it,
// drop a pair they cannot decode and carry on, so "status=sent%zz" would
// list every status; QueryParam also takes the first of a parameter given
// twice, where another parser takes the last. A query string is read here
// whole, or refused.

// MaxQueryParams bounds how many parameters a query string may carry: no
// request needs more than a handful.
const MaxQueryParams = 100

// Refusals of query strings that cannot be read one way only.
var (
	// ErrQuerySemicolon: a ";" between parameters, which some servers take
	// as a separator and net/url refuses.
	ErrQuerySemicolon = &onboarding.Error{Kind: onboarding.KindInvalid, Message: `Invalid query string: ";" is not a separator (use "&")`}
	// ErrQueryNotUTF8: a %-escape that decodes to bytes that are not UTF-8.
	ErrQueryNotUTF8 = &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Invalid query string: text must be UTF-8"}
	// ErrQueryTooManyParams: more than MaxQueryParams parameters.
	ErrQueryTooManyParams = onboarding.Errorf(onboarding.KindInvalid, "Invalid query string: more than %d parameters", MaxQueryParams)
)

// ErrQueryEscape is the 400 for a broken %-escape, such as "%zz" or a "%"
// at the end.
func ErrQueryEscape(escape string) *onboarding.Error {
	return onboarding.Errorf(onboarding.KindInvalid, "Invalid query string: invalid %%-escape %s", strconv.Quote(onboarding.ClipInput(escape)))
}

// ErrDuplicateParam is the 400 for a single-valued parameter given more
// than once.
func ErrDuplicateParam(name string) *onboarding.Error {
	return onboarding.Errorf(onboarding.KindInvalid, "Invalid query string: duplicate parameter %s", strconv.Quote(onboarding.ClipInput(name)))
}

// ParseQuery decodes a raw query string as url.ParseQuery does ("&"
// between parameters, "+" for a space), but refuses instead of dropping:
// ErrQueryEscape for a broken %-escape, ErrQuerySemicolon, ErrQueryNotUTF8
// and ErrQueryTooManyParams. Empty parameters ("a=1&&b=2") are skipped, as
// url.ParseQuery skips them.
func ParseQuery(raw string) (url.Values, error) {
	q := url.Values{}
	n := 0
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return nil, ErrQuerySemicolon
		}
		if n++; n > MaxQueryParams {
			return nil, ErrQueryTooManyParams
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := unescapeQuery(k)
		if err != nil {
			return nil, err
		}
		value, err := unescapeQuery(v)
		if err != nil {
			return nil, err
		}
		q[key] = append(q[key], value)
	}
	return q, nil
}

// unescapeQuery decodes one name or value of a query string.
func unescapeQuery(s string) (string, error) {
	out, err := url.QueryUnescape(s)
	if err != nil {
		var esc url.EscapeError
		if errors.As(err, &esc) {
			return "", ErrQueryEscape(string(esc))
		}
		return "", ErrQueryEscape(s)
	}
	if !utf8.ValidString(out) {
		return "", ErrQueryNotUTF8
	}
	return out, nil
}

// SingleParam is the value of the single-valued parameter name in q, and
// whether it was given (an empty value is given); ErrDuplicateParam when
// it was given more than once.
func SingleParam(q url.Values, name string) (string, bool, error) {
	switch v := q[name]; len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	default:
		return "", false, ErrDuplicateParam(name)
	}
}
