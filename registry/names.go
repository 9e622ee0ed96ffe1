package registry

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/unicode/norm"
)

// Match is the outcome of comparing a supplied company name with the
// registered one. The zero value is Mismatch.
type Match int

// The outcomes of MatchName, from a rejection to the strictest acceptance.
const (
	// Mismatch: the names differ in a distinctive word.
	Mismatch Match = iota
	// MismatchForm: the names are the same but the legal forms differ
	// (LTD vs PLC, LTD vs DAC): a different kind of company.
	MismatchForm
	// MatchSpacing: the names differ only in spacing ("A BIG BOAT" vs "ABIGBOAT").
	MatchSpacing
	// MatchFormOmitted: the names are the same and one side has no legal form.
	MatchFormOmitted
	// MatchNormalized: the names and legal forms are the same after normalisation.
	MatchNormalized
	// MatchExact: the names are equal after trimming and case folding.
	MatchExact
)

// String returns the category's name, e.g. "MATCH_NORMALIZED".
func (m Match) String() string {
	switch m {
	case Mismatch:
		return "MISMATCH"
	case MismatchForm:
		return "MISMATCH_FORM"
	case MatchSpacing:
		return "MATCH_SPACING"
	case MatchFormOmitted:
		return "MATCH_FORM_OMITTED"
	case MatchNormalized:
		return "MATCH_NORMALIZED"
	case MatchExact:
		return "EXACT"
	}
	return fmt.Sprintf("Match(%d)", int(m))
}

// Accepted reports whether the supplied name is good enough to identify the
// company: EXACT, MATCH_NORMALIZED, MATCH_FORM_OMITTED (for every legal form,
// by policy) and MATCH_SPACING are; MISMATCH_FORM and MISMATCH are not.
func (m Match) Accepted() bool {
	return m >= MatchSpacing && m <= MatchExact
}

// MatchName compares given, the name an applicant or partner supplied, with
// registered, the registry's name for the company. It is strict about
// distinctive words ("ACME HOLDINGS" is not "ACME") and lenient about case,
// accents, punctuation, "&"/"AND", a leading "THE" and how the trailing legal
// form is spelt ("Ltd", "Limited", "Teoranta" are one form). Names that
// differ only in spacing but carry two different legal forms are
// MISMATCH_FORM, like names that differ only in their forms.
func MatchName(registered, given string) Match {
	if strings.EqualFold(strings.TrimSpace(registered), strings.TrimSpace(given)) {
		return MatchExact
	}
	r, g := normalizeName(registered), normalizeName(given)
	if r.core == "" || g.core == "" {
		return Mismatch
	}
	formsAgree := r.form == g.form || r.form == "" || g.form == ""
	switch {
	case r.core == g.core && r.form == g.form:
		return MatchNormalized
	case r.core == g.core && formsAgree:
		return MatchFormOmitted
	case r.core == g.core:
		return MismatchForm
	case compact(r.core) == compact(g.core) && formsAgree:
		return MatchSpacing
	case compact(r.core) == compact(g.core):
		return MismatchForm
	}
	return Mismatch
}

// normalizedName is a company name reduced for comparison: core holds the
// distinctive words joined by single spaces, form the canonical legal form
// token (LTD, PLC, DAC, CLG, UC, LLP, CIC) or "" when the name has none.
type normalizedName struct {
	core string
	form string
}

// legalForm is one spelling of a legal form: its words after normalisation
// and the canonical token it stands for.
type legalForm struct {
	words []string
	form  string
}

