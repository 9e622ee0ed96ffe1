package onboarding

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// FieldType is the type of a catalog field (docs/api.md).
type FieldType string

// The field types.
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

// Values of Field.Validation (docs/applicant-form.md).
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

// Field is one entry of a form's catalog: what the applicant is
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
	// Terms marks the declaration that accepts the organization's terms
	// and conditions: it is asked, and required, only of organizations
	// with a terms_url, and its label links to them.
	Terms bool
	// Options are the choices of a select or multi_select field.
	Options []Option
	// Pattern is an RE2 pattern a text value must match.
	Pattern string
	// PatternMessage says in words what a value that does not match Pattern
	// must be, after the field's label ("must start with https://"); empty
	// means "must match the pattern {Pattern}".
	PatternMessage string
	// MaxLength is the maximum length of a text value in characters
	// (runes); 0 means the default of TextLimit (500, or 200 for a field
	// whose id ends in "_name"). Over 200, the field is long text and may
	// contain line breaks (Multiline).
	MaxLength int
	// Rule is an extra check: "iban" (text) or "not_future" (date); empty
	// means none.
	Rule string

	// Document fields.

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
// (docs/api.md): false for document, person-scoped and confirmation
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
	// sensitive lists the ids of the Sensitive fields in form order, for
	// View to leave out without going through the catalog each time.
	sensitive []string
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
	for _, f := range form.fields {
		if f.Sensitive {
			form.sensitive = append(form.sensitive, f.ID)
		}
	}
	return form, nil
}
