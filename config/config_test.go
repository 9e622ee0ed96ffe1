package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// writeFile writes content to name in a new temporary directory and returns
// its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadConfigText writes content as a configuration file and loads it.
func loadConfigText(t *testing.T, content string) (Config, string, error) {
	t.Helper()
	path := writeFile(t, "onboard.toml", content)
	cfg, err := Load(path)
	return cfg, path, err
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var ignoreConfigDir = cmpopts.IgnoreUnexported(Config{})

func TestLoadConfigWithoutFileIsTheDefault(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatalf("Load(\"\"): %v", err)
	}
	if diff := cmp.Diff(Default(), cfg, cmp.AllowUnexported(Config{})); diff != "" {
		t.Errorf("Load(\"\") differs from Default() (-want +got):\n%s", diff)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the default configuration does not validate:\n%v", err)
	}
	orgs, err := cfg.DomainOrganizations()
	if err != nil {
		t.Fatalf("DomainOrganizations: %v", err)
	}
	type shape struct{ Org, DefaultConfig, Config, Form string }
	var got []shape
	for _, o := range orgs {
		for _, c := range o.Configs {
			got = append(got, shape{o.ID, o.DefaultConfig, c.ID, c.Form.ID()})
		}
	}
	want := []shape{{"default", "default", "default", "standard"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default organizations (-want +got):\n%s", diff)
	}
}

// TestExampleConfig loads config.example.toml, so that the documented file
// cannot drift from the code.
func TestExampleConfig(t *testing.T) {
	cfg, err := Load("../config.example.toml")
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config.example.toml does not validate:\n%v", err)
	}

	// Outside [[organizations]], the example writes out the defaults.
	got, want := cfg, Default()
	got.Organizations, want.Organizations = nil, nil
	if diff := cmp.Diff(want, got, ignoreConfigDir); diff != "" {
		t.Errorf("config.example.toml does not show the defaults (-default +example):\n%s", diff)
	}

	orgs, err := cfg.DomainOrganizations()
	if err != nil {
		t.Fatalf("DomainOrganizations: %v", err)
	}
	type config struct {
		ID, Form          string
		Countries         []string
		RegistryDocuments bool
	}
	type org struct {
		ID, Name, DefaultConfig, CustomDomain, TermsURL string
		CustomDomainActive                              bool
		Configs                                         []config
	}
	var gotOrgs []org
	for _, o := range orgs {
		g := org{ID: o.ID, Name: o.Name, DefaultConfig: o.DefaultConfig, CustomDomain: o.CustomDomain, CustomDomainActive: o.CustomDomainActive, TermsURL: o.TermsURL}
		for _, c := range o.Configs {
			g.Configs = append(g.Configs, config{ID: c.ID, Form: c.Form.ID(), Countries: c.Countries, RegistryDocuments: c.RegistryDocuments})
		}
		gotOrgs = append(gotOrgs, g)
	}
	wantOrgs := []org{{
		ID: "acme", Name: "Acme Payments", DefaultConfig: "acme-standard",
		CustomDomain: "onboarding.acme.example", CustomDomainActive: true, TermsURL: "https://acme.example/onboarding-terms",
		Configs: []config{
			{ID: "acme-standard", Form: "standard", Countries: []string{"GB", "IE"}, RegistryDocuments: true},
			{ID: "acme-lite", Form: "kyb-lite", Countries: []string{"GB"}},
		},
	}}
	if diff := cmp.Diff(wantOrgs, gotOrgs); diff != "" {
		t.Errorf("organizations of config.example.toml (-want +got):\n%s", diff)
	}
	wantAgents := []RFIAgent{{
		ID: "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13", Name: "Document collection", Default: true, Active: true,
		Documents: []string{"bank_statement", "proof_of_address"}, ExpiryDays: 14,
	}}
	if diff := cmp.Diff(wantAgents, cfg.Organizations[0].RFIAgents); diff != "" {
		t.Errorf("rfi agents of config.example.toml (-want +got):\n%s", diff)
	}
}

// configKeys lists the TOML keys of t's fields in declaration order, dotted,
// descending into tables and arrays of tables.
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		key := prefix + name
		keys = append(keys, key)
		ft := f.Type
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[Duration]() {
			keys = append(keys, configKeys(ft, key+".")...)
		}
	}
	return keys
}

