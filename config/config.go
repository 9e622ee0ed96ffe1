// Package config is onboard's configuration: its types and defaults,
// loading a TOML file onto them, validation listing every problem, and the
// form files that application configurations name.
package config

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/registry"
)

// Config is onboard's configuration file (docs/operations.md). Every key is documented
// in config.example.toml, which a test loads.
type Config struct {
	Environment string `toml:"environment"`
	Listen      string `toml:"listen"`
	PublicURL   string `toml:"public_url"`
	DataDir     string `toml:"data_dir"`
	// TrustedProxies are the reverse proxies (addresses or CIDR prefixes)
	// whose X-Forwarded-For names the client; nobody else's is believed.
	TrustedProxies []string       `toml:"trusted_proxies"`
	Registry       Registry       `toml:"registry"`
	Mail           Mail           `toml:"mail"`
	Limits         Limits         `toml:"limits"`
	Webhooks       Webhooks       `toml:"webhooks"`
	Storage        Storage        `toml:"storage"`
	Blobs          Blobs          `toml:"blobs"`
	Metrics        Metrics        `toml:"metrics"`
	Organizations  []Organization `toml:"organizations"`

	dir      string    // directory of the file, for relative form paths
	unknown  []string  // keys of the file that mean nothing, for Validate
	badTypes []badType // values of the wrong type, left out, for Validate
}

// Registry is the [registry] table.
type Registry struct {
	Mode                 string   `toml:"mode"`
	CompaniesHouseAPIKey string   `toml:"companies_house_api_key"`
	CROEmail             string   `toml:"cro_email"`
	CROAPIKey            string   `toml:"cro_api_key"`
	Timeout              Duration `toml:"timeout"`
	CompaniesHouseURL    string   `toml:"companies_house_url"`
	CROURL               string   `toml:"cro_url"`
}

// Mail is the [mail] table.
type Mail struct {
	SMTPURL string `toml:"smtp_url"`
	From    string `toml:"from"`
}

// Limits is the [limits] table.
type Limits struct {
	RatePerSecond  float64 `toml:"rate_per_second"`
	Burst          int     `toml:"burst"`
	MaxJSONBytes   int64   `toml:"max_json_bytes"`
	MaxUploadBytes int64   `toml:"max_upload_bytes"`
	// MaxMappedBytes bounds the database's files serve keeps mapped into
	// its memory (package memrelease); 0: no bound.
	MaxMappedBytes int64 `toml:"max_mapped_bytes"`
	// SessionTimeout is how long an applicant's session lasts without
	// use; pages warn two minutes before it ends.
	SessionTimeout Duration `toml:"session_timeout"`
}

// Storage is the [storage] table: where the records are kept.
type Storage struct {
	// Backend is StorageBadger (the embedded store in data_dir/badger) or
	// StoragePostgres (every record in the database at PostgresURL).
	Backend string `toml:"backend"`
	// PostgresURL is the database's postgres:// URL; ONBOARD_POSTGRES_URL
	// overrides it (ApplyEnv).
	PostgresURL string `toml:"postgres_url"`
	// MaxConnections bounds this instance's pool of database connections.
	MaxConnections int `toml:"max_connections"`
}

// The values of storage.backend and blobs.backend.
const (
	StorageBadger   = "badger"
	StoragePostgres = "postgres"
	BlobsLocal      = "local"
	BlobsS3         = "s3"
)

// Blobs is the [blobs] table: stored files and their download links.
type Blobs struct {
	// Backend is BlobsLocal (files under data_dir/blobs) or BlobsS3
	// (objects in the bucket S3Bucket at S3Endpoint).
	Backend string `toml:"backend"`
	// S3Endpoint is the S3 API's base URL, such as
	// https://s3.eu-west-2.amazonaws.com.
	S3Endpoint string `toml:"s3_endpoint"`
	// S3Bucket is the bucket, which must exist: onboard creates none.
	S3Bucket string `toml:"s3_bucket"`
	// S3Region is the region requests are signed for.
	S3Region string `toml:"s3_region"`
	// S3Prefix starts the key of every object onboard writes; optional.
	S3Prefix string `toml:"s3_prefix"`
	// S3PathStyle puts the bucket in the URL's path rather than in its
	// host name, as most self-hosted S3-compatible servers need.
	S3PathStyle bool `toml:"s3_path_style"`
	// S3AccessKeyID and S3SecretAccessKey sign the requests;
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY override them (ApplyEnv).
	S3AccessKeyID     string `toml:"s3_access_key_id"`
	S3SecretAccessKey string `toml:"s3_secret_access_key"`
	// SigningKey signs download links (base64, at least 32 bytes); empty
	// means a key generated on the first start and kept with the records:
	// in the data directory's secrets/, or in the PostgreSQL database.
	SigningKey string `toml:"signing_key"`
}

