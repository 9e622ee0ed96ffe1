package main

import (
	"context"
	"fmt"

	"onboard/admin"
)

// DocsCmd groups the operator's document overrides (docs/cli.md).
type DocsCmd struct {
	Force DocsForceCmd `cmd:"" help:"Accept a document upload that failed validation: it becomes 'forced'."`
	Skip  DocsSkipCmd  `cmd:"" help:"Waive a document requirement: it becomes 'skipped', with no file."`
}

// docOverrideFlags are the flags of docs force and docs skip.
type docOverrideFlags struct {
	App    string `help:"Application id (UUID)." required:"" placeholder:"ID"`
	Field  string `help:"Document field id, such as certificate_of_incorporation." required:"" placeholder:"FIELD"`
	Person string `help:"Person id, for a document collected per person (such as person_id_document)." placeholder:"PERSON_ID"`
	Reason string `help:"Why; shown to the partner as user_override_reason (at most 500 characters)." required:"" placeholder:"TEXT"`
}

// DocsForceCmd accepts the uploaded file of a document requirement.
type DocsForceCmd struct {
	docOverrideFlags
}

// Run forces the document.
func (c *DocsForceCmd) Run(e *env) error {
	return c.run(e, admin.ActionForce, "forced")
}

// DocsSkipCmd waives a document requirement.
type DocsSkipCmd struct {
	docOverrideFlags
}

// Run skips the document.
func (c *DocsSkipCmd) Run(e *env) error {
	return c.run(e, admin.ActionSkip, "skipped")
}

// run sends the override and prints one line saying what was done.
func (f *docOverrideFlags) run(e *env, action, done string) error {
	req := admin.DocumentOverride{AppID: f.App, FieldID: f.Field, PersonID: f.Person, Reason: f.Reason, Action: action}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		if _, err := a.OverrideDocument(ctx, req); err != nil {
			return err
		}
		if f.Person != "" {
			fmt.Fprintf(e.stdout, "%s %s for person %s on application %s\n", done, f.Field, f.Person, f.App)
		} else {
			fmt.Fprintf(e.stdout, "%s %s on application %s\n", done, f.Field, f.App)
		}
		return nil
	})
}
