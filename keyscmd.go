package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/alecthomas/kong"

	"onboard/admin"
	"onboard/onboarding"
)

// KeysCmd groups the API key commands.
type KeysCmd struct {
	Create KeysCreateCmd `cmd:"" help:"Create an API key and print it once."`
	List   KeysListCmd   `cmd:"" help:"List API keys."`
	Revoke KeysRevokeCmd `cmd:"" help:"Revoke an API key; it stops working at once."`
}

// KeysCreateCmd creates an API key.
type KeysCreateCmd struct {
	Org       string         `help:"Organization the key belongs to." required:""`
	Name      string         `help:"A name that says who uses the key." required:""`
	Scope     scopeList      `help:"Scope to grant (repeatable, or comma-separated): ${scopes}. Default: all, including scopes added by later versions." placeholder:"SCOPE"`
	ExpiresIn *time.Duration `help:"Lifetime, such as 720h. Default: no expiry." name:"expires-in" placeholder:"DURATION"`
}

// scopeHelp is the scope vocabulary as --scope's help lists it (the
// ${scopes} of its help): onboarding's scopes grouped by the resource they
// grant, resources in the vocabulary's order.
func scopeHelp() string {
	var resources []string
	byResource := map[string][]string{}
	for _, s := range onboarding.AllScopes() {
		resource, _, _ := strings.Cut(string(s), ":")
		if _, ok := byResource[resource]; !ok {
			resources = append(resources, resource)
		}
		byResource[resource] = append(byResource[resource], string(s))
	}
	var all []string
	for _, r := range resources {
		all = append(all, byResource[r]...)
	}
	return strings.Join(all, ", ")
}

// scopeList is the value of --scope: scopes, none of them empty. An empty
// --scope is refused rather than read as "no scope given", which would
// grant every scope.
type scopeList []string

// Decode reads one --scope value, comma-separated scopes.
func (s *scopeList) Decode(ctx *kong.DecodeContext) error {
	var value string
	if err := ctx.Scan.PopValueInto("scope", &value); err != nil {
		return err
	}
	for part := range strings.SplitSeq(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return fmt.Errorf("a scope must not be empty (leave --scope out for a key with every scope)")
		}
		*s = append(*s, part)
	}
	return nil
}

// Run prints the key alone on stdout and its details on stderr.
func (c *KeysCreateCmd) Run(e *env) error {
	if c.ExpiresIn != nil && *c.ExpiresIn <= 0 {
		return usageError{fmt.Errorf("--expires-in must be a positive duration such as 720h (leave it out for a key that does not expire)")}
	}
	if strings.ContainsFunc(c.Name, unicode.IsControl) {
		return usageError{fmt.Errorf("--name must not contain control characters such as tabs or line breaks")}
	}
	req := admin.CreateKey{OrgID: c.Org, Name: c.Name, Scopes: c.Scope}
	if c.ExpiresIn != nil {
		req.ExpiresIn = c.ExpiresIn.String()
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		created, err := a.CreateKey(ctx, req)
		if err != nil {
			return err
		}
		k := created.APIKey
		if err := e.printSecret(created.Key); err != nil {
			if _, rerr := a.RevokeKey(ctx, k.ClientID); rerr != nil {
				return fmt.Errorf("the new key could not be written to stdout (%v), and revoking it failed (%v): revoke %s with onboard keys revoke", err, rerr, k.ClientID)
			}
			return fmt.Errorf("the new key could not be written to stdout (%v): it was revoked at once; create another", err)
		}
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
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
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
	KeyID string `arg:"" name:"KEY_ID" help:"The key's client id, as keys list shows it (a full key is accepted too; only its client id is used or shown)."`
}

// clientID is the client id KEY_ID names, and whether KEY_ID was a full
// key (svc_{client_id}.{secret}), whose secret must never be printed back.
func (c *KeysRevokeCmd) clientID() (id string, full bool) {
	id, _, full = strings.Cut(c.KeyID, ".")
	return strings.TrimPrefix(id, "svc_"), full
}

// Run revokes the key; a running server refuses it from the next request.
// Revoking a revoked key changes nothing and says so; it still succeeds,
// since the key is revoked as asked.
func (c *KeysRevokeCmd) Run(e *env) error {
	if err := checkIDArg("KEY_ID", c.KeyID); err != nil {
		return err
	}
	id, full := c.clientID()
	if full {
		fmt.Fprintf(e.stderr, "Note: KEY_ID is the key's client id (%s); a full key is a secret, keep it out of command lines and shell history.\n", id)
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		keys, err := a.ListKeys(ctx, "")
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.ClientID == id && k.RevokedAt != nil {
				fmt.Fprintf(e.stdout, "API key %s (organization %q, name %q) was already revoked at %s; nothing changed.\n",
					k.ClientID, k.OrgID, k.Name, k.RevokedAt.UTC().Format(time.RFC3339))
				return nil
			}
		}
		k, err := a.RevokeKey(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Revoked API key %s (organization %q, name %q).\n", k.ClientID, k.OrgID, k.Name)
		return nil
	})
}
