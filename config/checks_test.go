package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/notify"
)

// problems is Validate's error as its lines; nil when valid.
func problems(c *Config) []string {
	if err := c.Validate(); err != nil {
		return strings.Split(err.Error(), "\n")
	}
	return nil
}

// TestConfigListenAddresses: listen and metrics.listen are refused when
// serve's listener would be (an unknown port name, a port out of range), and
// a service name is refused too, since links built from listen need the
// number.
func TestConfigListenAddresses(t *testing.T) {
	const portRule = `: the port must be a number from 0 to 65535 (not a service name such as "http")`
	tests := []struct {
		addr string
		want string // the problem after the quoted key and address; "": valid
	}{
		{"127.0.0.1:9090", ""},
		{"[::1]:0", ""},
		{":65535", ""},
		{"localhost:9000", ""},
		{"[::1]:x", portRule},
		{"127.0.0.1:99999", portRule},
		{"127.0.0.1:65536", portRule},
		{":http", portRule},
		{"127.0.0.1:", portRule},
		{"127.0.0.1:-1", portRule},
		{"127.0.0.1:+80", portRule},
		{"127.0.0.1:000080", portRule},
		{"8080", " is not host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			for _, key := range []string{"listen", "metrics.listen"} {
				cfg := Default()
				if key == "listen" {
					cfg.Listen = tt.addr
				} else {
					cfg.Metrics.Listen = tt.addr
				}
				var want []string
				if tt.want != "" {
					want = []string{key + ` "` + tt.addr + `"` + tt.want}
				}
				if diff := cmp.Diff(want, problems(&cfg)); diff != "" {
					t.Errorf("%s = %q: Validate problems (-want +got):\n%s", key, tt.addr, diff)
				}
			}
		})
	}
}

// TestConfigSMTPURLAsServeDoes: mail.smtp_url is refused exactly when
// serve's mail transport refuses it, and no message shows the password.
func TestConfigSMTPURLAsServeDoes(t *testing.T) {
	const pw = "pw-s3cret"
	tests := []struct {
		url  string
		want []string
	}{
		{"smtp://user:" + pw + "@127.0.0.1:2525", nil},
		{"smtps://user:" + pw + "@mail.example:465/", nil},
		{"smtp://mail.example", nil},
		{"smtp://user:" + pw + "@127.0.0.1:2525?auth=x", []string{"mail.smtp_url must not have a path, query or fragment"}},
		{"smtp://user:" + pw + "@127.0.0.1:2525?", nil}, // an empty query is none for the transport
		{"smtp://user:" + pw + "@127.0.0.1:2525/relay", []string{"mail.smtp_url must not have a path, query or fragment"}},
		{"smtp://user:" + pw + "@127.0.0.1:2525#x", []string{"mail.smtp_url must not have a path, query or fragment"}},
		{"smtp://user:" + pw + "@127.0.0.1:99999", []string{`mail.smtp_url port "99999" is not a port number`}},
		{"smtp://user:" + pw + "@127.0.0.1:x", []string{"mail.smtp_url must look like smtp://user:pass@host:587 or smtps://user:pass@host:465"}},
		{"smtp://user@127.0.0.1:2525", []string{"mail.smtp_url has a user but no password"}},
		{"smtp://:" + pw + "@127.0.0.1:2525", []string{"mail.smtp_url has a password but no user"}},
		{"https://mail.example", []string{"mail.smtp_url must look like smtp://user:pass@host:587 or smtps://user:pass@host:465"}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			cfg := Default()
			cfg.Mail.SMTPURL = tt.url
			got := problems(&cfg)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate problems (-want +got):\n%s", diff)
			}
			if strings.Contains(strings.Join(got, "\n"), pw) {
				t.Errorf("a problem shows the password: %q", got)
			}
			_, serveErr := notify.NewSMTP(tt.url, cfg.Mail.From, notify.SMTPOptions{})
			if (serveErr != nil) != (got != nil) {
				t.Errorf("serve's transport says %v, Validate %q: they must agree", serveErr, got)
			}
		})
	}
}

