package onboarding

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// FieldType is the type of a catalog field (spec 2.4).
type FieldType string

// The field types of spec 2.4.
const (
	TypeText        FieldType = "text"
	TypeSelect      FieldType = "select"
	TypeMultiSelect FieldType = "multi_select"
	TypeBoolean     FieldType = "boolean"
	TypeDate        FieldType = "date"
	TypeCurrency    FieldType = "currency"
	TypeAddress     FieldType = "address"
	TypePhone       FieldType = "phone"
	TypePercentage  FieldType = "percentage"
	TypeDocument    FieldType = "document"
)

// fieldTypes lists every FieldType in the order error messages name them.
var fieldTypes = [...]FieldType{
	TypeText, TypeSelect, TypeMultiSelect, TypeBoolean, TypeDate,
	TypeCurrency, TypeAddress, TypePhone, TypePercentage, TypeDocument,
}

// Values of Field.Rule.
const (
	fieldRuleIBAN      = "iban"       // text: an IBAN with a valid ISO 13616 checksum
	fieldRuleNotFuture = "not_future" // date: today (UTC) or earlier
)

// Values of Field.Validation (DESIGN §5.6).
const (
	docValidationNone     = "none"
	docValidationBaseline = "baseline"
	docValidationStrict   = "strict"
)

// Option is one choice of a select or multi_select field.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// Field is one entry of a form's catalog (spec 2.4): what the applicant is
// asked, how the value is validated, and where it is shown.
type Field struct {
	ID          string
	Label       string
	Description string
	Type        FieldType
	// Category is the form stage the field belongs to: company, business,
	// people, documents, confirmation (any non-empty word).
	Category string
	Required bool
	// Sensitive fields are excluded from outbound webhook payloads.
	Sensitive bool
	// PersonScoped fields are collected per person (the people stage and
	// per-person documents).
	PersonScoped bool
	// Confirmation marks an attestation the applicant ticks.
	Confirmation bool
	// Options are the choices of a select or multi_select field.
	Options []Option
	// Pattern is an RE2 pattern a text value must match.
	Pattern string
	// PatternMessage says in words what a value that does not match Pattern
	// must be, after the field's label ("must start with https://"); empty
	// means "must match the pattern {Pattern}".
	PatternMessage string
	// MaxLength is the maximum length of a text value in characters
	// (runes); 0 means no limit.
	MaxLength int
	// Rule is an extra check: "iban" (text) or "not_future" (date); empty
	// means none.
	Rule string

	// Document fields (DESIGN §5.6).

	// Validation is "none", "baseline" (the default when empty) or "strict".
	Validation string
	// Accept lists the MIME types a strict document may have.
	Accept []string
	// MaxSize is a strict document's size limit in bytes; 0 means the
	// server default.
	MaxSize int64
	// MaxPages is a strict document's page limit; 0 means no limit.
	MaxPages int
	// RequiredFor lists, for a person-scoped document, the roles (director,
	// ubo, shareholder) of the people who must provide one.
	RequiredFor []PersonRole
}

// Patchable reports whether the partner may set the field through the API
// (spec 4.5 rule 1): false for document, person-scoped and confirmation
// fields.
func (f *Field) Patchable() bool {
	return f.Type != TypeDocument && !f.PersonScoped && !f.Confirmation
}

// Form is a validated, immutable catalog of fields in form order. Build one
// with NewForm or StandardForm; a Form is safe for concurrent use.
type Form struct {
	id     string
	fields []Field
	index  map[string]int // field id -> position in fields
	stages []Stage        // built once from fields
}

// ID returns the form's id, for example "standard".
func (f *Form) ID() string { return f.id }

// Fields returns the catalog in form order. The slice is the form's own:
// callers must not modify it or the fields in it.
func (f *Form) Fields() []Field { return f.fields }

