package main

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/uuid"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/registry"
)

// Config is onboard's configuration file (DESIGN §3). Every key is documented
// in config.example.toml, which a test loads.
type Config struct {
	Environment   string         `toml:"environment"`
	Listen        string         `toml:"listen"`
	PublicURL     string         `toml:"public_url"`
	DataDir       string         `toml:"data_dir"`
	Registry      RegistryConfig `toml:"registry"`
	Mail          MailConfig     `toml:"mail"`
	Limits        LimitsConfig   `toml:"limits"`
	Webhooks      WebhooksConfig `toml:"webhooks"`
	Blobs         BlobsConfig    `toml:"blobs"`
	Organizations []OrgConfig    `toml:"organizations"`

	dir string // directory of the file, for relative form paths
}

// RegistryConfig is the [registry] table.
type RegistryConfig struct {
	Mode                 string   `toml:"mode"`
	CompaniesHouseAPIKey string   `toml:"companies_house_api_key"`
	CROEmail             string   `toml:"cro_email"`
	CROAPIKey            string   `toml:"cro_api_key"`
	Timeout              Duration `toml:"timeout"`
	CompaniesHouseURL    string   `toml:"companies_house_url"`
	CROURL               string   `toml:"cro_url"`
}

// MailConfig is the [mail] table.
type MailConfig struct {
	SMTPURL string `toml:"smtp_url"`
	From    string `toml:"from"`
}

// LimitsConfig is the [limits] table.
type LimitsConfig struct {
	RatePerSecond  float64 `toml:"rate_per_second"`
	Burst          int     `toml:"burst"`
	MaxJSONBytes   int64   `toml:"max_json_bytes"`
	MaxUploadBytes int64   `toml:"max_upload_bytes"`
}

// BlobsConfig is the [blobs] table: stored files and their download links.
type BlobsConfig struct {
	// SigningKey signs download links (base64, at least 32 bytes); empty
	// means a key generated into the data directory's secrets/.
	SigningKey string `toml:"signing_key"`
}

// WebhooksConfig is the [webhooks] table.
type WebhooksConfig struct {
	RetrySchedule []Duration `toml:"retry_schedule"`
	Timeout       Duration   `toml:"timeout"`
}

// OrgConfig is one [[organizations]] entry.
type OrgConfig struct {
	ID                 string           `toml:"id"`
	Name               string           `toml:"name"`
	DefaultConfig      string           `toml:"default_config"`
	CustomDomain       string           `toml:"custom_domain"`
	CustomDomainActive bool             `toml:"custom_domain_active"`
	Configs            []AppConfig      `toml:"configs"`
	RFIAgents          []RFIAgentConfig `toml:"rfi_agents"`
}

// AppConfig is one [[organizations.configs]] entry: an application configuration.
type AppConfig struct {
	ID                string   `toml:"id"`
	Form              string   `toml:"form"`
	Countries         []string `toml:"countries"`
	CompanySelection  bool     `toml:"company_selection"`
	RegistryDocuments bool     `toml:"registry_documents"`
}

// RFIAgentConfig is one [[organizations.rfi_agents]] entry.
type RFIAgentConfig struct {
	ID         string   `toml:"id"`
	Name       string   `toml:"name"`
	Default    bool     `toml:"default"`
	Active     bool     `toml:"active"`
	Documents  []string `toml:"documents"`
	ExpiryDays int      `toml:"expiry_days"`
}

