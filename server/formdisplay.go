package server

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"onboard/onboarding"
)

// How stored values read on the form's pages: dates in words, phone
// numbers in groups, amounts with their currency's sign (countries by
// name are onboarding.Countries).

// dateText writes a date as people read it: "16 April 2018", or "April
// 1980" for a month (a registry's partial date of birth); anything else
// as it is.
func dateText(s string) string {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Format("2 January 2006")
	}
	if t, err := time.Parse("2006-01", s); err == nil {
		return t.Format("January 2006")
	}
	return s
}

// phoneText groups an E.164 number for reading: UK numbers as they are
// written in the UK ("+44 20 7946 0958", "+44 7700 900123"), Irish ones
// as "+353 1 234 5678", others as the country code and groups of three.
func phoneText(s string) string {
	if !strings.HasPrefix(s, "+") || len(s) < 8 {
		return s
	}
	switch {
	case strings.HasPrefix(s, "+44") && len(s) == 13:
		n := s[3:]
		switch {
		case n[0] == '2': // London, Cardiff, Belfast…: 2x xxxx xxxx
			return "+44 " + n[:2] + " " + n[2:6] + " " + n[6:]
		default: // mobiles and most areas: xxxx xxxxxx
			return "+44 " + n[:4] + " " + n[4:]
		}
	case strings.HasPrefix(s, "+353") && len(s) >= 11:
		n := s[4:]
		if n[0] == '1' { // Dublin
			return "+353 1 " + n[1:4] + " " + n[4:]
		}
		return "+353 " + n[:2] + " " + n[2:5] + " " + n[5:]
	}
	cc := 2 // +1 and +7 have one digit, most others two
	if s[1] == '1' || s[1] == '7' {
		cc = 1
	}
	rest := s[1+cc:]
	var groups []string
	for len(rest) > 4 {
		groups, rest = append(groups, rest[:3]), rest[3:]
	}
	return s[:1+cc] + " " + strings.Join(append(groups, rest), " ")
}

// moneyText writes an amount for reading: its currency's sign, thousands
// separated, pence or cents only when there are some ("£250,000",
// "€1,234.50"); an amount it cannot read is left as it is.
func moneyText(amount, currency string) string {
	whole, frac, _ := strings.Cut(amount, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return strings.TrimSpace(currency + " " + amount)
	}
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if strings.Trim(frac, "0") != "" {
		b.WriteString("." + (frac + "0")[:2])
	}
	for _, c := range onboarding.Currencies() {
		if c.Code == currency {
			return c.Sign + b.String()
		}
	}
	return currency + " " + b.String()
}

// sentenceCase writes a register's lower-case word ("dissolved") as a
// label: "Dissolved".
func sentenceCase(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// ibanText writes an IBAN in groups of four, as printed on statements:
// "GB82 WEST 1234 5698 7654 32".
func ibanText(s string) string {
	s = strings.ReplaceAll(s, " ", "")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
