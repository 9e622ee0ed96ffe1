package onboarding

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// catalogEntry is what a test checks of a standard form field.
type catalogEntry struct {
	ID, Category string
	Type         FieldType
	Required     bool
	Patchable    bool
	Sensitive    bool
	PersonScoped bool
	Confirmation bool
	Options      []string
	Pattern      string
	MaxLength    int
	Rule         string
	RequiredFor  []PersonRole
}

func TestStandardForm(t *testing.T) {
	t.Parallel()
	companyTypes := []string{"private_limited", "public_limited", "llp", "partnership", "sole_trader", "charity", "other"}
	industries := []string{"software", "financial_services", "retail", "e_commerce", "professional_services", "manufacturing", "hospitality", "healthcare", "construction", "transport", "other"}
	countries := []string{"GB", "IE", "FR", "DE", "ES", "IT", "NL", "US", "OTHER"}
	want := []catalogEntry{
		{ID: "company_name", Type: TypeText, Category: "company", Required: true, Patchable: true},
		{ID: "company_number", Type: TypeText, Category: "company", Patchable: true},
		{ID: "company_country", Type: TypeText, Category: "company", Patchable: true, Pattern: `^[A-Z]{2}$`},
		{ID: "company_type", Type: TypeSelect, Category: "company", Patchable: true, Options: companyTypes},
		{ID: "incorporation_date", Type: TypeDate, Category: "company", Patchable: true, Rule: "not_future"},
		{ID: "registered_address", Type: TypeAddress, Category: "company", Required: true, Patchable: true},
		{ID: "trading_address", Type: TypeAddress, Category: "company", Patchable: true},
		{ID: "industry", Type: TypeSelect, Category: "company", Required: true, Patchable: true, Options: industries},
		{ID: "website", Type: TypeText, Category: "company", Patchable: true, Pattern: `^https?://`},
		{ID: "phone", Type: TypePhone, Category: "company", Patchable: true},
		{ID: "business_description", Type: TypeText, Category: "business", Required: true, Patchable: true, MaxLength: 2000},
		{ID: "countries_of_operation", Type: TypeMultiSelect, Category: "business", Patchable: true, Options: countries},
		{ID: "annual_turnover", Type: TypeCurrency, Category: "business", Patchable: true},
		{ID: "expected_monthly_volume", Type: TypeCurrency, Category: "business", Patchable: true},
		{ID: "high_risk_revenue_percentage", Type: TypePercentage, Category: "business", Patchable: true},
		{ID: "regulated_entity", Type: TypeBoolean, Category: "business", Patchable: true},
		{ID: "tax_id", Type: TypeText, Category: "business", Patchable: true, Sensitive: true},
		{ID: "bank_account_iban", Type: TypeText, Category: "business", Patchable: true, Sensitive: true, Rule: "iban"},
		{ID: "person_full_name", Type: TypeText, Category: "people", PersonScoped: true},
		{ID: "person_date_of_birth", Type: TypeDate, Category: "people", PersonScoped: true, Rule: fieldRuleNotFuture},
		{ID: "person_nationality", Type: TypeText, Category: "people", PersonScoped: true, Pattern: `^[A-Z]{2}$`},
		{ID: "person_home_address", Type: TypeAddress, Category: "people", PersonScoped: true},
		{ID: "person_email", Type: TypeText, Category: "people", PersonScoped: true},
		{ID: "person_phone", Type: TypePhone, Category: "people", PersonScoped: true},
		{ID: "certificate_of_incorporation", Type: TypeDocument, Category: "documents", Required: true},
		{ID: "proof_of_address", Type: TypeDocument, Category: "documents", Required: true},
		{ID: "bank_statement", Type: TypeDocument, Category: "documents"},
		{ID: "person_id_document", Type: TypeDocument, Category: "documents", Required: true, PersonScoped: true, RequiredFor: []PersonRole{"director", "ubo"}},
		{ID: "confirm_accuracy", Type: TypeBoolean, Category: "confirmation", Required: true, Confirmation: true},
		{ID: "confirm_terms", Type: TypeBoolean, Category: "confirmation", Required: true, Confirmation: true},
	}

	form := StandardForm()
	if got := form.ID(); got != "standard" {
		t.Errorf("StandardForm().ID() = %q, want %q", got, "standard")
	}
	var got []catalogEntry
	for _, f := range form.Fields() {
		e := catalogEntry{
			ID: f.ID, Type: f.Type, Category: f.Category, Required: f.Required, Patchable: f.Patchable(),
			Sensitive: f.Sensitive, PersonScoped: f.PersonScoped, Confirmation: f.Confirmation,
			Pattern: f.Pattern, MaxLength: f.MaxLength, Rule: f.Rule, RequiredFor: f.RequiredFor,
		}
		for _, o := range f.Options {
			e.Options = append(e.Options, o.Value)
		}
		got = append(got, e)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("StandardForm() catalog mismatch (-got +want):\n%s", diff)
	}

	for _, f := range form.Fields() {
		if f.Label == "" || strings.TrimSpace(f.Label) != f.Label {
			t.Errorf("StandardForm() field %s has label %q, want a trimmed, non-empty label", f.ID, f.Label)
		}
		if f.Validation != "" || f.Accept != nil || f.MaxSize != 0 || f.MaxPages != 0 {
			t.Errorf("StandardForm() field %s has strict document settings; want the baseline default", f.ID)
		}
		for _, o := range f.Options {
			if o.Label == "" {
				t.Errorf("StandardForm() field %s option %s has no label", f.ID, o.Value)
			}
		}
	}
}

