package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"onboard/onboarding"
)

// formFile is a form definition file (TOML): an id and its fields in form
// order. See testdata/forms/kyb-lite.toml for an example.
type formFile struct {
	ID     string      `toml:"id"`
	Fields []formField `toml:"fields"`
}

type formField struct {
	ID           string                  `toml:"id"`
	Label        string                  `toml:"label"`
	Description  string                  `toml:"description"`
	Type         string                  `toml:"type"`
	Category     string                  `toml:"category"`
	Required     bool                    `toml:"required"`
	Sensitive    bool                    `toml:"sensitive"`
	PersonScoped bool                    `toml:"person_scoped"`
	Confirmation bool                    `toml:"confirmation"`
	Terms        bool                    `toml:"terms"`
	Options      []onboarding.Option     `toml:"options"`
	Pattern      string                  `toml:"pattern"`
	PatternMsg   string                  `toml:"pattern_message"`
	MaxLength    int                     `toml:"max_length"`
	Rule         string                  `toml:"rule"`
	Validation   string                  `toml:"validation"`
	Accept       []string                `toml:"accept"`
	MaxSize      int64                   `toml:"max_size"`
	MaxPages     int                     `toml:"max_pages"`
	RequiredFor  []onboarding.PersonRole `toml:"required_for"`
}

// loadForm returns the built-in form `standard`, or the form in the file at
// ref (relative to the configuration file's directory).
func (c *Config) loadForm(ref string) (*onboarding.Form, error) {
	if ref == "standard" {
		return onboarding.StandardForm(), nil
	}
	path := ref
	if !filepath.IsAbs(path) && c.dir != "" {
		path = filepath.Join(c.dir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("form %q: %w", ref, err)
	}
	return DecodeForm(path, b)
}

// DecodeForm decodes the form file data read from path (named in errors):
// its id and fields, refusing keys it does not know, as a validated form.
func DecodeForm(path string, data []byte) (*onboarding.Form, error) {
	var f formFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("form %s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("form %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	fields := make([]onboarding.Field, len(f.Fields))
	for i, ff := range f.Fields {
		fields[i] = onboarding.Field{
			ID: ff.ID, Label: ff.Label, Description: ff.Description, Type: onboarding.FieldType(ff.Type),
			Category: ff.Category, Required: ff.Required, Sensitive: ff.Sensitive, PersonScoped: ff.PersonScoped,
			Confirmation: ff.Confirmation, Terms: ff.Terms, Options: ff.Options, Pattern: ff.Pattern, PatternMessage: ff.PatternMsg, MaxLength: ff.MaxLength,
			Rule: ff.Rule, Validation: ff.Validation, Accept: ff.Accept, MaxSize: ff.MaxSize, MaxPages: ff.MaxPages,
			RequiredFor: ff.RequiredFor,
		}
	}
	form, err := onboarding.NewForm(f.ID, fields)
	if err != nil {
		return nil, fmt.Errorf("form %s: %w", path, err)
	}
	return form, nil
}