// TestExampleConfigDocumentsEveryKey checks that config.example.toml sets
// every key of Config, in the order of the Config type.
func TestExampleConfigDocumentsEveryKey(t *testing.T) {
	var cfg Config
	md, err := toml.DecodeFile("../config.example.toml", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if s := k.String(); !seen[s] {
			seen[s] = true
			got = append(got, s)
		}
	}
	want := configKeys(reflect.TypeFor[Config](), "")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys of config.example.toml (-Config +example):\n%s", diff)
	}
}

func TestLoadConfigRejectsUnknownKeys(t *testing.T) {
	tests := []struct {
		name, content, key string
	}{
		{"top level", "environment = \"sandbox\"\nenviroment = \"production\"\n", "enviroment"},
		{"registry", "[registry]\nmode = \"fixtures\"\ntimout = \"5s\"\n", "registry.timout"},
		{"mail", "[mail]\nsmtp = \"smtp://localhost\"\n", "mail.smtp"},
		{"configuration", `
[[organizations]]
id = "acme"
  [[organizations.configs]]
  id = "acme"
  form = "standard"
  countries = ["GB"]
  colour = "blue"
`, "organizations.configs.colour"},
		{"rfi agent", `
[[organizations]]
id = "acme"
  [[organizations.rfi_agents]]
  id = "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13"
  expiry = 3
`, "organizations.rfi_agents.expiry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := loadConfigText(t, tt.content)
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			// The unknown key comes first, among every other problem.
			first, _, _ := strings.Cut(errText(cfg.Validate()), "\n")
			want := "unknown key " + tt.key + " (config.example.toml lists every key)"
			if diff := cmp.Diff(want, first); diff != "" {
				t.Errorf("first problem (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateListsEveryProblemOfAFile: unknown keys, values that are not
// durations and invalid values are reported together, in one error.
func TestValidateListsEveryProblemOfAFile(t *testing.T) {
	cfg, _, err := loadConfigText(t, `
enviroment = "production"
listen = "8080"
[registry]
timeout = "soon"
colour = "blue"
[limits]
burst = 0
session_timeout = "forever"
[webhooks]
retry_schedule = ["0s", "later"]
`)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	want := []string{
		"unknown key enviroment (config.example.toml lists every key)",
		"unknown key registry.colour (config.example.toml lists every key)",
		`listen "8080" is not host:port`,
		"registry.timeout is not a duration: use a form such as 10s, 5m or 2h",
		"limits.burst must be at least 1",
		"limits.session_timeout is not a duration: use a form such as 10s, 5m or 2h",
		"webhooks.retry_schedule[1] is not a duration: use a form such as 10s, 5m or 2h",
	}
	if diff := cmp.Diff(want, strings.Split(errText(cfg.Validate()), "\n")); diff != "" {
		t.Errorf("Validate problems (-want +got):\n%s", diff)
	}
}

func TestLoadConfigFileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.toml")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing file) = %v; want an error naming %s", err, missing)
	}
	tests := []struct {
		name, content, want string
	}{
		{"not TOML", "environment = \n", "configuration %s: toml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path, err := loadConfigText(t, tt.content)
			want := strings.ReplaceAll(tt.want, "%s", path)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("LoadConfig error = %v; want one containing %q", err, want)
			}
		})
	}
}

