package config

import (
	"net/url"
	"slices"
	"strings"
)

// MaskedText is what config check prints in place of a secret.
const MaskedText = "********"

// Masked returns a copy of the configuration with every secret (see
// SECRET in config.example.toml) replaced by MaskedText: the registries' API
// keys, the password inside mail.smtp_url, the password inside
// storage.postgres_url, blobs.s3_secret_access_key and blobs.signing_key.
// An empty secret stays empty, so that a missing one shows.
func (c Config) Masked() Config {
	hide := func(s *string) {
		if *s != "" {
			*s = MaskedText
		}
	}
	hide(&c.Registry.CompaniesHouseAPIKey)
	hide(&c.Registry.CROAPIKey)
	hide(&c.Blobs.SigningKey)
	hide(&c.Blobs.S3SecretAccessKey)
	if c.Storage.PostgresURL != "" {
		c.Storage.PostgresURL = maskedPostgresURL(c.Storage.PostgresURL)
	}
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

// postgresSecretParams are the query parameters of a PostgreSQL URL that
// hold a secret.
var postgresSecretParams = []string{"password", "sslpassword"}

// maskedPostgresURL is rawURL, a storage.postgres_url, with its password
// (in the user information, or a password or sslpassword parameter)
// replaced by MaskedText; the rest, sslmode included, shows. It is all
// MaskedText when it is not a URL.
func maskedPostgresURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return MaskedText
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, param := range params {
			raw, _, _ := strings.Cut(param, "=")
			if name, err := url.QueryUnescape(raw); err != nil || slices.Contains(postgresSecretParams, name) {
				params[i] = raw + "=" + MaskedText
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = MaskedText, ""
	}
	return strings.Replace(u.Redacted(), ":xxxxx@", ":"+MaskedText+"@", 1)
}