// Duration is a time.Duration written in TOML as a string such as "10s".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use a form such as 10s, 5m or 2h)", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultConfig is the embedded sandbox configuration used when no file is given.
func DefaultConfig() Config {
	return Config{
		Environment: "sandbox",
		Listen:      "127.0.0.1:8080",
		PublicURL:   "http://127.0.0.1:8080",
		DataDir:     "./data",
		Registry: RegistryConfig{Mode: "fixtures", Timeout: Duration{8 * time.Second},
			CompaniesHouseURL: registry.DefaultCompaniesHouseBaseURL, CROURL: registry.DefaultCROBaseURL},
		Mail:   MailConfig{From: "Onboarding <onboarding@sandbox.invalid>"},
		Limits: LimitsConfig{RatePerSecond: 20, Burst: 40, MaxJSONBytes: 1 << 20, MaxUploadBytes: 25 << 20},
		Webhooks: WebhooksConfig{
			RetrySchedule: []Duration{{0}, {5 * time.Second}, {5 * time.Minute}, {30 * time.Minute}, {2 * time.Hour}, {5 * time.Hour}, {10 * time.Hour}, {10 * time.Hour}},
			Timeout:       Duration{15 * time.Second},
		},
		Organizations: []OrgConfig{{
			ID:            "default",
			Name:          "Sandbox",
			DefaultConfig: "default",
			Configs: []AppConfig{{
				ID: "default", Form: "standard", Countries: []string{"GB", "IE"}, RegistryDocuments: true,
			}},
		}},
	}
}

// LoadConfig returns the defaults overlaid with the file at path (none when
// path is empty). Unknown keys are errors, so a typo cannot silently fall
// back to a default. A file that declares organizations replaces the
// sandbox organization; one that declares none keeps it.
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	if path == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read configuration: %w", err)
	}
	var file Config
	md, err := toml.Decode(string(b), &file)
	if err != nil {
		return Config{}, fmt.Errorf("configuration %s: %w", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("configuration %s: unknown keys: %s", path, strings.Join(keys, ", "))
	}
	// Overlay what the file set on the defaults, key by key.
	if md.IsDefined("environment") {
		cfg.Environment = file.Environment
	}
	if md.IsDefined("listen") {
		cfg.Listen = file.Listen
	}
	if md.IsDefined("public_url") {
		cfg.PublicURL = file.PublicURL
	}
	if md.IsDefined("data_dir") {
		cfg.DataDir = file.DataDir
	}
	overlay(md, "registry", "mode", &cfg.Registry.Mode, file.Registry.Mode)
	overlay(md, "registry", "companies_house_api_key", &cfg.Registry.CompaniesHouseAPIKey, file.Registry.CompaniesHouseAPIKey)
	overlay(md, "registry", "cro_email", &cfg.Registry.CROEmail, file.Registry.CROEmail)
	overlay(md, "registry", "cro_api_key", &cfg.Registry.CROAPIKey, file.Registry.CROAPIKey)
	overlay(md, "registry", "timeout", &cfg.Registry.Timeout, file.Registry.Timeout)
	overlay(md, "registry", "companies_house_url", &cfg.Registry.CompaniesHouseURL, file.Registry.CompaniesHouseURL)
	overlay(md, "registry", "cro_url", &cfg.Registry.CROURL, file.Registry.CROURL)
	overlay(md, "mail", "smtp_url", &cfg.Mail.SMTPURL, file.Mail.SMTPURL)
	overlay(md, "mail", "from", &cfg.Mail.From, file.Mail.From)
	overlay(md, "limits", "rate_per_second", &cfg.Limits.RatePerSecond, file.Limits.RatePerSecond)
	overlay(md, "limits", "burst", &cfg.Limits.Burst, file.Limits.Burst)
	overlay(md, "limits", "max_json_bytes", &cfg.Limits.MaxJSONBytes, file.Limits.MaxJSONBytes)
	overlay(md, "limits", "max_upload_bytes", &cfg.Limits.MaxUploadBytes, file.Limits.MaxUploadBytes)
	overlay(md, "webhooks", "retry_schedule", &cfg.Webhooks.RetrySchedule, file.Webhooks.RetrySchedule)
	overlay(md, "webhooks", "timeout", &cfg.Webhooks.Timeout, file.Webhooks.Timeout)
	overlay(md, "blobs", "signing_key", &cfg.Blobs.SigningKey, file.Blobs.SigningKey)
	if md.IsDefined("organizations") {
		cfg.Organizations = file.Organizations
		for i := range cfg.Organizations {
			for j := range cfg.Organizations[i].RFIAgents {
				if a := &cfg.Organizations[i].RFIAgents[j]; a.ExpiryDays == 0 {
					a.ExpiryDays = 14 // the spec's default RFI expiry
				}
			}
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Config{}, err
	}
	cfg.dir = filepath.Dir(abs)
	return cfg, nil
}

func overlay[T any](md toml.MetaData, table, key string, dst *T, v T) {
	if md.IsDefined(table, key) {
		*dst = v
	}
}

var (
	idPattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	countryPattern = regexp.MustCompile(`^[A-Z]{2}$`)
	hostPattern    = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)
)

