package main

import (
	"context"
	"fmt"

	"onboard/admin"
	"onboard/onboarding"
)

// AppsCmd groups the commands on applications (docs/cli.md).
type AppsCmd struct {
	Export    AppsExportCmd    `cmd:"" help:"Write an organization's applications as NDJSON or CSV, and optionally their documents."`
	VerifyLog AppsVerifyLogCmd `cmd:"verify-log" help:"Check the hash chains of the activity logs: any edit or removal of stored history is reported."`
}

// AppsVerifyLogCmd verifies activity logs (docs/reliability.md).
type AppsVerifyLogCmd struct {
	Org string `help:"Verify the applications and RFI requests of this organization only; default: every configured organization." placeholder:"ORG"`
	App string `help:"Verify the log of this application (or RFI request) only." placeholder:"ID"`
}

// Run verifies the logs and prints one line per broken log, naming its
// first broken entry, then the counts; a broken log makes it fail.
func (c *AppsVerifyLogCmd) Run(e *env) error {
	q := admin.VerifyLog{OrgID: c.Org, AppID: c.App}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		r, err := a.VerifyLog(ctx, q, func(b admin.LogBreak) error {
			what := "application"
			if b.Subject == onboarding.SubjectRFIRequest {
				what = "RFI request"
			}
			if b.EntryID == "" {
				_, err := fmt.Fprintf(e.stdout, "BROKEN %s %s: %s\n", what, b.SubjectID, b.Problem)
				return err
			}
			_, err := fmt.Fprintf(e.stdout, "BROKEN %s %s, entry %s: %s\n", what, b.SubjectID, b.EntryID, b.Problem)
			return err
		})
		if err != nil {
			return err
		}
		counts := fmt.Sprintf("%s, %s, %s", plural(r.Applications, "application", "applications"),
			plural(r.RFIRequests, "RFI request", "RFI requests"), plural(r.Entries, "entry", "entries"))
		if r.Broken > 0 {
			return fmt.Errorf("%s broken (verified %s)", plural(r.Broken, "activity log", "activity logs"), counts)
		}
		fmt.Fprintf(e.stdout, "OK: %s verified\n", counts)
		return nil
	})
}

// plural is n with the noun for its number.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
