package onboarding

import (
	"bytes"
	_ "embed" // the sample PDF
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"regexp/syntax"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Sample answers of the sandbox test helpers (docs/sandbox.md): a value for
// any field of any form that the field's own validation (Normalize)
// accepts, and small valid files for document fields. Nothing here is
// trusted: every sample value is checked with Normalize before use.

// sampleValue returns a value for field f that f.Normalize accepts, in
// its normalized form, or nil when no sample fits the field (a text
// pattern too unusual to satisfy). country is the application's.
func sampleValue(f *Field, country string, now time.Time) json.RawMessage {
	for _, c := range sampleCandidates(f, sampleCountry(country), now) {
		raw, err := marshalValue(c)
		if err != nil {
			continue
		}
		if norm, err := f.Normalize(raw, now); err == nil && norm != nil {
			return norm
		}
	}
	return nil
}

// sampleString returns sampleValue as a string, or fallback when the
// field has no string sample.
func sampleString(f *Field, country string, now time.Time, fallback string) string {
	var s string
	if raw := sampleValue(f, country, now); raw == nil || json.Unmarshal(raw, &s) != nil || s == "" {
		return fallback
	}
	return s
}

// sampleCountry is the country of sample addresses and nationalities: the
// application's, when it is a two-letter code.
func sampleCountry(country string) string {
	if countryCodePattern.MatchString(country) {
		return country
	}
	return "GB"
}

// sampleCandidates lists values to try for f, best first.
func sampleCandidates(f *Field, country string, now time.Time) []any {
	switch f.Type {
	case TypeText:
		return sampleTexts(f, country)
	case TypeSelect:
		out := make([]any, len(f.Options))
		for i, o := range f.Options {
			out[i] = o.Value
		}
		return out
	case TypeMultiSelect:
		if len(f.Options) == 0 {
			return nil
		}
		return []any{[]string{f.Options[0].Value}}
	case TypeBoolean:
		return []any{true}
	case TypeDate:
		if strings.Contains(f.ID, "birth") {
			return []any{"1985-06-15", "2000-01-01"}
		}
		return []any{"2020-01-15", now.UTC().Format(time.DateOnly)}
	case TypePhone:
		return []any{"+442079460958"}
	case TypeAddress:
		return []any{sampleAddress(country)}
	case TypeCurrency:
		return []any{currencyValue{Amount: 100000, Currency: sampleCurrency(country)}}
	case TypePercentage:
		return []any{0}
	}
	return nil
}

// sampleTexts lists text values to try for f: one its id suggests, then
// plain words, then one built from its pattern; each at most MaxLength
// characters.
func sampleTexts(f *Field, country string) []any {
	var out []string
	id := f.ID
	switch {
	case f.Rule == fieldRuleIBAN || strings.Contains(id, "iban"):
		out = append(out, "GB82WEST12345698765432")
	case id == "company_name":
		out = append(out, "Sample Company Ltd")
	case id == "company_number":
		out = append(out, "12345678")
	case strings.Contains(id, "email"):
		out = append(out, "sample@example.com")
	case strings.Contains(id, "country") || strings.Contains(id, "nationality"):
		out = append(out, country)
	case strings.Contains(id, "website") || strings.Contains(id, "url"):
		out = append(out, "https://example.com")
	case id == FieldPersonFullName:
		out = append(out, "Sam Sample")
	case id == "tax_id":
		out = append(out, "GB123456789")
	case strings.Contains(id, "description"):
		out = append(out, "A sample answer from the sandbox test helper.")
	}
	out = append(out, "Sample", "12345678")
	if f.Pattern != "" {
		if s, ok := patternSample(f.Pattern); ok {
			out = append(out, s)
		}
	}
	values := make([]any, len(out))
	for i, s := range out {
		if f.MaxLength > 0 && utf8.RuneCountInString(s) > f.MaxLength {
			s = string([]rune(s)[:f.MaxLength])
		}
		values[i] = s
	}
	return values
}

// sampleAddress is an address in country that passes the address rules
// (a postcode too, which GB requires).
func sampleAddress(country string) map[string]string {
	a := map[string]string{"line1": "1 Sample Street", "city": "Sampletown", "postcode": "10001", "country": country}
	switch country {
	case "GB":
		a["city"], a["postcode"] = "London", "EC1A 1BB"
	case "IE":
		a["city"], a["postcode"] = "Dublin", "D02 X285"
	}
	return a
}

// sampleCurrency is the currency of country's sample amounts.
func sampleCurrency(country string) string {
	switch country {
	case "GB":
		return "GBP"
	case "US":
		return "USD"
	}
	return "EUR"
}

// maxPatternSample bounds the string patternSample builds.
const maxPatternSample = 256

// patternSample returns a short string that an RE2 pattern should match,
// built from its parsed form: the first alternative that can be built,
// one repetition of each starred or plussed part and none of an optional
// one, a letter or digit from each class. Anchors and word boundaries add
// nothing, so the caller checks the result. ok is false when no string
// was built.
func patternSample(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writePatternSample(&b, re.Simplify(), 0) {
		return "", false
	}
	return b.String(), true
}

func writePatternSample(b *strings.Builder, re *syntax.Regexp, depth int) bool {
	if depth > 64 || b.Len() > maxPatternSample {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		r, ok := classSample(re.Rune)
		if !ok {
			return false
		}
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus:
		return writePatternSample(b, re.Sub[0], depth+1)
	case syntax.OpRepeat:
		n := re.Min
		if n == 0 && re.Max != 0 {
			n = 1
		}
		for range n {
			if !writePatternSample(b, re.Sub[0], depth+1) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !writePatternSample(b, sub, depth+1) {
				return false
			}
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			var alt strings.Builder
			if writePatternSample(&alt, sub, depth+1) {
				b.WriteString(alt.String())
				return true
			}
		}
		return false
	}
	// OpQuest (none of it), OpEmptyMatch, anchors and word boundaries
	// write nothing.
	return true
}

// classSample picks a rune of a character class (pairs of inclusive
// ranges): a letter or digit when the class has one, else its first
// printable, non-space rune.
func classSample(ranges []rune) (rune, bool) {
	in := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	for _, r := range "aA0" {
		if in(r) {
			return r, true
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < ranges[i]+256; r++ {
			if unicode.IsPrint(r) && !unicode.IsSpace(r) {
				return r, true
			}
		}
	}
	return 0, false
}

// sampleCompany is the company a test helper chooses from the register
// (company selection): the sandbox registry's active company of country
// when the registry checks companies there, else a company
// made up from the form's own samples, which no registry checks.
func sampleCompany(form *Form, country string, verified bool, now time.Time) (number, name string) {
	if verified {
		switch country {
		case "GB":
			return "10000001", "NORTHWIND TRADING LIMITED"
		case "IE":
			return "100001", "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY"
		}
	}
	number, name = "12345678", "Sample Company Ltd"
	if f, ok := form.Field("company_number"); ok {
		number = sampleString(f, country, now, number)
	}
	if f, ok := form.Field("company_name"); ok {
		name = sampleString(f, country, now, name)
	}
	return number, name
}

// sampleFile is a sample document to upload.
type sampleFile struct {
	Name, Type string
	Body       []byte
}

// sampleDocument returns a file that document field f accepts: a one-page
// PDF, or, for a strict field whose accept list takes no PDF, a small PNG
// or JPEG image. A field that takes none of these gets the PDF, which its
// validation then rejects with its own reason.
func sampleDocument(f *Field) (sampleFile, error) {
	pdf := sampleFile{Name: "sample.pdf", Type: mimePDF, Body: samplePDF()}
	if f.Validation != docValidationStrict || len(f.Accept) == 0 || docAccepts(f.Accept, mimePDF) {
		return pdf, nil
	}
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	var b bytes.Buffer
	switch {
	case docAccepts(f.Accept, mimePNG):
		if err := png.Encode(&b, img); err != nil {
			return sampleFile{}, err
		}
		return sampleFile{Name: "sample.png", Type: mimePNG, Body: b.Bytes()}, nil
	case docAccepts(f.Accept, mimeJPEG):
		if err := jpeg.Encode(&b, img, nil); err != nil {
			return sampleFile{}, err
		}
		return sampleFile{Name: "sample.jpg", Type: mimeJPEG, Body: b.Bytes()}, nil
	}
	return pdf, nil
}

// samplePDFFile is a valid one-page PDF (A4, one line of text) with a
// correct cross-reference table: the sample document of PDF fields. It is
// a file rather than code so that the domain needs no PDF writer; its test
// holds it to what pdftest.Build writes of the same objects.
//
//go:embed sample.pdf
var samplePDFFile string

// samplePDF returns a copy of samplePDFFile.
func samplePDF() []byte { return []byte(samplePDFFile) }