// Validate checks the whole configuration and reports every problem at once,
// each naming the key to fix.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.Environment != "sandbox" && c.Environment != "production" {
		bad("environment must be \"sandbox\" or \"production\", not %q", c.Environment)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen %q is not host:port", c.Listen)
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		bad("public_url %q must be an absolute http or https URL without query or fragment", c.PublicURL)
	}
	if c.DataDir == "" {
		bad("data_dir must not be empty")
	}
	switch c.Registry.Mode {
	case "fixtures":
	case "live":
		if c.Registry.CompaniesHouseAPIKey == "" || c.Registry.CROEmail == "" || c.Registry.CROAPIKey == "" {
			bad("registry.mode \"live\" needs registry.companies_house_api_key, registry.cro_email and registry.cro_api_key")
		}
	default:
		bad("registry.mode must be \"fixtures\" or \"live\", not %q", c.Registry.Mode)
	}
	for _, u := range []struct{ key, value string }{
		{"registry.companies_house_url", c.Registry.CompaniesHouseURL},
		{"registry.cro_url", c.Registry.CROURL},
	} {
		if u.value == "" {
			continue // the registry's own address
		}
		p, err := url.Parse(u.value)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" ||
			p.User != nil || p.RawQuery != "" || p.Fragment != "" {
			bad("%s must be an absolute http or https URL without credentials, query or fragment", u.key)
		} else if c.Environment == "production" && p.Scheme != "https" {
			bad("%s must be an https URL in production: registry credentials travel with every request", u.key)
		}
	}
	if c.Registry.Timeout.Duration < time.Millisecond || c.Registry.Timeout.Duration > time.Minute {
		bad("registry.timeout must be between 1ms and 1m, not %s", c.Registry.Timeout)
	}
	if c.Mail.SMTPURL != "" {
		if u, err := url.Parse(c.Mail.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			bad("mail.smtp_url must look like smtp://user:pass@host:587 or smtps://user:pass@host:465")
		}
		if c.Mail.From == "" {
			bad("mail.from is required when mail.smtp_url is set")
		}
	} else if c.Mail.From == "" && c.Environment == "sandbox" {
		bad("mail.from is required in sandbox: the outbox writes messages from it")
	}
	if c.Mail.From != "" {
		if _, err := mail.ParseAddress(c.Mail.From); err != nil || strings.ContainsAny(c.Mail.From, "\r\n") {
			bad("mail.from %q is not an e-mail address such as \"Onboarding <onboarding@example.com>\"", c.Mail.From)
		}
	}
	if c.Limits.RatePerSecond < 0 {
		bad("limits.rate_per_second must be 0 (no limit) or more")
	}
	if c.Limits.RatePerSecond > 0 && c.Limits.Burst < 1 {
		bad("limits.burst must be at least 1")
	}
	if c.Limits.MaxJSONBytes < 1024 {
		bad("limits.max_json_bytes must be at least 1024")
	}
	if c.Limits.MaxUploadBytes < 1024 {
		bad("limits.max_upload_bytes must be at least 1024")
	}
	for i, d := range c.Webhooks.RetrySchedule {
		if d.Duration < 0 {
			bad("webhooks.retry_schedule[%d] must not be negative", i)
		}
	}
	if c.Webhooks.Timeout.Duration <= 0 {
		bad("webhooks.timeout must be positive")
	}
	if c.Blobs.SigningKey != "" {
		if _, err := blobs.DecodeKey(c.Blobs.SigningKey); err != nil {
			bad("blobs.signing_key: %v", err)
		}
	}
	if len(c.Organizations) == 0 {
		bad("at least one [[organizations]] entry is required")
	}
	orgs, configs, agents := map[string]bool{}, map[string]string{}, map[string]bool{}
	for _, o := range c.Organizations {
		where := fmt.Sprintf("organization %q", o.ID)
		if !idPattern.MatchString(o.ID) {
			bad("%s: id must be 1-63 lower-case letters, digits, '-' or '_'", where)
		}
		if orgs[o.ID] {
			bad("%s: duplicate organization id", where)
		}
		orgs[o.ID] = true
		if o.CustomDomain != "" && !hostPattern.MatchString(o.CustomDomain) {
			bad("%s: custom_domain %q is not a host name", where, o.CustomDomain)
		}
		if o.CustomDomainActive && o.CustomDomain == "" {
			bad("%s: custom_domain_active needs custom_domain", where)
		}
		own := map[string]bool{}
		for _, ac := range o.Configs {
			cw := fmt.Sprintf("%s: configuration %q", where, ac.ID)
			if !idPattern.MatchString(ac.ID) {
				bad("%s: id must be 1-63 lower-case letters, digits, '-' or '_'", cw)
			}
			if prev, dup := configs[ac.ID]; dup {
				bad("%s: duplicate configuration id (also in organization %q); configuration ids are global", cw, prev)
			}
			configs[ac.ID] = o.ID
			own[ac.ID] = true
			if ac.Form == "" {
				bad("%s: form is required (\"standard\" or a path to a form file)", cw)
			}
			if len(ac.Countries) == 0 {
				bad("%s: countries must list at least one ISO 3166-1 alpha-2 code", cw)
			}
			seen := map[string]bool{}
			for _, k := range ac.Countries {
				if !countryPattern.MatchString(k) {
					bad("%s: country %q must be an upper-case ISO 3166-1 alpha-2 code", cw, k)
				}
				if seen[k] {
					bad("%s: country %q is listed twice", cw, k)
				}
				seen[k] = true
			}
		}
		if o.DefaultConfig != "" && !own[o.DefaultConfig] {
			bad("%s: default_config %q is not one of its configurations", where, o.DefaultConfig)
		}
		defaults := 0
		for _, a := range o.RFIAgents {
			aw := fmt.Sprintf("%s: rfi agent %q", where, a.ID)
			if _, err := uuid.Parse(a.ID); err != nil {
				bad("%s: id must be a UUID", aw)
			}
			if agents[a.ID] {
				bad("%s: duplicate rfi agent id", aw)
			}
			agents[a.ID] = true
			if a.Default {
				defaults++
			}
			if a.ExpiryDays < 1 {
				bad("%s: expiry_days must be at least 1", aw)
			}
		}
		if defaults > 1 {
			bad("%s: at most one rfi agent may be the default", where)
		}
	}
	return errors.Join(errs...)
}

// domainOrganizations builds the domain's organizations, loading each form once.
func (c *Config) domainOrganizations() ([]*onboarding.Organization, error) {
	forms := map[string]*onboarding.Form{}
	var out []*onboarding.Organization
	for _, o := range c.Organizations {
		org := &onboarding.Organization{
			ID: o.ID, Name: o.Name, DefaultConfig: o.DefaultConfig,
			CustomDomain: strings.ToLower(o.CustomDomain), CustomDomainActive: o.CustomDomainActive,
		}
		if org.Name == "" {
			org.Name = o.ID
		}
		for _, ac := range o.Configs {
			form, ok := forms[ac.Form]
			if !ok {
				var err error
				if form, err = c.loadForm(ac.Form); err != nil {
					return nil, fmt.Errorf("organization %q: configuration %q: %w", o.ID, ac.ID, err)
				}
				forms[ac.Form] = form
			}
			org.Configs = append(org.Configs, &onboarding.Configuration{
				ID: ac.ID, Form: form, Countries: ac.Countries,
				CompanySelection: ac.CompanySelection, RegistryDocuments: ac.RegistryDocuments,
			})
		}
		out = append(out, org)
	}
	return out, nil
}
