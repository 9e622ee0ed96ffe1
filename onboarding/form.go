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
