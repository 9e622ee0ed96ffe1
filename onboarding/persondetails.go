package onboarding

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// The details the form still needs about a person: the people stage's
// required fields a person has no value for, or only part of one (a
// company register gives a date of birth as its month and year). The
// submission (Visitor.Missing), the people page and the review all ask
// this one rule.

// MissingDetail is one detail the form still needs about a person before
// the application can be submitted.
type MissingDetail struct {
	Field *Field
	// Partial is set when the person has only part of the value: a date
	// without its day, as company registers give dates of birth (YYYY-MM).
	Partial bool
}

// Label names the detail in plain words for the middle of a sentence:
// the field's label in lower case ("date of birth"), with "full" before it
// when only part of it is known ("full date of birth").
func (d MissingDetail) Label() string {
	l := lowerFirst(d.Field.Label)
	if d.Partial {
		return "full " + l
	}
	return l
}

// message says what person name lacks, for the list of what is missing.
func (d MissingDetail) message(name string) string {
	if d.Partial {
		return d.Field.Label + " of " + name + " is incomplete: give the full date"
	}
	return d.Field.Label + " of " + name + " is missing"
}

// MissingDetails lists, in form order, the details the form still needs
// about person p: each required field of the people stage that p has no
// value for, or only part of one.
func (f *Form) MissingDetails(p *Person) []MissingDetail {
	st, ok := f.Stage(StagePeople)
	if !ok {
		return nil
	}
	var out []MissingDetail
	for _, fd := range st.Fields {
		if d, ok := missingDetail(fd, p); ok {
			out = append(out, d)
		}
	}
	return out
}

// missingDetail reports whether person p lacks field f of the people
// stage: f is required and p has no value for it, or only part of one (a
// date field's value that is not a full YYYY-MM-DD date).
func missingDetail(f *Field, p *Person) (MissingDetail, bool) {
	if !f.Required {
		return MissingDetail{}, false
	}
	v := PersonFieldValue(p, f.ID)
	switch {
	case v == nil:
		return MissingDetail{Field: f}, true
	case f.Type == TypeDate && !fullDate(v):
		return MissingDetail{Field: f, Partial: true}, true
	}
	return MissingDetail{}, false
}

// fullDate reports whether v is a JSON string of a whole date, YYYY-MM-DD.
func fullDate(v json.RawMessage) bool {
	var s string
	return json.Unmarshal(v, &s) == nil && datePattern.MatchString(s)
}

// lowerFirst lower-cases the first letter of a label for the middle of a
// sentence ("Date of birth" → "date of birth"), unless the label starts
// with an abbreviation ("IBAN", "VAT number").
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	first, n := utf8.DecodeRuneInString(s)
	if next, _ := utf8.DecodeRuneInString(s[n:]); unicode.IsUpper(next) {
		return s
	}
	return string(unicode.ToLower(first)) + s[n:]
}