// TestConfigMaskedURL: config check prints mail.smtp_url without its password,
// query or fragment, where a secret may also have been put.
func TestConfigMaskedURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"smtp://user:pw@mail.example:587", "smtp://user:********@mail.example:587"},
		{"smtp://mail.example:587", "smtp://mail.example:587"},
		{"smtp://user:pw@127.0.0.1:2525?auth=x", "smtp://user:********@127.0.0.1:2525?********"},
		{"smtp://user:pw@127.0.0.1:2525?password=pw", "smtp://user:********@127.0.0.1:2525?********"},
		{"smtp://user:pw@mail.example#pw", "smtp://user:********@mail.example#********"},
		{"smtp://user:p w@mail.example", MaskedText},
	}
	for _, tt := range tests {
		cfg := Default()
		cfg.Mail.SMTPURL = tt.url
		if got := cfg.Masked().Mail.SMTPURL; got != tt.want {
			t.Errorf("masked smtp_url %q = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// TestConfigLoadsFormFiles: a form file that serve cannot load (missing,
// not TOML, a directory, unknown keys) is a problem of the configuration,
// with serve's message, reported once however many configurations use it.
func TestConfigLoadsFormFiles(t *testing.T) {
	dir := liteFormDir(t)
	files := map[string]string{
		"bad.toml":     "id = \n",
		"unknown.toml": "id = \"x\"\ncolour = \"blue\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(path, []byte(`
[[organizations]]
id = "acme"
  [[organizations.configs]]
  id = "lite"
  form = "forms/lite.toml"
  countries = ["GB"]
  [[organizations.configs]]
  id = "missing"
  form = "nonexistent.toml"
  countries = ["GB"]
  [[organizations.configs]]
  id = "missing-again"
  form = "nonexistent.toml"
  countries = ["IE"]
  [[organizations.configs]]
  id = "bad"
  form = "bad.toml"
  countries = ["GB"]
  [[organizations.configs]]
  id = "dir"
  form = "forms"
  countries = ["GB"]
  [[organizations.configs]]
  id = "unknown"
  form = "unknown.toml"
  countries = ["GB"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`organization "acme": configuration "missing": form "nonexistent.toml": open ` + filepath.Join(dir, "nonexistent.toml") + `: no such file or directory`,
		`organization "acme": configuration "bad": form ` + filepath.Join(dir, "bad.toml") + `: toml: line 1 (last key "id"): expected value but found '\n' instead`,
		`organization "acme": configuration "dir": form "forms": read ` + filepath.Join(dir, "forms") + `: is a directory`,
		`organization "acme": configuration "unknown": form ` + filepath.Join(dir, "unknown.toml") + `: unknown keys: colour`,
	}
	if diff := cmp.Diff(want, problems(&cfg)); diff != "" {
		t.Errorf("Validate problems (-want +got):\n%s", diff)
	}
	// Serve fails on the first, with the same message.
	if _, err := cfg.DomainOrganizations(); errText(err) != want[0] {
		t.Errorf("DomainOrganizations error = %v; want %q", err, want[0])
	}
}

// TestLoadConfigReportsWrongTypesWithEveryProblem: a value of the wrong
// type no longer hides the file's other problems: each is named by its key
// and line, among unknown keys, bad durations and duplicate ids.
func TestLoadConfigReportsWrongTypesWithEveryProblem(t *testing.T) {
	cfg, _, err := loadConfigText(t, `enviroment = "production"
[limits]
max_json_bytes = "big"
max_upload_bytes = 1e30
session_timeout = "forever"
[[organizations]]
id = "acme"
  [[organizations.configs]]
  id = "a"
  form = "standard"
  countries = ["GB"]
  [[organizations.configs]]
  id = "a"
  form = "standard"
  countries = ["IE"]
  colour = "blue"
`)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	want := []string{
		"unknown key enviroment (config.example.toml lists every key)",
		"unknown key organizations.configs.colour (config.example.toml lists every key)",
		"limits.max_json_bytes must be an integer, not a string (line 3)",
		"limits.max_upload_bytes must be an integer, not a float (line 4)",
		"limits.session_timeout is not a duration: use a form such as 10s, 5m or 2h",
		`organization "acme": configuration "a": duplicate configuration id (also in organization "acme"); configuration ids are global`,
	}
	if diff := cmp.Diff(want, problems(&cfg)); diff != "" {
		t.Errorf("Validate problems (-want +got):\n%s", diff)
	}
	// The values of the right type are kept.
	if cfg.Limits.MaxJSONBytes != Default().Limits.MaxJSONBytes || len(cfg.Organizations) != 1 || len(cfg.Organizations[0].Configs) != 2 {
		t.Errorf("limits %+v, organizations %+v: want the defaults for the wrong values and the rest of the file", cfg.Limits, cfg.Organizations)
	}
}

// TestLoadConfigWrongTypes names each wrong value's key (with the index of
// an array's element or table) and line, in the order of the file.
func TestLoadConfigWrongTypes(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"string for a string", `listen = 8080`, []string{"listen must be a string, not an integer (line 1)"}},
		{"integer for a number", "[limits]\nrate_per_second = 3", nil},
		{"integer too large for a number", "[limits]\nrate_per_second = 9007199254740993",
			[]string{"limits.rate_per_second must be a number from -2^53 to 2^53, not an integer (line 2)"}},
		{"boolean", "[[organizations]]\nid = \"a\"\n[[organizations.configs]]\nid = \"a\"\nform = \"standard\"\ncountries = [\"GB\"]\ncompany_selection = \"yes\"",
			[]string{"organizations[0].configs[0].company_selection must be true or false, not a string (line 7)"}},
		{"a table given a value", "limits = 5", []string{"limits must be a table, not an integer (line 1)"}},
		{"an array of tables given a value", `organizations = "acme"`,
			[]string{"organizations must be an array of tables, not a string (line 1)"}},
		{"an inline table", `limits = { burst = "many", max_json_bytes = 2048 }`,
			[]string{"limits.burst must be an integer, not a string (line 1)"}},
		{"a list's elements", "trusted_proxies = [\"10.0.0.0/8\", 1, true]",
			[]string{"trusted_proxies[1] must be a string, not an integer (line 1)", "trusted_proxies[2] must be a string, not a boolean (line 1)"}},
		{"an array over several lines ends on its last", "[webhooks]\nretry_schedule = [\n  \"0s\",\n  [\"1s\"],\n]",
			[]string{`webhooks.retry_schedule[1] must be a duration such as "10s", not an array (line 5)`}},
		{"a date for a duration", "[webhooks]\ntimeout = 2024-01-02",
			[]string{"webhooks.timeout is not a duration: use a form such as 10s, 5m or 2h"}},
		{"the second organization", "[[organizations]]\nid = \"a\"\n[[organizations]]\nid = 5", []string{
			"organizations[1].id must be a string, not an integer (line 4)",
			`organization "": id must be 1-63 lower-case letters, digits, '-' or '_'`,
		}},
		{"a key in another case", "LISTEN = 8080", []string{"LISTEN must be a string, not an integer (line 1)"}},
		{"file order", "data_dir = 1\n[mail]\nfrom = 2\n[limits]\nburst = \"x\"\n[blobs]\nsigning_key = 3", []string{
			"data_dir must be a string, not an integer (line 1)",
			"mail.from must be a string, not an integer (line 3)",
			"limits.burst must be an integer, not a string (line 5)",
			"blobs.signing_key must be a string, not an integer (line 7)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := loadConfigText(t, tt.content)
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if diff := cmp.Diff(tt.want, problems(&cfg)); diff != "" {
				t.Errorf("Validate problems (-want +got):\n%s", diff)
			}
		})
	}
}