// Field returns the field with the given id. The field belongs to the form:
// callers must not modify it.
func (f *Form) Field(id string) (*Field, bool) {
	i, ok := f.index[id]
	if !ok {
		return nil, false
	}
	return &f.fields[i], true
}

var (
	fieldIDPattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	mimeTypePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$`)
)

// NewForm validates a form definition and returns it as a Form. It copies
// fields, so later changes to the argument do not affect the form. The error
// lists every problem found, one per line, each naming the form and the field
// (by id, or by position when the id itself is wrong), so that an operator
// loading a form file can fix them all at once.
func NewForm(id string, fields []Field) (*Form, error) {
	if strings.TrimSpace(id) == "" {
		return nil, errors.New("form id is empty")
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("form %q has no fields", id)
	}
	form := &Form{
		id:     id,
		fields: make([]Field, len(fields)),
		index:  make(map[string]int, len(fields)),
	}
	var problems Problems
	for i, f := range fields {
		f.Options = slices.Clone(f.Options)
		f.Accept = slices.Clone(f.Accept)
		f.RequiredFor = slices.Clone(f.RequiredFor)
		form.fields[i] = f

		name := fmt.Sprintf("field #%d", i+1)
		if fieldIDPattern.MatchString(f.ID) {
			name = fmt.Sprintf("field %q", f.ID)
		}
		report := func(format string, args ...any) {
			problems.Note(name, "form %q: %s: %s", id, name, fmt.Sprintf(format, args...))
		}
		switch first, dup := form.index[f.ID]; {
		case f.ID == "":
			report("id is empty")
		case !fieldIDPattern.MatchString(f.ID):
			report("id %q is invalid: it must start with a lower-case letter and contain only lower-case letters, digits and underscores, at most 64 characters", f.ID)
		case dup:
			report("id is used twice (fields #%d and #%d)", first+1, i+1)
		default:
			form.index[f.ID] = i
		}
		checkFieldDefinition(&f, report)
	}
	if err := problems.Err(); err != nil {
		return nil, err
	}
	form.stages = form.buildStages()
	return form, nil
}

// checkFieldDefinition reports each problem of one field's definition,
// other than its id, to add.
func checkFieldDefinition(f *Field, add func(format string, args ...any)) {
	if strings.TrimSpace(f.Label) == "" {
		add("label is empty")
	}
	if !slices.Contains(fieldTypes[:], f.Type) {
		names := make([]string, len(fieldTypes))
		for i, t := range fieldTypes {
			names[i] = string(t)
		}
		if f.Type == "" {
			add("type is empty; use one of %s", strings.Join(names, ", "))
		} else {
			add("type %q is unknown; use one of %s", f.Type, strings.Join(names, ", "))
		}
	}
	if strings.TrimSpace(f.Category) == "" {
		add("category is empty; name the form stage, for example company or business")
	}

	// Options.
	if f.Type == TypeSelect || f.Type == TypeMultiSelect {
		if len(f.Options) == 0 {
			add("a %s field needs at least one option", f.Type)
		}
		seen := make(map[string]bool, len(f.Options))
		for j, o := range f.Options {
			switch {
			case o.Value == "":
				add("option #%d has an empty value", j+1)
			case seen[o.Value]:
				add("option value %q is listed twice", o.Value)
			}
			seen[o.Value] = true
		}
	} else if len(f.Options) > 0 {
		add("options are only allowed on select and multi_select fields, not on %s fields", f.Type)
	}

	// Text constraints.
	if f.Pattern != "" {
		if f.Type != TypeText {
			add("pattern is only allowed on text fields, not on %s fields", f.Type)
		} else if _, err := compileFieldPattern(f.Pattern); err != nil {
			add("pattern %q does not compile: %v", f.Pattern, err)
		}
	} else if f.PatternMessage != "" {
		add("pattern_message needs a pattern")
	}
	if f.MaxLength != 0 {
		if f.Type != TypeText {
			add("max_length is only allowed on text fields, not on %s fields", f.Type)
		} else if f.MaxLength < 0 {
			add("max_length is %d; use 0 for no limit or a positive number of characters", f.MaxLength)
		}
	}
	switch f.Rule {
	case "":
	case fieldRuleIBAN:
		if f.Type != TypeText {
			add("rule %q is only allowed on text fields, not on %s fields", f.Rule, f.Type)
		}
	case fieldRuleNotFuture:
		if f.Type != TypeDate {
			add("rule %q is only allowed on date fields, not on %s fields", f.Rule, f.Type)
		}
	default:
		add("rule %q is unknown; use %s (text) or %s (date)", f.Rule, fieldRuleIBAN, fieldRuleNotFuture)
	}

	// Document settings.
	if f.Type != TypeDocument {
		if f.Validation != "" {
			add("validation is only allowed on document fields, not on %s fields", f.Type)
		}
		if len(f.Accept) > 0 {
			add("accept is only allowed on document fields, not on %s fields", f.Type)
		}
		if f.MaxSize != 0 {
			add("max_size is only allowed on document fields, not on %s fields", f.Type)
		}
		if f.MaxPages != 0 {
			add("max_pages is only allowed on document fields, not on %s fields", f.Type)
		}
	} else {
		strict := f.Validation == docValidationStrict
		switch f.Validation {
		case "", docValidationNone, docValidationBaseline, docValidationStrict:
		default:
			add("validation %q is unknown; use %s, %s or %s", f.Validation, docValidationNone, docValidationBaseline, docValidationStrict)
		}
		if len(f.Accept) > 0 && !strict {
			add("accept only applies with validation %q", docValidationStrict)
		}
		for _, a := range f.Accept {
			if !mimeTypePattern.MatchString(a) {
				add("accept entry %q is not a lower-case MIME type such as application/pdf or image/png", a)
			}
		}
		switch {
		case f.MaxSize < 0:
			add("max_size is %d; use 0 for the server default or a positive number of bytes", f.MaxSize)
		case f.MaxSize > 0 && !strict:
			add("max_size only applies with validation %q", docValidationStrict)
		}
		switch {
		case f.MaxPages < 0:
			add("max_pages is %d; use 0 for no limit or a positive number of pages", f.MaxPages)
		case f.MaxPages > 0 && !strict:
			add("max_pages only applies with validation %q", docValidationStrict)
		}
	}
	if len(f.RequiredFor) > 0 {
		if f.Type != TypeDocument || !f.PersonScoped {
			add("required_for is only allowed on person-scoped document fields")
		}
		seen := make(map[PersonRole]bool, len(f.RequiredFor))
		for _, r := range f.RequiredFor {
			switch {
			case !slices.Contains(PersonRoles(), r):
				add("required_for role %q is unknown; use %s", r, joinValues(PersonRoles()))
			case seen[r]:
				add("required_for lists %q twice", r)
			}
			seen[r] = true
		}
	}

	if f.Confirmation && f.Type != TypeBoolean {
		add("a confirmation field must be of type boolean, not %s", f.Type)
	}
}

// Patterns of the built-in form. compileFieldPattern returns them compiled
// once; other patterns (from form files) are compiled on use.
const (
	patternCountryCode = `^[A-Z]{2}$`
	patternWebURL      = `^https?://`

	msgCountryCode = "must be a two-letter country code in capitals, such as GB or IE"
)

