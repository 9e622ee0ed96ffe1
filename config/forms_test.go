package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestLoadFormKYBLite(t *testing.T) {
	cfg := Config{dir: "."}
	form, err := cfg.loadForm(filepath.Join("..", "testdata", "forms", "kyb-lite.toml"))
	if err != nil {
		t.Fatalf("loadForm: %v", err)
	}
	type field struct {
		ID           string
		Type         onboarding.FieldType
		Category     string
		Required     bool
		Confirmation bool
		Patchable    bool
	}
	var got []field
	for _, f := range form.Fields() {
		got = append(got, field{f.ID, f.Type, f.Category, f.Required, f.Confirmation, f.Patchable()})
	}
	want := []field{
		{"company_name", onboarding.TypeText, "company", true, false, true},
		{"company_number", onboarding.TypeText, "company", false, false, true},
		{"company_country", onboarding.TypeText, "company", false, false, true},
		{"registered_address", onboarding.TypeAddress, "company", true, false, true},
		{"industry", onboarding.TypeSelect, "business", true, false, true},
		{"website", onboarding.TypeText, "business", false, false, true},
		{"certificate_of_incorporation", onboarding.TypeDocument, "documents", true, false, false},
		{"confirm_accuracy", onboarding.TypeBoolean, "confirmation", true, true, false},
	}
	if form.ID() != "kyb-lite" {
		t.Errorf("form id = %q, want kyb-lite", form.ID())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kyb-lite fields (-want +got):\n%s", diff)
	}
	industry, _ := form.Field("industry")
	wantOptions := []onboarding.Option{
		{Value: "software", Label: "Software"},
		{Value: "retail", Label: "Retail"},
		{Value: "professional_services", Label: "Professional services"},
		{Value: "other", Label: "Other"},
	}
	if diff := cmp.Diff(wantOptions, industry.Options); diff != "" {
		t.Errorf("industry options (-want +got):\n%s", diff)
	}
	country, _ := form.Field("company_country")
	if country.Pattern != "^[A-Z]{2}$" || country.PatternMessage != "must be a two-letter country code in capitals, such as GB or IE" {
		t.Errorf("company_country pattern %q, message %q", country.Pattern, country.PatternMessage)
	}
	doc, _ := form.Field("certificate_of_incorporation")
	wantDoc := onboarding.Field{
		ID: "certificate_of_incorporation", Label: "Certificate of incorporation",
		Description: "The certificate issued by the company registry, as a PDF or a clear photo.",
		Type:        onboarding.TypeDocument, Category: "documents", Required: true,
		Validation: "strict", Accept: []string{"application/pdf", "image/png", "image/jpeg"},
		MaxSize: 10 << 20, MaxPages: 20,
	}
	if diff := cmp.Diff(wantDoc, *doc); diff != "" {
		t.Errorf("document field (-want +got):\n%s", diff)
	}
}

func TestLoadFormStandard(t *testing.T) {
	form, err := (&Config{}).loadForm("standard")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(onboarding.StandardForm().Fields(), form.Fields()); diff != "" {
		t.Errorf("standard form (-want +got):\n%s", diff)
	}
}

func TestLoadFormErrors(t *testing.T) {
	const field = `
id = "bad"
[[fields]]
id = "company_name"
label = "Company name"
category = "company"
`
	tests := []struct {
		name    string
		content string
		want    []string // substrings of the error, besides the path
	}{
		{"unknown key in a field", field + "type = \"text\"\ncolour = \"blue\"\n",
			[]string{"unknown keys: fields.colour"}},
		{"unknown key in an option", field + "type = \"select\"\noptions = [{ value = \"a\", label = \"A\", hint = \"x\" }]\n",
			[]string{"unknown keys: fields.options.hint"}},
		{"unknown top-level key", "title = \"x\"\n" + field + "type = \"text\"\n",
			[]string{"unknown keys: title"}},
		{"unknown type", field + "type = \"txt\"\n",
			[]string{`form "bad": field "company_name": type "txt" is unknown`}},
		{"pattern on a select", field + "type = \"select\"\npattern = \"^a\"\noptions = [{ value = \"a\", label = \"A\" }]\n",
			[]string{`form "bad": field "company_name": pattern is only allowed on text fields`}},
		{"no fields", "id = \"bad\"\n",
			[]string{`form "bad" has no fields`}},
		{"not TOML", "id = \n", []string{"toml:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "form.toml", tt.content)
			_, err := (&Config{}).loadForm(path)
			if err == nil {
				t.Fatal("loadForm succeeded; want an error")
			}
			for _, want := range append([]string{"form " + path + ": "}, tt.want...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("loadForm error:\n%v\nwant it to contain %q", err, want)
				}
			}
		})
	}
}

func TestLoadFormMissingFileNamesThePath(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{dir: dir}
	_, err := cfg.loadForm("forms/missing.toml")
	want := filepath.Join(dir, "forms", "missing.toml")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("loadForm error = %v; want one naming %s", err, want)
	}
}