func TestStandardFormLabels(t *testing.T) {
	t.Parallel()
	form := StandardForm()
	tests := []struct{ id, label string }{
		{"company_name", "Registered company name"},
		{"registered_address", "Registered office address"},
		{"bank_account_iban", "Business bank account (IBAN)"},
	}
	for _, tt := range tests {
		f, ok := form.Field(tt.id)
		if !ok {
			t.Fatalf("StandardForm().Field(%q) not found", tt.id)
		}
		if f.Label != tt.label {
			t.Errorf("StandardForm().Field(%q).Label = %q, want %q", tt.id, f.Label, tt.label)
		}
	}
	phone, _ := form.Field("phone")
	if want := "International format, for example +44 20 7946 0958."; phone.Description != want {
		t.Errorf("StandardForm().Field(phone).Description = %q, want %q", phone.Description, want)
	}
	companyType, _ := form.Field("company_type")
	if got, want := companyType.Options[0], (Option{Value: "private_limited", Label: "Private limited company"}); got != want {
		t.Errorf("company_type option 1 = %+v, want %+v", got, want)
	}
	industry, _ := form.Field("industry")
	if got, want := industry.Options[3], (Option{Value: "e_commerce", Label: "E-commerce"}); got != want {
		t.Errorf("industry option 4 = %+v, want %+v", got, want)
	}
	countries, _ := form.Field("countries_of_operation")
	if got, want := countries.Options[0], (Option{Value: "GB", Label: "United Kingdom"}); got != want {
		t.Errorf("countries_of_operation option 1 = %+v, want %+v", got, want)
	}
}

func TestStandardFormIndependent(t *testing.T) {
	t.Parallel()
	a := StandardForm()
	f, _ := a.Field("industry")
	f.Options[0].Value = "changed"
	a.Fields()[0].Label = "changed"

	b := StandardForm()
	if f, _ := b.Field("industry"); f.Options[0].Value != "software" {
		t.Errorf("second StandardForm() industry option = %q, want software", f.Options[0].Value)
	}
	if got := b.Fields()[0].Label; got != "Registered company name" {
		t.Errorf("second StandardForm() first label = %q, want %q", got, "Registered company name")
	}
}

func TestFormField(t *testing.T) {
	t.Parallel()
	form := StandardForm()
	f, ok := form.Field("website")
	if !ok || f.ID != "website" {
		t.Errorf("Field(website) = %v, %v; want the website field, true", f, ok)
	}
	if f, ok := form.Field("nope"); ok || f != nil {
		t.Errorf("Field(nope) = %v, %v; want nil, false", f, ok)
	}
	if f, ok := form.Field(""); ok || f != nil {
		t.Errorf("Field(\"\") = %v, %v; want nil, false", f, ok)
	}
}

