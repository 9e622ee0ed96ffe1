package onboarding

import (
	"slices"
	"strings"
)

// reportFunc receives each problem of a field's definition, formatted like
// fmt.Sprintf.
type reportFunc func(format string, args ...any)

// checkFieldDefinition reports each problem of one field's definition,
// other than its id, to add, in the order of the field's keys.
func checkFieldDefinition(f *Field, add reportFunc) {
	checkFieldBasics(f, add)
	checkFieldOptions(f, add)
	checkTextRules(f, add)
	checkDocumentSettings(f, add)
	checkRequiredFor(f, add)
	if f.Confirmation && f.Type != TypeBoolean {
		add("a confirmation field must be of type boolean, not %s", f.Type)
	}
	if f.Terms && !f.Confirmation {
		add("terms applies to confirmation fields only")
	}
}

// checkFieldBasics checks the label, the type and the category.
func checkFieldBasics(f *Field, add reportFunc) {
	if strings.TrimSpace(f.Label) == "" {
		add("label is empty")
	}
	if !slices.Contains(fieldTypes[:], f.Type) {
		if f.Type == "" {
			add("type is empty; use one of %s", joinValues(fieldTypes[:]))
		} else {
			add("type %q is unknown; use one of %s", f.Type, joinValues(fieldTypes[:]))
		}
	}
	if strings.TrimSpace(f.Category) == "" {
		add("category is empty; name the form stage, for example company or business")
	}
}

// checkFieldOptions checks the options of select fields, and that other
// fields have none.
func checkFieldOptions(f *Field, add reportFunc) {
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
}

// checkTextRules checks pattern, max_length and rule against the type.
func checkTextRules(f *Field, add reportFunc) {
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
			add("max_length is %d; use 0 for the default (%d characters, %d for a name) or a positive number of characters", f.MaxLength, DefaultTextMaxLength, DefaultNameMaxLength)
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
}

// checkDocumentSettings checks validation, accept, max_size and max_pages:
// only on document fields, and the limits only with strict validation.
func checkDocumentSettings(f *Field, add reportFunc) {
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
}

// checkRequiredFor checks the roles a person-scoped document is required
// for.
func checkRequiredFor(f *Field, add reportFunc) {
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
}