// legalForms lists every recognised spelling of a trailing legal form
// (the registries' suffixes, plus the dotted "C.L.G.", "L.L.P." and
// "C.I.C."), longest first so that "PARTNERIAETH ATEBOLRWYDD CYFYNGEDIG" is
// an LLP rather than a name ending in "CYFYNGEDIG" (LTD).
var legalForms = sortedLegalForms(map[string][]string{
	"LTD": {"LIMITED", "LTD", "TEORANTA", "TEO", "CYFYNGEDIG", "CYF"},
	"PLC": {"PUBLIC LIMITED COMPANY", "PLC", "P L C", "CUIDEACHTA PHOIBLI THEORANTA",
		"CPT", "C P T", "CWMNI CYFYNGEDIG CYHOEDDUS", "CCC"},
	"DAC": {"DESIGNATED ACTIVITY COMPANY", "DAC", "D A C",
		"CUIDEACHTA GHNIOMHAIOCHTA AINMNITHE", "CGA", "C G A"},
	"CLG": {"COMPANY LIMITED BY GUARANTEE", "CLG", "C L G", "CUIDEACHTA FAOI THEORAINN RATHAIOCHTA", "CTR"},
	"UC":  {"UNLIMITED COMPANY", "UC", "CUIDEACHTA NEAMHTHEORANTA", "CN", "ULC", "PUC", "PULC"},
	"LLP": {"LIMITED LIABILITY PARTNERSHIP", "LLP", "L L P", "PARTNERIAETH ATEBOLRWYDD CYFYNGEDIG", "PAC"},
	"CIC": {"COMMUNITY INTEREST COMPANY", "CIC", "C I C", "CWMNI BUDDIANT CYMUNEDOL", "CBC"},
})

// sortedLegalForms flattens spellings into legalForm values ordered by word
// count, longest first, then alphabetically so that the order is deterministic.
func sortedLegalForms(spellings map[string][]string) []legalForm {
	var out []legalForm
	for form, list := range spellings {
		for _, s := range list {
			out = append(out, legalForm{words: strings.Fields(s), form: form})
		}
	}
	slices.SortFunc(out, func(a, b legalForm) int {
		if c := cmp.Compare(len(b.words), len(a.words)); c != 0 {
			return c
		}
		return slices.Compare(a.words, b.words)
	})
	return out
}

// normalizeName folds s (foldName), splits it into words (nameTokens),
// drops a leading "THE" and splits off a trailing legal form (legalForms),
// leaving the core that names are compared by.
func normalizeName(s string) normalizedName {
	tokens := nameTokens(foldName(s))
	if len(tokens) > 1 && tokens[0] == "THE" {
		tokens = tokens[1:]
	}
	var form string
	for _, lf := range legalForms {
		if hasSuffixWords(tokens, lf.words) {
			form = lf.form
			tokens = tokens[:len(tokens)-len(lf.words)]
			break
		}
	}
	return normalizedName{core: strings.Join(tokens, " "), form: form}
}

// hasSuffixWords reports whether tokens end with words and keep at least one
// token before them: a name that is only a legal form keeps it as its core.
func hasSuffixWords(tokens, words []string) bool {
	if len(tokens) <= len(words) {
		return false
	}
	tail := tokens[len(tokens)-len(words):]
	for i, w := range words {
		if tail[i] != w {
			return false
		}
	}
	return true
}

// foldName applies NFKC, strips diacritics (fadas fold: "Á" → "A") and
// upper-cases. NFKD is NFKC followed by the canonical decomposition that
// separates the marks; NFC then recomposes what is left (Hangul, say). ASCII
// input skips the Unicode passes.
func foldName(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s)
	}
	s = norm.NFKD.String(s)
	s = runes.Remove(runes.In(unicode.Mn)).String(s)
	return strings.ToUpper(norm.NFC.String(s))
}

// nameTokens splits a folded name into words: "&" and "+" become the word
// AND, curly quotes count as the straight ones, and every other rune that is
// not a letter or a digit (punctuation, symbols, spaces) separates words.
func nameTokens(s string) []string {
	tokens := make([]string, 0, 8)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			tokens = append(tokens, s[start:end])
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case r == '&' || r == '+':
			flush(i)
			tokens = append(tokens, "AND")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
		default:
			// Straight and curly quotes, hyphens, dashes, brackets, dots and
			// all other punctuation or spacing end the current word.
			flush(i)
		}
	}
	flush(len(s))
	return tokens
}

// compact removes the spaces of a core, for the MATCH_SPACING comparison.
func compact(core string) string {
	return strings.ReplaceAll(core, " ", "")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
