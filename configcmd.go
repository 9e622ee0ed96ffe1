package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/BurntSushi/toml"
)

// ConfigCmd groups the configuration commands.
type ConfigCmd struct {
	Check ConfigCheckCmd `cmd:"" help:"Validate the configuration (--config FILE, or the built-in sandbox defaults) and print the effective settings, secrets masked."`
}

// ConfigCheckCmd validates a configuration file.
type ConfigCheckCmd struct{}

// masked is what config check prints in place of a secret.
const masked = "********"

// Run prints the effective configuration as TOML on stdout and a verdict on
// stderr; an invalid one fails listing every problem.
func (c *ConfigCheckCmd) Run(e *env) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	source := "The built-in sandbox configuration"
	if e.cli.Config != "" {
		source = "Configuration " + e.cli.Config
	}
	fmt.Fprintf(e.stdout, "# Effective configuration: the defaults, then the file, then --data-dir.\n# Secrets are shown as %q.\n", masked)
	if err := toml.NewEncoder(e.stdout).Encode(cfg.masked()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s is valid.\n", source)
	return nil
}

// masked returns a copy of the configuration with every secret (see
// SECRET in config.example.toml) replaced by masked: the registries' API
// keys, the password inside mail.smtp_url and blobs.signing_key. An empty
// secret stays empty, so that a missing one shows.
func (c Config) masked() Config {
	hide := func(s *string) {
		if *s != "" {
			*s = masked
		}
	}
	hide(&c.Registry.CompaniesHouseAPIKey)
	hide(&c.Registry.CROAPIKey)
	hide(&c.Blobs.SigningKey)
	if c.Mail.SMTPURL != "" {
		c.Mail.SMTPURL = maskedURL(c.Mail.SMTPURL)
	}
	return c
}

// maskedURL is rawURL with its password, query and fragment (where a
// secret could also be put) replaced by masked; all of it when it is not
// a URL.
func maskedURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return masked
	}
	if u.RawQuery != "" {
		u.RawQuery = masked
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = masked, ""
	}
	// Redacted writes the password as "xxxxx"; the user name cannot hold
	// an unescaped ':', so the first ":xxxxx@" is the password.
	return strings.Replace(u.Redacted(), ":xxxxx@", ":"+masked+"@", 1)
}
