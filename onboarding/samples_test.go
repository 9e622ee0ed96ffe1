package onboarding

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/pdf"
	"onboard/pdf/pdftest"
)

var sampleNow = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)

// TestSampleValuesStandardForm: every answerable field of the built-in
// form has a sample, in every country (an unusable one falls back to GB).
func TestSampleValuesStandardForm(t *testing.T) {
	for _, country := range []string{"GB", "IE", "FR", "US", ""} {
		for _, f := range StandardForm().Fields() {
			if f.Type == TypeDocument {
				continue
			}
			if got := sampleValue(&f, country, sampleNow); got == nil {
				t.Errorf("%s in %q: no sample", f.ID, country)
			}
		}
	}
}

// TestSampleValues checks the samples of fields a form file may define:
// each is what the field's own Normalize gives, or nil when nothing fits.
func TestSampleValues(t *testing.T) {
	text := func(id string, mod func(*Field)) *Field {
		f := &Field{ID: id, Label: id, Type: TypeText, Category: "company"}
		if mod != nil {
			mod(f)
		}
		return f
	}
	tests := []struct {
		name    string
		field   *Field
		country string
		want    string // compact JSON; "" for no sample
	}{
		{"plain text", text("notes", nil), "GB", `"Sample"`},
		{"short text", text("notes", func(f *Field) { f.MaxLength = 3 }), "GB", `"Sam"`},
		{"iban rule", text("account", func(f *Field) { f.Rule = fieldRuleIBAN }), "GB", `"GB82WEST12345698765432"`},
		{"email by id", text("billing_email", nil), "GB", `"sample@example.com"`},
		{"country by id", text("tax_country", func(f *Field) { f.Pattern = patternCountryCode }), "IE", `"IE"`},
		{"country code of an unusable country", text("tax_country", func(f *Field) { f.Pattern = patternCountryCode }), "united kingdom", `"GB"`},
		{"anchored pattern", text("ref", func(f *Field) { f.Pattern = `^[A-Z]{2}\d{6}$` }), "GB", `"AA000000"`},
		{"alternation and repeats", text("ref", func(f *Field) { f.Pattern = `^(foo|bar)+-x?[0-9]*$` }), "GB", `"foo-0"`},
		{"unicode class", text("ref", func(f *Field) { f.Pattern = `^\p{Lu}{3}$` }), "GB", `"AAA"`},
		{"negated class", text("ref", func(f *Field) { f.Pattern = `^[^a-zA-Z0-9]{2}$` }), "GB", `"!!"`},
		{"unanchored pattern the words pass", text("ref", func(f *Field) { f.Pattern = `[a-z]` }), "GB", `"Sample"`},
		{"pattern and length", text("ref", func(f *Field) { f.Pattern = `^[a-z]{3}-\d+$`; f.MaxLength = 5 }), "GB", `"aaa-0"`},
		{"pattern no string matches", text("ref", func(f *Field) { f.Pattern = `^a\bb$` }), "GB", ``},
		{"length too short for the pattern", text("ref", func(f *Field) { f.Pattern = `^\d{6}$`; f.MaxLength = 4 }), "GB", ``},
		{"select", &Field{ID: "tier", Type: TypeSelect, Options: []Option{{"gold", "Gold"}, {"silver", "Silver"}}}, "GB", `"gold"`},
		{"multi select", &Field{ID: "tiers", Type: TypeMultiSelect, Options: []Option{{"gold", "Gold"}}}, "GB", `["gold"]`},
		{"boolean", &Field{ID: "listed", Type: TypeBoolean}, "GB", `true`},
		{"date of birth", &Field{ID: "director_birth_date", Type: TypeDate, Rule: fieldRuleNotFuture}, "GB", `"1985-06-15"`},
		{"date", &Field{ID: "founded", Type: TypeDate, Rule: fieldRuleNotFuture}, "GB", `"2020-01-15"`},
		{"phone", &Field{ID: "hotline", Type: TypePhone}, "FR", `"+442079460958"`},
		{"address GB", &Field{ID: "office", Type: TypeAddress}, "GB", `{"line1":"1 Sample Street","city":"London","postcode":"EC1A 1BB","country":"GB"}`},
		{"address elsewhere", &Field{ID: "office", Type: TypeAddress}, "FR", `{"line1":"1 Sample Street","city":"Sampletown","postcode":"10001","country":"FR"}`},
		{"currency", &Field{ID: "revenue", Type: TypeCurrency}, "US", `{"amount":100000,"currency":"USD"}`},
		{"percentage", &Field{ID: "share", Type: TypePercentage}, "GB", `0`},
		{"document", &Field{ID: "deed", Type: TypeDocument}, "GB", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sampleValue(tt.field, tt.country, sampleNow)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("sample (-want +got):\n%s", diff)
			}
			if got != nil {
				if norm, err := tt.field.Normalize(got, sampleNow); err != nil || !bytes.Equal(norm, got) {
					t.Errorf("Normalize(%s) = %s, %v", got, norm, err)
				}
			}
		})
	}
}

