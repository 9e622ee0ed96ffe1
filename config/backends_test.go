package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateBackends: the [storage] and [blobs] backends are checked as
// a whole, with messages that never show a password.
func TestValidateBackends(t *testing.T) {
	const pgURL = "postgres://onboard:s3cret@db.example:5432/onboard?sslmode=verify-full"
	s3 := func(c *Config) {
		c.Blobs.Backend, c.Blobs.S3Endpoint, c.Blobs.S3Bucket = "s3", "http://127.0.0.1:7070", "onboard"
		c.Blobs.S3AccessKeyID, c.Blobs.S3SecretAccessKey = "AKID", "secret"
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   []string // the problems, in order; none: valid
	}{
		{"postgres", func(c *Config) { c.Storage.Backend, c.Storage.PostgresURL = "postgres", pgURL }, nil},
		{"postgresql scheme and a socket directory", func(c *Config) {
			c.Storage.Backend, c.Storage.PostgresURL = "postgres", "postgresql:///onboard?host=/var/run/postgresql"
		}, nil},
		{"unknown storage backend", func(c *Config) { c.Storage.Backend = "mysql" },
			[]string{`storage.backend must be "badger" or "postgres", not "mysql"`}},
		{"postgres without a URL", func(c *Config) { c.Storage.Backend = "postgres" },
			[]string{`storage.backend "postgres" needs storage.postgres_url (or ONBOARD_POSTGRES_URL): the database's URL, such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full`}},
		{"URL not postgres", func(c *Config) {
			c.Storage.Backend, c.Storage.PostgresURL = "postgres", "mysql://onboard:s3cret@db.example/onboard"
		}, []string{"storage.postgres_url must be a URL such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full"}},
		{"key=value string", func(c *Config) {
			c.Storage.Backend, c.Storage.PostgresURL = "postgres", "host=db.example password=s3cret"
		}, []string{"storage.postgres_url must be a URL such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full"}},
		{"URL that does not parse", func(c *Config) {
			c.Storage.Backend, c.Storage.PostgresURL = "postgres", "postgres://onboard:s3%zzcret@db.example/onboard"
		}, []string{"storage.postgres_url must be a URL such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full"}},
		{"bad sslmode", func(c *Config) {
			c.Storage.Backend, c.Storage.PostgresURL = "postgres", "postgres://onboard:s3cret@db.example/onboard?sslmode=always"
		}, []string{"storage.postgres_url: failed to configure TLS (sslmode is invalid)"}},
		{"a URL with badger is checked too", func(c *Config) { c.Storage.PostgresURL = "postgres://onboard:s3cret@db.example/onboard?sslmode=always" },
			[]string{"storage.postgres_url: failed to configure TLS (sslmode is invalid)"}},
		{"no connections", func(c *Config) { c.Storage.MaxConnections = 0 },
			[]string{"storage.max_connections must be at least 1, not 0"}},
		{"s3", s3, nil},
		{"s3 without keys", func(c *Config) {
			s3(c)
			c.Blobs.S3AccessKeyID, c.Blobs.S3SecretAccessKey = "", ""
		}, []string{`blobs.backend "s3" needs blobs.s3_access_key_id and blobs.s3_secret_access_key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`}},
		{"unknown blobs backend", func(c *Config) { c.Blobs.Backend = "gcs" },
			[]string{`blobs.backend must be "local" or "s3", not "gcs"`}},
		{"s3 without endpoint and bucket", func(c *Config) { c.Blobs.Backend = "s3" }, []string{
			`blobs.backend "s3" needs blobs.s3_endpoint and blobs.s3_bucket`,
			`blobs.backend "s3" needs blobs.s3_access_key_id and blobs.s3_secret_access_key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`,
		}},
		{"s3 without a bucket", func(c *Config) { s3(c); c.Blobs.S3Bucket = "" },
			[]string{`blobs.backend "s3" needs blobs.s3_endpoint and blobs.s3_bucket`}},
		{"s3 endpoint with a path", func(c *Config) { s3(c); c.Blobs.S3Endpoint = "http://127.0.0.1:7070/onboard" },
			[]string{"blobs.s3_endpoint must be the http or https URL of the S3 API without a path, credentials, query or fragment, such as https://s3.eu-west-2.amazonaws.com"}},
		{"s3 endpoint without a scheme", func(c *Config) { s3(c); c.Blobs.S3Endpoint = "s3.amazonaws.com" },
			[]string{"blobs.s3_endpoint must be the http or https URL of the S3 API without a path, credentials, query or fragment, such as https://s3.eu-west-2.amazonaws.com"}},
		{"s3 bucket as a URL", func(c *Config) { s3(c); c.Blobs.S3Bucket = "s3://onboard" },
			[]string{`blobs.s3_bucket "s3://onboard" must be a bucket's name, not a path or URL`}},
		{"s3 without a region", func(c *Config) { s3(c); c.Blobs.S3Region = "" },
			[]string{`blobs.s3_region must not be empty ("us-east-1" for most S3-compatible servers)`}},
		{"s3 prefix from the root", func(c *Config) { s3(c); c.Blobs.S3Prefix = "/onboard/" },
			[]string{`blobs.s3_prefix "/onboard/" must not start with "/"`}},
		{"s3 key without its secret", func(c *Config) { s3(c); c.Blobs.S3SecretAccessKey = "" },
			[]string{`blobs.backend "s3" needs blobs.s3_access_key_id and blobs.s3_secret_access_key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`}},
		{"s3 settings with local are not checked", func(c *Config) { c.Blobs.S3Endpoint, c.Blobs.S3AccessKeyID = "nope", "AKID" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			tt.change(&cfg)
			err := cfg.Validate()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("a problem shows the password: %v", err)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyEnv: the environment overrides the database URL and the S3
// keys; an empty variable overrides nothing.
func TestApplyEnv(t *testing.T) {
	cfg := Default()
	cfg.Storage.PostgresURL = "postgres://file@db/onboard"
	cfg.Blobs.S3AccessKeyID, cfg.Blobs.S3SecretAccessKey = "file-key", "file-secret"
	env := map[string]string{
		"ONBOARD_POSTGRES_URL":  "postgres://env@db/onboard",
		"AWS_ACCESS_KEY_ID":     "env-key",
		"AWS_SECRET_ACCESS_KEY": "",
	}
	cfg.ApplyEnv(func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	got := []string{cfg.Storage.PostgresURL, cfg.Blobs.S3AccessKeyID, cfg.Blobs.S3SecretAccessKey}
	want := []string{"postgres://env@db/onboard", "env-key", "file-secret"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after ApplyEnv (-want +got):\n%s", diff)
	}
}

// TestConfigMaskedBackends: config check shows the database URL without
// its passwords (sslmode and the rest stay), and no S3 secret.
func TestConfigMaskedBackends(t *testing.T) {
	tests := []struct{ url, want string }{
		{"postgres://onboard:pw@db.example:5432/onboard?sslmode=verify-full",
			"postgres://onboard:********@db.example:5432/onboard?sslmode=verify-full"},
		{"postgres://db.example/onboard", "postgres://db.example/onboard"},
		{"postgres://onboard@db.example/onboard?password=pw&sslmode=require&sslpassword=kp",
			"postgres://onboard@db.example/onboard?password=********&sslmode=require&sslpassword=********"},
		{"postgres://onboard@db.example/onboard?pass%77ord=pw", "postgres://onboard@db.example/onboard?pass%77ord=********"},
		{"postgres://onboard@db.example/onboard#pw", "postgres://onboard@db.example/onboard#********"},
		{"postgres://onboard:p w@db.example", MaskedText},
	}
	for _, tt := range tests {
		cfg := Default()
		cfg.Storage.PostgresURL = tt.url
		if got := cfg.Masked().Storage.PostgresURL; got != tt.want {
			t.Errorf("masked postgres_url %q = %q, want %q", tt.url, got, tt.want)
		}
	}
	cfg := Default()
	cfg.Blobs.S3AccessKeyID, cfg.Blobs.S3SecretAccessKey = "AKID", "secret"
	got := cfg.Masked().Blobs
	if diff := cmp.Diff([]string{"AKID", MaskedText}, []string{got.S3AccessKeyID, got.S3SecretAccessKey}); diff != "" {
		t.Errorf("masked S3 keys (-want +got):\n%s", diff)
	}
}