func TestPatchable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		field Field
		want  bool
	}{
		{"text", Field{Type: TypeText}, true},
		{"boolean", Field{Type: TypeBoolean}, true},
		{"document", Field{Type: TypeDocument}, false},
		{"person-scoped", Field{Type: TypeText, PersonScoped: true}, false},
		{"confirmation", Field{Type: TypeBoolean, Confirmation: true}, false},
	}
	for _, tt := range tests {
		if got := tt.field.Patchable(); got != tt.want {
			t.Errorf("%s: Patchable() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNewForm(t *testing.T) {
	t.Parallel()
	fields := []Field{
		{ID: "name", Label: "Name", Type: TypeText, Category: "company", Pattern: `^[A-Z]`, MaxLength: 10},
		{ID: "kind", Label: "Kind", Type: TypeSelect, Category: "company", Options: []Option{{"a", "A"}, {"b", "B"}}},
		{ID: "since", Label: "Since", Type: TypeDate, Category: "company", Rule: "not_future"},
		{ID: "iban", Label: "IBAN", Type: TypeText, Category: "company", Rule: "iban"},
		{ID: "passport", Label: "Passport", Type: TypeDocument, Category: "documents", PersonScoped: true,
			Validation: "strict", Accept: []string{"application/pdf", "image/jpeg"}, MaxSize: 1 << 20, MaxPages: 4,
			RequiredFor: []PersonRole{"director", "shareholder"}},
		{ID: "bill", Label: "Bill", Type: TypeDocument, Category: "documents", Validation: "none"},
		{ID: "ok", Label: "I agree", Type: TypeBoolean, Category: "confirmation", Confirmation: true, Required: true},
	}
	form, err := NewForm("acme", fields)
	if err != nil {
		t.Fatalf("NewForm(acme) error: %v", err)
	}
	if diff := cmp.Diff(form.Fields(), fields); diff != "" {
		t.Errorf("NewForm(acme).Fields() mismatch (-got +want):\n%s", diff)
	}
	if got := form.ID(); got != "acme" {
		t.Errorf("NewForm(acme).ID() = %q, want acme", got)
	}

	// The form keeps its own copy.
	fields[0].Label = "changed"
	fields[1].Options[0].Value = "changed"
	fields[4].Accept[0] = "changed"
	fields[4].RequiredFor[0] = "changed"
	f, _ := form.Field("name")
	kind, _ := form.Field("kind")
	doc, _ := form.Field("passport")
	if f.Label != "Name" || kind.Options[0].Value != "a" || doc.Accept[0] != "application/pdf" || doc.RequiredFor[0] != "director" {
		t.Errorf("NewForm(acme) shares memory with its argument: %+v %+v %+v", f, kind, doc)
	}
}

func TestNewFormErrors(t *testing.T) {
	t.Parallel()
	// valid returns a valid field of type typ, changed by change.
	valid := func(typ FieldType, change func(*Field)) Field {
		f := Field{ID: "f", Label: "F", Type: typ, Category: "company"}
		switch typ {
		case TypeSelect, TypeMultiSelect:
			f.Options = []Option{{"a", "A"}}
		case TypeDocument:
			f.Category = "documents"
		}
		if change != nil {
			change(&f)
		}
		return f
	}
	one := func(typ FieldType, change func(*Field)) []Field { return []Field{valid(typ, change)} }
	const prefix = `form "t": field "f": `
	tests := []struct {
		name   string
		id     string
		fields []Field
		want   string
	}{
		{"empty form id", "", one(TypeText, nil), "form id is empty"},
		{"blank form id", "  ", one(TypeText, nil), "form id is empty"},
		{"no fields", "t", nil, `form "t" has no fields`},
		{"empty field id", "t", one(TypeText, func(f *Field) { f.ID = "" }), `form "t": field #1: id is empty`},
		{
			"upper-case field id", "t", one(TypeText, func(f *Field) { f.ID = "Company" }),
			`form "t": field #1: id "Company" is invalid: it must start with a lower-case letter and contain only lower-case letters, digits and underscores, at most 64 characters`,
		},
		{
			"field id with a dash", "t", one(TypeText, func(f *Field) { f.ID = "company-name" }),
			`form "t": field #1: id "company-name" is invalid: it must start with a lower-case letter and contain only lower-case letters, digits and underscores, at most 64 characters`,
		},
		{
			"field id too long", "t", one(TypeText, func(f *Field) { f.ID = "a" + strings.Repeat("b", 64) }),
			`form "t": field #1: id "a` + strings.Repeat("b", 64) + `" is invalid: it must start with a lower-case letter and contain only lower-case letters, digits and underscores, at most 64 characters`,
		},
		{
			"duplicate field id", "t",
			[]Field{valid(TypeText, nil), valid(TypeText, func(f *Field) { f.ID = "g" }), valid(TypeBoolean, nil)},
			prefix + "id is used twice (fields #1 and #3)",
		},
		{"empty label", "t", one(TypeText, func(f *Field) { f.Label = " " }), prefix + "label is empty"},
		{
			"empty type", "t", one("", nil),
			prefix + "type is empty; use one of text, select, multi_select, boolean, date, currency, address, phone, percentage, document",
		},
		{
			"unknown type", "t", one("email", nil),
			prefix + `type "email" is unknown; use one of text, select, multi_select, boolean, date, currency, address, phone, percentage, document`,
		},
		{
			"empty category", "t", one(TypeText, func(f *Field) { f.Category = "" }),
			prefix + "category is empty; name the form stage, for example company or business",
		},
		{"select without options", "t", one(TypeSelect, func(f *Field) { f.Options = nil }), prefix + "a select field needs at least one option"},
		{"multi select without options", "t", one(TypeMultiSelect, func(f *Field) { f.Options = []Option{} }), prefix + "a multi_select field needs at least one option"},
		{
			"empty option value", "t", one(TypeSelect, func(f *Field) { f.Options = append(f.Options, Option{Label: "None"}) }),
			prefix + "option #2 has an empty value",
		},
		{
			"duplicate option value", "t", one(TypeMultiSelect, func(f *Field) { f.Options = append(f.Options, Option{"a", "Again"}) }),
			prefix + `option value "a" is listed twice`,
		},
		{
			"options on text", "t", one(TypeText, func(f *Field) { f.Options = []Option{{"a", "A"}} }),
			prefix + "options are only allowed on select and multi_select fields, not on text fields",
		},
		{
			"pattern on date", "t", one(TypeDate, func(f *Field) { f.Pattern = "^2" }),
			prefix + "pattern is only allowed on text fields, not on date fields",
		},
		{
			"pattern message without a pattern", "t", one(TypeText, func(f *Field) { f.PatternMessage = "must be short" }),
			prefix + "pattern_message needs a pattern",
		},
		{
			"pattern does not compile", "t", one(TypeText, func(f *Field) { f.Pattern = "[a-" }),
			prefix + "pattern \"[a-\" does not compile: error parsing regexp: missing closing ]: `[a-`",
		},
		{
			"pattern with lookahead", "t", one(TypeText, func(f *Field) { f.Pattern = "^(?=a)" }),
			prefix + "pattern \"^(?=a)\" does not compile: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
		},
		{
			"max length on select", "t", one(TypeSelect, func(f *Field) { f.MaxLength = 3 }),
			prefix + "max_length is only allowed on text fields, not on select fields",
		},
		{
			"negative max length", "t", one(TypeText, func(f *Field) { f.MaxLength = -1 }),
			prefix + "max_length is -1; use 0 for the default (500 characters, 200 for a name) or a positive number of characters",
		},
		{
			"unknown rule", "t", one(TypeText, func(f *Field) { f.Rule = "email" }),
			prefix + `rule "email" is unknown; use iban (text) or not_future (date)`,
		},
		{
			"iban on date", "t", one(TypeDate, func(f *Field) { f.Rule = "iban" }),
			prefix + `rule "iban" is only allowed on text fields, not on date fields`,
		},
		{
			"not_future on text", "t", one(TypeText, func(f *Field) { f.Rule = "not_future" }),
			prefix + `rule "not_future" is only allowed on date fields, not on text fields`,
		},
		{
			"validation on text", "t", one(TypeText, func(f *Field) { f.Validation = "strict" }),
			prefix + "validation is only allowed on document fields, not on text fields",
		},
		{
			"unknown validation", "t", one(TypeDocument, func(f *Field) { f.Validation = "paranoid" }),
			prefix + `validation "paranoid" is unknown; use none, baseline or strict`,
		},
		{
			"accept on text", "t", one(TypeText, func(f *Field) { f.Accept = []string{"application/pdf"} }),
			prefix + "accept is only allowed on document fields, not on text fields",
		},
		{
			"max size on text", "t", one(TypeText, func(f *Field) { f.MaxSize = 10 }),
			prefix + "max_size is only allowed on document fields, not on text fields",
		},
		{
			"max pages on boolean", "t", one(TypeBoolean, func(f *Field) { f.MaxPages = 2 }),
			prefix + "max_pages is only allowed on document fields, not on boolean fields",
		},
		{
			"accept without strict", "t", one(TypeDocument, func(f *Field) { f.Accept = []string{"application/pdf"} }),
			prefix + `accept only applies with validation "strict"`,
		},
		{
			"max size without strict", "t", one(TypeDocument, func(f *Field) { f.Validation = "baseline"; f.MaxSize = 10 }),
			prefix + `max_size only applies with validation "strict"`,
		},
		{
			"max pages without strict", "t", one(TypeDocument, func(f *Field) { f.MaxPages = 2 }),
			prefix + `max_pages only applies with validation "strict"`,
		},
		{
			"accept not a MIME type", "t", one(TypeDocument, func(f *Field) { f.Validation = "strict"; f.Accept = []string{"pdf"} }),
			prefix + `accept entry "pdf" is not a lower-case MIME type such as application/pdf or image/png`,
		},
		{
			"negative max size", "t", one(TypeDocument, func(f *Field) { f.Validation = "strict"; f.MaxSize = -1 }),
			prefix + "max_size is -1; use 0 for the server default or a positive number of bytes",
		},
		{
			"negative max pages", "t", one(TypeDocument, func(f *Field) { f.Validation = "strict"; f.MaxPages = -1 }),
			prefix + "max_pages is -1; use 0 for no limit or a positive number of pages",
		},
		{
			"required_for on company document", "t", one(TypeDocument, func(f *Field) { f.RequiredFor = []PersonRole{"director"} }),
			prefix + "required_for is only allowed on person-scoped document fields",
		},
		{
			"required_for on person-scoped text", "t", one(TypeText, func(f *Field) { f.PersonScoped = true; f.RequiredFor = []PersonRole{"ubo"} }),
			prefix + "required_for is only allowed on person-scoped document fields",
		},
		{
			"unknown role", "t", one(TypeDocument, func(f *Field) { f.PersonScoped = true; f.RequiredFor = []PersonRole{"director", "secretary"} }),
			prefix + `required_for role "secretary" is unknown; use director, ubo, shareholder`,
		},
		{
			"duplicate role", "t", one(TypeDocument, func(f *Field) { f.PersonScoped = true; f.RequiredFor = []PersonRole{"ubo", "ubo"} }),
			prefix + `required_for lists "ubo" twice`,
		},
		{
			"confirmation not boolean", "t", one(TypeText, func(f *Field) { f.Confirmation = true }),
			prefix + "a confirmation field must be of type boolean, not text",
		},
		{
			"every problem reported", "t",
			[]Field{
				valid(TypeText, func(f *Field) { f.Label = "" }),
				valid(TypeSelect, func(f *Field) { f.ID = "Bad"; f.Options = nil }),
				valid(TypeText, func(f *Field) { f.ID = "g"; f.Category = ""; f.Rule = "not_future" }),
			},
			prefix + "label is empty\n" +
				`form "t": field #2: id "Bad" is invalid: it must start with a lower-case letter and contain only lower-case letters, digits and underscores, at most 64 characters` + "\n" +
				`form "t": field #2: a select field needs at least one option` + "\n" +
				`form "t": field "g": category is empty; name the form stage, for example company or business` + "\n" +
				`form "t": field "g": rule "not_future" is only allowed on date fields, not on text fields`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			form, err := NewForm(tt.id, tt.fields)
			if err == nil {
				t.Fatalf("NewForm(%q) = %v, nil; want error %q", tt.id, form, tt.want)
			}
			if form != nil {
				t.Errorf("NewForm(%q) returned a form with an error", tt.id)
			}
			if diff := cmp.Diff(err.Error(), tt.want); diff != "" {
				t.Errorf("NewForm(%q) error mismatch (-got +want):\n%s", tt.id, diff)
			}
		})
	}
}