func TestLoadConfigOverlay(t *testing.T) {
	tests := []struct {
		name    string
		content string
		change  func(*Config)
	}{
		{"empty file", "", func(*Config) {}},
		{"listen", `listen = "0.0.0.0:9000"`, func(c *Config) { c.Listen = "0.0.0.0:9000" }},
		{"environment", `environment = "production"`, func(c *Config) { c.Environment = "production" }},
		{"data_dir", `data_dir = "/var/lib/onboard"`, func(c *Config) { c.DataDir = "/var/lib/onboard" }},
		{"registry.timeout", "[registry]\ntimeout = \"3s\"", func(c *Config) { c.Registry.Timeout = Duration{3 * time.Second} }},
		{"registry credentials", "[registry]\nmode = \"live\"\ncompanies_house_api_key = \"k\"\ncro_email = \"ops@example.com\"\ncro_api_key = \"c\"", func(c *Config) {
			c.Registry.Mode, c.Registry.CompaniesHouseAPIKey, c.Registry.CROEmail, c.Registry.CROAPIKey = "live", "k", "ops@example.com", "c"
		}},
		{"mail.smtp_url", "[mail]\nsmtp_url = \"smtp://u:p@mail.example:587\"", func(c *Config) { c.Mail.SMTPURL = "smtp://u:p@mail.example:587" }},
		{"limits.burst", "[limits]\nburst = 5", func(c *Config) { c.Limits.Burst = 5 }},
		{"limits.rate_per_second", "[limits]\nrate_per_second = 2.5", func(c *Config) { c.Limits.RatePerSecond = 2.5 }},
		{"limits.rate_per_second integer", "[limits]\nrate_per_second = 0", func(c *Config) { c.Limits.RatePerSecond = 0 }},
		{"webhooks.retry_schedule", "[webhooks]\nretry_schedule = [\"0s\", \"1m\"]", func(c *Config) {
			c.Webhooks.RetrySchedule = []Duration{{0}, {time.Minute}}
		}},
		{"webhooks.timeout", "[webhooks]\ntimeout = \"2s\"", func(c *Config) { c.Webhooks.Timeout = Duration{2 * time.Second} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := loadConfigText(t, tt.content)
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			want := Default()
			tt.change(&want)
			if diff := cmp.Diff(want, got, ignoreConfigDir); diff != "" {
				t.Errorf("configuration (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfigOrganizations(t *testing.T) {
	t.Run("a file without organizations keeps the sandbox organization", func(t *testing.T) {
		cfg, _, err := loadConfigText(t, "listen = \"127.0.0.1:9000\"\n")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Default().Organizations, cfg.Organizations); diff != "" {
			t.Errorf("organizations (-want +got):\n%s", diff)
		}
	})
	t.Run("a file with organizations replaces it", func(t *testing.T) {
		cfg, _, err := loadConfigText(t, `
[[organizations]]
id = "acme"
name = "Acme"

  [[organizations.configs]]
  id = "acme-gb"
  form = "standard"
  countries = ["GB"]

  [[organizations.rfi_agents]]
  id = "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13"
  name = "Docs"
  documents = ["proof_of_address"]

[[organizations]]
id = "globex"
`)
		if err != nil {
			t.Fatal(err)
		}
		want := []Organization{
			{
				ID: "acme", Name: "Acme",
				Configs: []AppConfig{{ID: "acme-gb", Form: "standard", Countries: []string{"GB"}}},
				// expiry_days defaults to 14 days.
				RFIAgents: []RFIAgent{{ID: "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13", Name: "Docs", Documents: []string{"proof_of_address"}, ExpiryDays: 14}},
			},
			{ID: "globex"},
		}
		if diff := cmp.Diff(want, cfg.Organizations); diff != "" {
			t.Errorf("organizations (-want +got):\n%s", diff)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate: %v", err)
		}
	})
}

const agentID = "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13"

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   []string // the problems, in order; none: valid
	}{
		{"default", func(*Config) {}, nil},
		{"production with live registry and credentials", func(c *Config) {
			c.Environment, c.PublicURL = "production", "https://onboarding.example.com"
			c.Registry = Registry{Mode: "live", CompaniesHouseAPIKey: "k", CROEmail: "ops@example.com", CROAPIKey: "c", Timeout: Duration{time.Second}}
			c.Mail = Mail{SMTPURL: "smtp://u:p@mail.example:587", From: "ops@example.com"}
		}, nil},
		{"registry URLs over http in production", func(c *Config) {
			c.Environment, c.PublicURL = "production", "https://onboarding.example.com"
			c.Registry = Registry{Mode: "live", CompaniesHouseAPIKey: "k", CROEmail: "ops@example.com", CROAPIKey: "c", Timeout: Duration{time.Second}}
			c.Registry.CompaniesHouseURL = "http://ch-proxy.internal"
			c.Registry.CROURL = "ftp://cro.example"
		}, []string{
			"registry.companies_house_url must be an https URL in production: registry credentials travel with every request",
			"registry.cro_url must be an absolute http or https URL without credentials, query or fragment",
		}},
		{"registry URL with credentials", func(c *Config) { c.Registry.CompaniesHouseURL = "https://key:@api.example" },
			[]string{"registry.companies_house_url must be an absolute http or https URL without credentials, query or fragment"}},
		{"bad blobs.signing_key", func(c *Config) { c.Blobs.SigningKey = "c2hvcnQ=" },
			[]string{"blobs.signing_key: blobs: signing key is 5 bytes after base64 decoding; at least 32 are required (generate one with: openssl rand -base64 32)"}},
		{"organization without configurations", func(c *Config) {
			c.Organizations = append(c.Organizations, Organization{ID: "empty"})
		}, nil},
		{"bad environment", func(c *Config) { c.Environment = "staging" },
			[]string{`environment must be "sandbox" or "production", not "staging"`}},
		{"bad listen", func(c *Config) { c.Listen = "8080" },
			[]string{`listen "8080" is not host:port`}},
		{"relative public_url", func(c *Config) { c.PublicURL = "onboarding.example.com" },
			[]string{`public_url "onboarding.example.com" must be an absolute http or https URL without query or fragment`}},
		{"public_url with query", func(c *Config) { c.PublicURL = "https://onboarding.example.com/?x=1" },
			[]string{`public_url "https://onboarding.example.com/?x=1" must be an absolute http or https URL without query or fragment`}},
		{"public_url ftp", func(c *Config) { c.PublicURL = "ftp://onboarding.example.com" },
			[]string{`public_url "ftp://onboarding.example.com" must be an absolute http or https URL without query or fragment`}},
		{"public_url with an empty query", func(c *Config) { c.PublicURL = "http://127.0.0.1:8080/base?" },
			[]string{`public_url "http://127.0.0.1:8080/base?" must be an absolute http or https URL without query or fragment`}},
		{"public_url with an empty fragment", func(c *Config) { c.PublicURL = "http://127.0.0.1:8080/base#" },
			[]string{`public_url "http://127.0.0.1:8080/base#" must be an absolute http or https URL without query or fragment`}},
		{"public_url with a password", func(c *Config) { c.PublicURL = "https://user:secret@example.com" },
			[]string{"public_url must not contain a user name or password: applicant links and e-mails would show them"}},
		{"public_url with a user name", func(c *Config) { c.PublicURL = "https://user@example.com/base" },
			[]string{"public_url must not contain a user name or password: applicant links and e-mails would show them"}},
		{"public_url with a password that is not a URL", func(c *Config) { c.PublicURL = "https://user:se cret@example.com" },
			[]string{"public_url must not contain a user name or password: applicant links and e-mails would show them"}},
		{"public_url with @ in its path", func(c *Config) { c.PublicURL = "https://example.com/@onboarding" }, nil},
		{"empty data_dir", func(c *Config) { c.DataDir = "" },
			[]string{"data_dir must not be empty"}},
		{"live registry without credentials", func(c *Config) { c.Registry.Mode = "live" },
			[]string{`registry.mode "live" needs registry.companies_house_api_key, registry.cro_email and registry.cro_api_key`}},
		{"live registry missing the CRO key", func(c *Config) {
			c.Registry.Mode, c.Registry.CompaniesHouseAPIKey, c.Registry.CROEmail = "live", "k", "ops@example.com"
		}, []string{`registry.mode "live" needs registry.companies_house_api_key, registry.cro_email and registry.cro_api_key`}},
		{"unknown registry mode", func(c *Config) { c.Registry.Mode = "mock" },
			[]string{`registry.mode must be "fixtures" or "live", not "mock"`}},
		{"zero registry.timeout", func(c *Config) { c.Registry.Timeout = Duration{} },
			[]string{"registry.timeout must be between 1ms and 1m, not 0s"}},
		{"long registry.timeout", func(c *Config) { c.Registry.Timeout = Duration{2 * time.Minute} },
			[]string{"registry.timeout must be between 1ms and 1m, not 2m0s"}},
		{"smtp_url without from", func(c *Config) { c.Mail = Mail{SMTPURL: "smtp://u:p@mail.example:587"} },
			[]string{"mail.from is required when mail.smtp_url is set"}},
		{"sandbox without from", func(c *Config) { c.Mail.From = "" },
			[]string{"mail.from is required in sandbox: the outbox writes messages from it"}},
		{"production without smtp_url or from", func(c *Config) {
			c.Environment, c.PublicURL, c.Mail.From = "production", "https://onboarding.example.com", ""
			c.Registry = Registry{Mode: "live", CompaniesHouseAPIKey: "k", CROEmail: "ops@example.com", CROAPIKey: "c", Timeout: Duration{time.Second}}
		}, nil},
		{"production with the sandbox's fixtures and links following listen", func(c *Config) { c.Environment = "production" }, []string{
			"public_url is required in production: applicant links must use the address applicants reach",
			`registry.mode "fixtures" answers from the sandbox's recorded companies: production needs registry.mode = "live" with its credentials`,
		}},
		{"public_url left empty in sandbox", func(c *Config) { c.PublicURL = "" }, nil},
		{"from not an address", func(c *Config) { c.Mail.From = "Onboarding" },
			[]string{`mail.from "Onboarding" is not an email address such as "Onboarding <onboarding@example.com>"`}},
		{"too short registry.timeout", func(c *Config) { c.Registry.Timeout = Duration{time.Microsecond} },
			[]string{"registry.timeout must be between 1ms and 1m, not 1µs"}},
		{"smtp_url not smtp", func(c *Config) { c.Mail.SMTPURL = "https://mail.example" },
			[]string{"mail.smtp_url must look like smtp://user:pass@host:587 or smtps://user:pass@host:465"}},
		{"negative rate", func(c *Config) { c.Limits.RatePerSecond = -1 },
			[]string{"limits.rate_per_second must be 0 (no limit) or more"}},
		{"zero burst", func(c *Config) { c.Limits.Burst = 0 },
			[]string{"limits.burst must be at least 1"}},
		{"zero burst without a rate limit", func(c *Config) { c.Limits.RatePerSecond, c.Limits.Burst = 0, 0 }, nil},
		{"small bodies", func(c *Config) { c.Limits.MaxJSONBytes, c.Limits.MaxUploadBytes = 10, 0 },
			[]string{"limits.max_json_bytes must be at least 1024", "limits.max_upload_bytes must be at least 1024"}},
		{"small mapped limit", func(c *Config) { c.Limits.MaxMappedBytes = 4096 },
			[]string{"limits.max_mapped_bytes must be 0 (no limit) or at least 1048576"}},
		{"negative mapped limit", func(c *Config) { c.Limits.MaxMappedBytes = -1 },
			[]string{"limits.max_mapped_bytes must be 0 (no limit) or at least 1048576"}},
		{"no mapped limit", func(c *Config) { c.Limits.MaxMappedBytes = 0 }, nil},
		{"trusted proxy not an address", func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/8", "proxy.internal"} },
			[]string{`trusted_proxies: "proxy.internal" is neither an IP address nor a CIDR prefix such as 10.0.0.0/8`}},
		{"trusted proxies", func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32"} }, nil},
		{"session timeout too short", func(c *Config) { c.Limits.SessionTimeout = Duration{time.Second} },
			[]string{"limits.session_timeout must be between 10s and 168h, not 1s"}},
		{"session timeout too long", func(c *Config) { c.Limits.SessionTimeout = Duration{30 * 24 * time.Hour} },
			[]string{"limits.session_timeout must be between 10s and 168h, not 720h0m0s"}},
		{"negative retry delay", func(c *Config) { c.Webhooks.RetrySchedule = []Duration{{0}, {-time.Second}} },
			[]string{"webhooks.retry_schedule[1] must not be negative"}},
		{"no attempts", func(c *Config) { c.Webhooks.RetrySchedule = []Duration{} },
			[]string{"webhooks.retry_schedule must list at least one attempt"}},
		{"a delayed first attempt", func(c *Config) { c.Webhooks.RetrySchedule = []Duration{{time.Second}, {time.Minute}} },
			[]string{`webhooks.retry_schedule[0] must be "0s": the first attempt is made as soon as the event commits`}},
		{"zero webhooks.timeout", func(c *Config) { c.Webhooks.Timeout = Duration{} },
			[]string{"webhooks.timeout must be positive"}},
		{"no organizations", func(c *Config) { c.Organizations = nil },
			[]string{"at least one [[organizations]] entry is required"}},
		{"bad organization id", func(c *Config) { c.Organizations[0].ID = "Acme Corp" },
			[]string{`organization "Acme Corp": id must be 1-63 lower-case letters, digits, '-' or '_'`}},
		{"duplicate organization ids", func(c *Config) {
			c.Organizations = append(c.Organizations, Organization{ID: "default"})
		}, []string{`organization "default": duplicate organization id`}},
		{"duplicate configuration ids across organizations", func(c *Config) {
			c.Organizations = append(c.Organizations, Organization{ID: "acme", Configs: []AppConfig{{ID: "default", Form: "standard", Countries: []string{"GB"}}}})
		}, []string{`organization "acme": configuration "default": duplicate configuration id (also in organization "default"); configuration ids are global`}},
		{"default_config that does not exist", func(c *Config) { c.Organizations[0].DefaultConfig = "missing" },
			[]string{`organization "default": default_config "missing" is not one of its configurations`}},
		{"default_config of another organization", func(c *Config) {
			c.Organizations = append(c.Organizations, Organization{ID: "acme", DefaultConfig: "default"})
		}, []string{`organization "acme": default_config "default" is not one of its configurations`}},
		{"configuration without form or countries", func(c *Config) {
			c.Organizations[0].Configs[0].Form, c.Organizations[0].Configs[0].Countries = "", nil
		}, []string{
			`organization "default": configuration "default": form is required ("standard" or a path to a form file)`,
			`organization "default": configuration "default": countries must list at least one ISO 3166-1 alpha-2 code`,
		}},
		{"bad country code", func(c *Config) { c.Organizations[0].Configs[0].Countries = []string{"GB", "gb", "GBR"} },
			[]string{
				`organization "default": configuration "default": country "gb" must be an upper-case ISO 3166-1 alpha-2 code`,
				`organization "default": configuration "default": country "GBR" must be an upper-case ISO 3166-1 alpha-2 code`,
			}},
		{"duplicate country", func(c *Config) { c.Organizations[0].Configs[0].Countries = []string{"GB", "IE", "GB"} },
			[]string{`organization "default": configuration "default": country "GB" is listed twice`}},
		{"custom_domain_active without custom_domain", func(c *Config) { c.Organizations[0].CustomDomainActive = true },
			[]string{`organization "default": custom_domain_active needs custom_domain`}},
		{"custom_domain not a host name", func(c *Config) { c.Organizations[0].CustomDomain = "https://onboarding.example.com" },
			[]string{`organization "default": custom_domain "https://onboarding.example.com" is not a host name`}},
		{"terms_url not a URL", func(c *Config) { c.Organizations[0].TermsURL = "acme.example/terms" },
			[]string{`organization "default": terms_url "acme.example/terms" must be an absolute http or https URL without credentials`}},
		{"terms_url with credentials", func(c *Config) { c.Organizations[0].TermsURL = "https://u:p@acme.example/terms" },
			[]string{`organization "default": terms_url "https://u:p@acme.example/terms" must be an absolute http or https URL without credentials`}},
		{"terms_url over http in production", func(c *Config) {
			c.Environment, c.PublicURL = "production", "https://onboarding.example.com"
			c.Registry = Registry{Mode: "live", CompaniesHouseAPIKey: "k", CROEmail: "ops@example.com", CROAPIKey: "c", Timeout: Duration{time.Second}}
			c.Organizations[0].TermsURL = "http://acme.example/terms"
		}, []string{`organization "default": terms_url must be an https URL in production`}},
		{"rfi agent id not a UUID", func(c *Config) {
			c.Organizations[0].RFIAgents = []RFIAgent{{ID: "docs", Name: "Docs", Documents: []string{"bank_statement"}, ExpiryDays: 14}}
		}, []string{`organization "default": rfi agent "docs": id must be a UUID`}},
		{"two default rfi agents", func(c *Config) {
			c.Organizations[0].RFIAgents = []RFIAgent{
				{ID: agentID, Default: true, Documents: []string{"bank_statement"}, ExpiryDays: 14},
				{ID: "9b2e6c1d-0f4a-4b8e-a7c3-5d1f2e3a4b6c", Default: true, Documents: []string{"bank_statement"}, ExpiryDays: 14},
			}
		}, []string{`organization "default": at most one rfi agent may be the default`}},
		{"duplicate rfi agent across organizations", func(c *Config) {
			c.Organizations[0].RFIAgents = []RFIAgent{{ID: agentID, Documents: []string{"bank_statement"}, ExpiryDays: 14}}
			c.Organizations = append(c.Organizations, Organization{ID: "acme", RFIAgents: []RFIAgent{{ID: agentID, Documents: []string{"bank_statement"}, ExpiryDays: 14}}})
		}, []string{`organization "acme": rfi agent "` + agentID + `": duplicate rfi agent id`}},
		{"rfi agent with negative expiry", func(c *Config) {
			c.Organizations[0].RFIAgents = []RFIAgent{{ID: agentID, Documents: []string{"bank_statement"}, ExpiryDays: -1}}
		}, []string{`organization "default": rfi agent "` + agentID + `": expiry_days must be at least 1`}},
		{"rfi agent without documents", func(c *Config) {
			c.Organizations[0].RFIAgents = []RFIAgent{{ID: agentID, ExpiryDays: 14}}
		}, []string{`organization "default": rfi agent "` + agentID + `": documents must name at least one document`}},
		{"rfi agent asking for an unknown or a person document", func(c *Config) {
			c.Organizations[0].RFIAgents = []RFIAgent{{ID: agentID, Documents: []string{"passport", "person_id_document", "bank_statement", "bank_statement"}, ExpiryDays: 14}}
		}, []string{
			`organization "default": rfi agent "` + agentID + `": unknown document "passport" (use one of certificate_of_incorporation, proof_of_address, bank_statement)`,
			`organization "default": rfi agent "` + agentID + `": unknown document "person_id_document" (use one of certificate_of_incorporation, proof_of_address, bank_statement)`,
			`organization "default": rfi agent "` + agentID + `": document "bank_statement" is listed twice`,
		}},
		{"several problems at once", func(c *Config) {
			c.Environment = "dev"
			c.Registry.Mode = "live"
			c.Limits.Burst = 0
			c.Organizations[0].DefaultConfig = "nope"
		}, []string{
			`environment must be "sandbox" or "production", not "dev"`,
			`registry.mode "live" needs registry.companies_house_api_key, registry.cro_email and registry.cro_api_key`,
			"limits.burst must be at least 1",
			`organization "default": default_config "nope" is not one of its configurations`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			tt.change(&cfg)
			err := cfg.Validate()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate problems (-want +got):\n%s", diff)
			}
		})
	}
}

// liteFormDir returns a new directory holding forms/lite.toml, a copy of
// testdata's kyb-lite form, for configuration files written beside it.
func liteFormDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	form, err := os.ReadFile(filepath.Join("..", "testdata", "forms", "kyb-lite.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "forms"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "forms", "lite.toml"), form, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConfigFormPathsAreRelativeToTheFile loads a configuration whose form
// path is relative, from a working directory where that path does not exist.
func TestConfigFormPathsAreRelativeToTheFile(t *testing.T) {
	dir := liteFormDir(t)
	path := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(path, []byte(`
[[organizations]]
id = "acme"
default_config = "lite"
  [[organizations.configs]]
  id = "lite"
  form = "forms/lite.toml"
  countries = ["GB"]
  [[organizations.configs]]
  id = "lite-ie"
  form = "forms/lite.toml"
  countries = ["IE"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	orgs, err := cfg.DomainOrganizations()
	if err != nil {
		t.Fatalf("DomainOrganizations: %v", err)
	}
	cs := orgs[0].Configs
	if len(cs) != 2 || cs[0].Form.ID() != "kyb-lite" || cs[0].Form != cs[1].Form {
		t.Errorf("configurations %+v: want two sharing the one kyb-lite form", cs)
	}
}

func TestDomainOrganizationsNamesTheBrokenConfiguration(t *testing.T) {
	cfg := Default()
	cfg.Organizations[0].Configs[0].Form = "forms/missing.toml"
	_, err := cfg.DomainOrganizations()
	want := `organization "default": configuration "default": form "forms/missing.toml": `
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("DomainOrganizations error = %v; want one starting %q", err, want)
	}
}

// TestLinkBase: links follow public_url, or else the address listened on
// with an unspecified host made the loopback one.
func TestLinkBase(t *testing.T) {
	for _, tt := range []struct{ publicURL, listen, want string }{
		{"", "127.0.0.1:9000", "http://127.0.0.1:9000"},
		{"", "0.0.0.0:9000", "http://127.0.0.1:9000"},
		{"", ":9000", "http://127.0.0.1:9000"},
		{"", "[::]:9000", "http://[::1]:9000"},
		{"", "[::1]:9000", "http://[::1]:9000"},
		{"", "onboard.internal:80", "http://onboard.internal:80"},
		{"https://onboarding.example.com", "127.0.0.1:9000", "https://onboarding.example.com"},
	} {
		cfg := Config{PublicURL: tt.publicURL}
		if got := cfg.LinkBase(tt.listen); got != tt.want {
			t.Errorf("linkBase(public_url %q, listen %q) = %q, want %q", tt.publicURL, tt.listen, got, tt.want)
		}
	}
}