// Metrics is the [metrics] table (docs/operations.md).
type Metrics struct {
	// Listen is the address (host:port) of GET /metrics; empty: the API's
	// listener serves it.
	Listen string `toml:"listen"`
}

// Webhooks is the [webhooks] table.
type Webhooks struct {
	RetrySchedule []Duration `toml:"retry_schedule"`
	Timeout       Duration   `toml:"timeout"`
}

// Organization is one [[organizations]] entry.
type Organization struct {
	ID                 string      `toml:"id"`
	Name               string      `toml:"name"`
	DefaultConfig      string      `toml:"default_config"`
	CustomDomain       string      `toml:"custom_domain"`
	CustomDomainActive bool        `toml:"custom_domain_active"`
	TermsURL           string      `toml:"terms_url"`
	Configs            []AppConfig `toml:"configs"`
	RFIAgents          []RFIAgent  `toml:"rfi_agents"`
}

// AppConfig is one [[organizations.configs]] entry: an application configuration.
type AppConfig struct {
	ID                string   `toml:"id"`
	Form              string   `toml:"form"`
	Countries         []string `toml:"countries"`
	CompanySelection  bool     `toml:"company_selection"`
	RegistryDocuments bool     `toml:"registry_documents"`
}

// RFIAgent is one [[organizations.rfi_agents]] entry.
type RFIAgent struct {
	ID         string   `toml:"id"`
	Name       string   `toml:"name"`
	Default    bool     `toml:"default"`
	Active     bool     `toml:"active"`
	Documents  []string `toml:"documents"`
	ExpiryDays int      `toml:"expiry_days"`
}

// Duration is a time.Duration written in TOML as a string such as "10s".
type Duration struct{ time.Duration }

// notADuration marks a Duration whose text in the file was not one, for
// Validate to report with every other problem of the file rather than
// stopping the decoding at the first.
const notADuration = time.Duration(math.MinInt64)

// UnmarshalText parses a Go duration string; other text leaves
// notADuration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		v = notADuration
	}
	d.Duration = v
	return nil
}

