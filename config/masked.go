package config

import (
	"net/url"
	"strings"
)

// MaskedText is what config check prints in place of a secret.
const MaskedText = "********"

// Masked returns a copy of the configuration with every secret (see
// SECRET in config.example.toml) replaced by MaskedText: the registries' API
// keys, the password inside mail.smtp_url and blobs.signing_key. An empty
// secret stays empty, so that a missing one shows.
func (c Config) Masked() Config {
	hide := func(s *string) {
		if *s != "" {
			*s = MaskedText
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
// secret could also be put) replaced by MaskedText; all of it when it is
// not a URL.
func maskedURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return MaskedText
	}
	if u.RawQuery != "" {
		u.RawQuery = MaskedText
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = MaskedText, ""
	}
	// Redacted writes the password as "xxxxx"; the user name cannot hold
	// an unescaped ':', so the first ":xxxxx@" is the password.
	return strings.Replace(u.Redacted(), ":xxxxx@", ":"+MaskedText+"@", 1)
}