// TestSampleDocument: the sample file of each kind of document field passes
// that field's validation, pages counted by the real counter;
// a field that takes none of PDF, PNG and JPEG rejects it.
func TestSampleDocument(t *testing.T) {
	strict := func(accept ...string) *Field {
		return &Field{Label: "Deed", Type: TypeDocument, Validation: docValidationStrict, Accept: accept}
	}
	onePage := strict("application/pdf")
	onePage.MaxPages, onePage.MaxSize = 1, 2048
	tests := []struct {
		name  string
		field *Field
		want  documentVerdict
	}{
		{"baseline", &Field{Type: TypeDocument}, documentVerdict{FileType: mimePDF, Reason: ReasonBaselinePassed}},
		{"none", &Field{Type: TypeDocument, Validation: docValidationNone}, documentVerdict{FileType: mimePDF, Reason: ReasonNoValidatorConfigured}},
		{"strict, one page, 2 KB", onePage, documentVerdict{FileType: mimePDF, Reason: ReasonValidationPassed}},
		{"strict without accept", strict(), documentVerdict{FileType: mimePDF, Reason: ReasonValidationPassed}},
		{"strict png", strict("image/png"), documentVerdict{FileType: mimePNG, Reason: ReasonValidationPassed}},
		{"strict jpeg", strict("image/jpg", "image/heic"), documentVerdict{FileType: mimeJPEG, Reason: ReasonValidationPassed}},
		{"strict heic", strict("image/heic"), documentVerdict{Reject: "This type of file cannot be accepted here. Upload a HEIC file."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, err := sampleDocument(tt.field)
			if err != nil {
				t.Fatal(err)
			}
			got := checkDocument(tt.field, bytes.NewReader(file.Body), int64(len(file.Body)), file.Type, DefaultMaxUploadBytes, pdf.PageCount)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
	if n, err := pdf.PageCount(bytes.NewReader(samplePDF()), int64(len(samplePDF()))); n != 1 || err != nil {
		t.Errorf("sample PDF has %d pages (%v), want 1", n, err)
	}
}

// TestSamplePDFFile: the sample PDF is what pdftest.Build writes of its
// objects, so that one writer of PDF files serves the domain and the tests.
func TestSamplePDFFile(t *testing.T) {
	content := "BT /F1 14 Tf 56 780 Td (Sample document uploaded by the onboard sandbox test helper.) Tj ET\n"
	want := pdftest.Build(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
	)
	if !bytes.Equal(samplePDF(), want) {
		t.Errorf("sample.pdf differs from pdftest.Build of its objects:\n%q\nwant\n%q", samplePDF(), want)
	}
}

// TestSampleCompany: the sandbox registry's companies where a registry
// checks the choice, else one made of the form's own samples.
func TestSampleCompany(t *testing.T) {
	strictNumber, err := NewForm("numbers", []Field{
		{ID: "company_name", Label: "Name", Type: TypeText, Category: "company", MaxLength: 7},
		{ID: "company_number", Label: "Number", Type: TypeText, Category: "company", Pattern: `^[A-Z]{3}\d{4}$`},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		form                 *Form
		country              string
		verified             bool
		wantNumber, wantName string
	}{
		{StandardForm(), "GB", true, "10000001", "NORTHWIND TRADING LIMITED"},
		{StandardForm(), "IE", true, "100001", "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY"},
		{StandardForm(), "FR", false, "12345678", "Sample Company Ltd"},
		{StandardForm(), "GB", false, "12345678", "Sample Company Ltd"},
		{strictNumber, "FR", false, "AAA0000", "Sample"},
	}
	for _, tt := range tests {
		number, name := sampleCompany(tt.form, tt.country, tt.verified, sampleNow)
		if number != tt.wantNumber || name != tt.wantName {
			t.Errorf("%s %s verified=%v: %q %q, want %q %q", tt.form.ID(), tt.country, tt.verified, number, name, tt.wantNumber, tt.wantName)
		}
	}
}