// check notes a problem on p when the file's text for key was not a
// duration, and reports whether the duration is valid.
func (d Duration) check(key string, p *onboarding.Problems) bool {
	if d.Duration == notADuration {
		p.Note(key, "%s is not a duration: use a form such as 10s, 5m or 2h", key)
		return false
	}
	return true
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Default is the embedded sandbox configuration used when no file is
// given, and the values a file is decoded onto. The decoder fills the
// existing elements of a list of tables, and the entries of a map, in place:
// a default of either kind must be set aside in Load, as the sandbox
// organization is, or a file's entries would inherit its fields.
func Default() Config {
	return Config{
		Environment:    "sandbox",
		Listen:         "127.0.0.1:8080",
		PublicURL:      "", // links follow listen: http://127.0.0.1:8080
		DataDir:        "./data",
		TrustedProxies: []string{},
		Registry: Registry{Mode: "fixtures", Timeout: Duration{8 * time.Second},
			CompaniesHouseURL: registry.DefaultCompaniesHouseBaseURL, CROURL: registry.DefaultCROBaseURL},
		Mail:   Mail{From: "Onboarding <onboarding@sandbox.invalid>"},
		Limits: Limits{RatePerSecond: 20, Burst: 40, MaxJSONBytes: 1 << 20, MaxUploadBytes: 25 << 20, MaxMappedBytes: 48 << 20, SessionTimeout: Duration{12 * time.Hour}},
		Webhooks: Webhooks{
			RetrySchedule: []Duration{{0}, {5 * time.Second}, {5 * time.Minute}, {30 * time.Minute}, {2 * time.Hour}, {5 * time.Hour}, {10 * time.Hour}, {10 * time.Hour}},
			Timeout:       Duration{15 * time.Second},
		},
		Storage: Storage{Backend: StorageBadger, MaxConnections: 10},
		Blobs:   Blobs{Backend: BlobsLocal, S3Region: "us-east-1"},
		Organizations: []Organization{{
			ID:            "default",
			Name:          "Sandbox",
			DefaultConfig: "default",
			Configs: []AppConfig{{
				ID: "default", Form: "standard", Countries: []string{"GB", "IE"}, RegistryDocuments: true,
			}},
			RFIAgents: []RFIAgent{{
				ID: SandboxRFIAgentID, Name: "Document collection", Default: true, Active: true,
				Documents: []string{"bank_statement", "proof_of_address"}, ExpiryDays: 14,
			}},
		}},
	}
}

// SandboxRFIAgentID is the id of the sandbox organization's RFI agent.
const SandboxRFIAgentID = "5a1d0b7e-3c2f-4e8a-9b6d-0f4c8e2a7d31"

// Load returns the defaults overlaid with the file at path (none when
// path is empty). Unknown keys and values of the wrong type (which are left
// out) are problems that Validate reports with every other one, so that a
// typo cannot silently fall back to a default. A file that declares
// organizations replaces the sandbox organization; one that declares none
// keeps it. Only a file that cannot be read or is not TOML fails here.
func Load(path string) (Config, error) {
	cfg := Default()
	if path == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read configuration: %w", err)
	}
	text, inFile, err := cfg.leaveOutBadTypes(string(b))
	if err != nil {
		return Config{}, fmt.Errorf("configuration %s: %w", path, err)
	}
	// The file is decoded onto the defaults: a key it does not set keeps its
	// default. The decoder fills a list's existing elements in place, so the
	// file's [[organizations]] would inherit the sandbox organization's
	// fields: the list starts empty and the sandbox organization comes back
	// only when the file declares no organizations.
	sandbox := cfg.Organizations
	cfg.Organizations = nil
	md, err := toml.Decode(text, &cfg)
	if err != nil {
		return Config{}, fmt.Errorf("configuration %s: %w", path, err)
	}
	for _, k := range inFileOrder(md.Undecoded(), inFile) {
		cfg.unknown = append(cfg.unknown, k.String())
	}
	if !md.IsDefined("organizations") {
		cfg.Organizations = sandbox
	}
	for i := range cfg.Organizations {
		for j := range cfg.Organizations[i].RFIAgents {
			if a := &cfg.Organizations[i].RFIAgents[j]; a.ExpiryDays == 0 {
				a.ExpiryDays = 14 // the default RFI expiry (docs/api.md)
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

// leaveOutBadTypes notes in c.badTypes the values of text (a configuration
// file) that c cannot hold, and returns the text to decode without them,
// with the file's keys in its order. An error means text is not TOML.
func (c *Config) leaveOutBadTypes(text string) (string, []toml.Key, error) {
	var values map[string]any
	md, err := toml.Decode(text, &values)
	if err != nil {
		return "", nil, err
	}
	c.badTypes = takeBadTypes(text, values, c)
	if len(c.badTypes) == 0 {
		return text, md.Keys(), nil
	}
	text, err = encodeTOML(values)
	return text, md.Keys(), err
}

// inFileOrder sorts keys in the order of inFile, the file's keys as it has
// them: decoding a file whose wrong values were left out, as text encoded
// again, sees them in another order.
func inFileOrder(keys, inFile []toml.Key) []toml.Key {
	at := make(map[string]int, len(inFile))
	for i, k := range slices.Backward(inFile) {
		at[k.String()] = i // the first time the file has k
	}
	slices.SortStableFunc(keys, func(a, b toml.Key) int { return at[a.String()] - at[b.String()] })
	return keys
}

// LinkBase is the base URL of applicant links: public_url, or when that is
// empty the http URL of listen, the address actually listened on (whose
// port may have been 0). An unspecified host (":8080", "0.0.0.0:8080")
// becomes the loopback address: an address applicants elsewhere reach has
// to be set as public_url.
func (c *Config) LinkBase(listen string) string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	switch ip := net.ParseIP(host); {
	case host == "" || (ip != nil && ip.To4() != nil && ip.IsUnspecified()):
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// DomainOrganizations builds the domain's organizations, loading each form once.
func (c *Config) DomainOrganizations() ([]*onboarding.Organization, error) {
	forms := map[string]*onboarding.Form{}
	var out []*onboarding.Organization
	for _, o := range c.Organizations {
		org := &onboarding.Organization{
			ID: o.ID, Name: o.Name, DefaultConfig: o.DefaultConfig,
			CustomDomain: strings.ToLower(o.CustomDomain), CustomDomainActive: o.CustomDomainActive,
			TermsURL: o.TermsURL,
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
		for _, a := range o.RFIAgents {
			id, err := uuid.Parse(a.ID)
			if err != nil {
				return nil, fmt.Errorf("organization %q: rfi agent %q: id must be a UUID", o.ID, a.ID)
			}
			org.RFIAgents = append(org.RFIAgents, &onboarding.RFIAgent{
				ID: id.String(), Name: a.Name, Default: a.Default, Active: a.Active,
				Documents: slices.Clone(a.Documents), ExpiryDays: a.ExpiryDays,
			})
		}
		out = append(out, org)
	}
	return out, nil
}