var (
	countryCodePattern = regexp.MustCompile(patternCountryCode)
	webURLPattern      = regexp.MustCompile(patternWebURL)
)

// compileFieldPattern compiles a text field's Pattern.
func compileFieldPattern(p string) (*regexp.Regexp, error) {
	switch p {
	case patternCountryCode:
		return countryCodePattern, nil
	case patternWebURL:
		return webURLPattern, nil
	}
	return regexp.Compile(p)
}

// StandardForm returns the built-in form "standard" of DESIGN §6. It is
// built on each call, so callers cannot affect one another.
func StandardForm() *Form {
	form, err := NewForm("standard", standardFields())
	if err != nil {
		panic("onboarding: the built-in form is invalid: " + err.Error())
	}
	return form
}

// standardFields is the catalog of the built-in form, in form order.
func standardFields() []Field {
	const (
		company      = "company"
		business     = "business"
		people       = "people"
		documents    = "documents"
		confirmation = "confirmation"
	)
	const phoneHelp = "International format, for example +44 20 7946 0958."
	return []Field{
		// Company.
		{
			ID: "company_name", Label: "Registered company name", Type: TypeText, Category: company, Required: true,
			Description: "The company's full legal name, exactly as it appears on the company register.",
		},
		{
			ID: "company_number", Label: "Company registration number", Type: TypeText, Category: company,
			Description: "The number the company registry issued, for example 12345678 in the UK or 123456 in Ireland.",
		},
		{
			ID: "company_country", Label: "Country of incorporation", Type: TypeText, Category: company,
			Pattern: patternCountryCode, PatternMessage: msgCountryCode,
			Description: "Two-letter ISO 3166-1 country code, for example GB or IE.",
		},
		{
			ID: "company_type", Label: "Company type", Type: TypeSelect, Category: company,
			Options: []Option{
				{"private_limited", "Private limited company"},
				{"public_limited", "Public limited company"},
				{"llp", "Limited liability partnership"},
				{"partnership", "Partnership"},
				{"sole_trader", "Sole trader"},
				{"charity", "Charity"},
				{"other", "Other"},
			},
		},
		{
			ID: "incorporation_date", Label: "Date of incorporation", Type: TypeDate, Category: company,
			Rule:        fieldRuleNotFuture,
			Description: "The date on the certificate of incorporation, in YYYY-MM-DD form.",
		},
		{
			ID: "registered_address", Label: "Registered office address", Type: TypeAddress, Category: company, Required: true,
			Description: "The official address on the company register.",
		},
		{
			ID: "trading_address", Label: "Trading address", Type: TypeAddress, Category: company,
			Description: "Where the business operates day to day, if different from the registered office.",
		},
		{
			ID: "industry", Label: "Industry", Type: TypeSelect, Category: company, Required: true,
			Options: []Option{
				{"software", "Software"},
				{"financial_services", "Financial services"},
				{"retail", "Retail"},
				{"e_commerce", "E-commerce"},
				{"professional_services", "Professional services"},
				{"manufacturing", "Manufacturing"},
				{"hospitality", "Hospitality"},
				{"healthcare", "Healthcare"},
				{"construction", "Construction"},
				{"transport", "Transport and logistics"},
				{"other", "Other"},
			},
		},
		{
			ID: "website", Label: "Website", Type: TypeText, Category: company,
			Pattern: patternWebURL, PatternMessage: "must start with https:// or http://, for example https://example.com",
			Description: "The full address, starting with https:// or http://, for example https://example.com.",
		},
		{
			ID: "phone", Label: "Company phone number", Type: TypePhone, Category: company,
			Description: phoneHelp,
		},

		// Business.
		{
			ID: "business_description", Label: "What the business does", Type: TypeText, Category: business, Required: true,
			MaxLength:   2000,
			Description: "Describe your products or services, your customers and how you sell to them. At most 2,000 characters.",
		},
		{
			ID: "countries_of_operation", Label: "Countries of operation", Type: TypeMultiSelect, Category: business,
			Description: "Every country where the business has customers, staff or operations.",
			Options: []Option{
				{"GB", "United Kingdom"},
				{"IE", "Ireland"},
				{"FR", "France"},
				{"DE", "Germany"},
				{"ES", "Spain"},
				{"IT", "Italy"},
				{"NL", "Netherlands"},
				{"US", "United States"},
				{"OTHER", "Other countries"},
			},
		},
		{
			ID: "annual_turnover", Label: "Annual turnover", Type: TypeCurrency, Category: business,
			Description: "Revenue over the last 12 months, or the expected revenue for the first year, in GBP, EUR or USD.",
		},
		{
			ID: "expected_monthly_volume", Label: "Expected monthly payment volume", Type: TypeCurrency, Category: business,
			Description: "The total value of the payments you expect to process each month, in GBP, EUR or USD.",
		},
		{
			ID: "high_risk_revenue_percentage", Label: "Share of revenue from high-risk activities (%)", Type: TypePercentage, Category: business,
			Description: "From 0 to 100: the part of your revenue from activities such as gambling, crypto-assets, adult content or weapons.",
		},
		{
			ID: "regulated_entity", Label: "Regulated by a financial services authority", Type: TypeBoolean, Category: business,
			Description: "Whether the company is authorised or registered by a financial regulator, such as the FCA or the Central Bank of Ireland.",
		},
		{
			ID: "tax_id", Label: "Tax identification number", Type: TypeText, Category: business, Sensitive: true,
			Description: "For example the company's VAT number or Corporation Tax reference.",
		},
		{
			ID: "bank_account_iban", Label: "Business bank account (IBAN)", Type: TypeText, Category: business, Sensitive: true,
			Rule:        fieldRuleIBAN,
			Description: "The International Bank Account Number of the company's own account, for example GB82 WEST 1234 5698 7654 32. Spaces are optional.",
		},

		// People: collected per director, beneficial owner and shareholder.
		{
			ID: "person_full_name", Label: "Full legal name", Type: TypeText, Category: people, PersonScoped: true,
			Description: "As shown on the person's passport or identity card.",
		},
		{
			ID: "person_date_of_birth", Label: "Date of birth", Type: TypeDate, Category: people, PersonScoped: true,
			Description: "In YYYY-MM-DD form.",
		},
		{
			ID: "person_nationality", Label: "Nationality", Type: TypeText, Category: people, PersonScoped: true,
			Pattern: patternCountryCode, PatternMessage: msgCountryCode,
			Description: "Two-letter ISO 3166-1 country code, for example GB or IE.",
		},
		{
			ID: "person_home_address", Label: "Home address", Type: TypeAddress, Category: people, PersonScoped: true,
			Description: "The person's residential address, not the company's.",
		},
		{
			ID: "person_email", Label: "E-mail address", Type: TypeText, Category: people, PersonScoped: true,
		},
		{
			ID: "person_phone", Label: "Phone number", Type: TypePhone, Category: people, PersonScoped: true,
			Description: phoneHelp,
		},

		// Documents.
		{
			ID: "certificate_of_incorporation", Label: "Certificate of incorporation", Type: TypeDocument, Category: documents, Required: true,
			Description: "The certificate issued by the company registry, as a PDF or a clear photo.",
		},
		{
			ID: "proof_of_address", Label: "Proof of business address", Type: TypeDocument, Category: documents, Required: true,
			Description: "A utility bill, bank statement or lease from the last 3 months showing the company's name and address.",
		},
		{
			ID: "bank_statement", Label: "Business bank statement", Type: TypeDocument, Category: documents,
			Description: "A recent statement of the company's bank account, showing the account name and number.",
		},
		{
			ID: "person_id_document", Label: "Identity document", Type: TypeDocument, Category: documents, Required: true,
			PersonScoped: true, RequiredFor: []PersonRole{PersonDirector, PersonUBO},
			Description: "A passport or national identity card, for each director and beneficial owner.",
		},

		// Confirmation.
		{
			ID: "confirm_accuracy", Label: "I confirm that the information I have given is accurate and complete", Type: TypeBoolean,
			Category: confirmation, Required: true, Confirmation: true,
		},
		{
			ID: "confirm_terms", Label: "I accept the terms and conditions", Type: TypeBoolean,
			Category: confirmation, Required: true, Confirmation: true,
		},
	}
}
