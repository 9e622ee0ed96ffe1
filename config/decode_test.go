package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLoadConfigDecodesOntoTheDefaults checks what decoding the file onto
// the defaults must keep: keys the file leaves out keep their defaults, and
// the file's lists replace the default ones whole, the file's organizations
// taking nothing from the sandbox organization.
func TestLoadConfigDecodesOntoTheDefaults(t *testing.T) {
	cfg, _, err := loadConfigText(t, `
listen = "127.0.0.1:9090"
[registry]
timeout = "3s"
[webhooks]
retry_schedule = ["1s", "2s"]
[[organizations]]
id = "acme"
  [[organizations.configs]]
  id = "acme"
  form = "standard"
  countries = ["GB"]
`)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	want := Default()
	want.Listen = "127.0.0.1:9090"
	want.Registry.Timeout = Duration{3 * time.Second}
	want.Webhooks.RetrySchedule = []Duration{{time.Second}, {2 * time.Second}}
	want.Organizations = []Organization{{
		ID:      "acme",
		Configs: []AppConfig{{ID: "acme", Form: "standard", Countries: []string{"GB"}}},
	}}
	if diff := cmp.Diff(want, cfg, ignoreConfigDir); diff != "" {
		t.Errorf("LoadConfig (-want +got):\n%s", diff)
	}
}
