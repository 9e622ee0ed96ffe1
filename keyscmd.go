package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"onboard/server"
)

// KeysCmd groups the API key commands.
type KeysCmd struct {
	Create KeysCreateCmd `cmd:"" help:"Create an API key and print it once."`
	List   KeysListCmd   `cmd:"" help:"List API keys."`
	Revoke KeysRevokeCmd `cmd:"" help:"Revoke an API key; it stops working at once."`
}

// KeysCreateCmd creates an API key.
type KeysCreateCmd struct {
	Org       string        `help:"Organization the key belongs to." required:""`
	Name      string        `help:"A name that says who uses the key." required:""`
	Scope     []string      `help:"Scope to grant (repeatable): applications:create, applications:read, applications:write, rfi:create, rfi:read, events:read. Default: all, including scopes added by later versions."`
	ExpiresIn time.Duration `help:"Lifetime, such as 720h. Default: no expiry." name:"expires-in"`
}

// Run prints the key alone on stdout and its details on stderr.
func (c *KeysCreateCmd) Run(e *env) error {
	if c.ExpiresIn < 0 {
		return fmt.Errorf("--expires-in must be positive")
	}
	req := server.AdminCreateKey{OrgID: c.Org, Name: c.Name, Scopes: c.Scope}
	if c.ExpiresIn > 0 {
		req.ExpiresIn = c.ExpiresIn.String()
	}
	return e.withAdmin(func(ctx context.Context, a admin) error {
		created, err := a.CreateKey(ctx, req)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, created.Key)
		k := created.APIKey
		expiry := "never"
		if k.ExpiresAt != nil {
			expiry = k.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(e.stderr, "Created API key %s for organization %q (name %q, scopes %s, expires %s).\nThe key above is shown only once: store it now.\n",
			k.ClientID, k.OrgID, k.Name, strings.Join(k.Scopes, " "), expiry)
		return nil
	})
}

// KeysListCmd lists API keys.
type KeysListCmd struct {
	Org  string `help:"Only this organization's keys."`
	JSON bool   `help:"Print JSON instead of a table." name:"json"`
}

// Run prints one line per key.
func (c *KeysListCmd) Run(e *env) error {
	return e.withAdmin(func(ctx context.Context, a admin) error {
		keys, err := a.ListKeys(ctx, c.Org)
		if err != nil {
			return err
		}
		if c.JSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(keys)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tORG\tNAME\tSCOPES\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ClientID, k.OrgID, k.Name, strings.Join(k.Scopes, ","),
				when(&k.CreatedAt), when(k.LastUsedAt), when(k.ExpiresAt), when(k.RevokedAt))
		}
		return tw.Flush()
	})
}

// when formats an optional time for keys list: RFC 3339 in UTC, or "-".
func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// KeysRevokeCmd revokes an API key.
type KeysRevokeCmd struct {
	KeyID string `arg:"" name:"KEY_ID" help:"The key's client id, as keys list shows it."`
}

// Run revokes the key; a running server refuses it from the next request.
func (c *KeysRevokeCmd) Run(e *env) error {
	return e.withAdmin(func(ctx context.Context, a admin) error {
		k, err := a.RevokeKey(ctx, c.KeyID)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Revoked API key %s (organization %q, name %q).\n", k.ClientID, k.OrgID, k.Name)
		return nil
	})
}
