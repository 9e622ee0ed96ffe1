package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMetricsConfig loads and validates the [metrics] table.
func TestMetricsConfig(t *testing.T) {
	cfg, _, err := loadConfigText(t, "[metrics]\nlisten = \"127.0.0.1:9090\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Metrics{Listen: "127.0.0.1:9090"}, cfg.Metrics); diff != "" {
		t.Errorf("metrics table (-want +got):\n%s", diff)
	}
	if cfg, _, err := loadConfigText(t, "[metrics]\npath = \"/m\"\n"); err != nil || errText(cfg.Validate()) != "unknown key metrics.path (config.example.toml lists every key)" {
		t.Errorf("unknown key: LoadConfig error %v, Validate %v", err, cfg.Validate())
	}

	tests := []struct {
		name, listen, apiListen string
		want                    []string
	}{
		{"default: on the API listener", "", "127.0.0.1:8080", nil},
		{"own address", "127.0.0.1:9090", "127.0.0.1:8080", nil},
		{"every interface", ":9090", "127.0.0.1:8080", nil},
		{"free port beside a free port", "127.0.0.1:0", "127.0.0.1:0", nil},
		{"not host:port", "9090", "127.0.0.1:8080", []string{`metrics.listen "9090" is not host:port`}},
		{"the API's address", "127.0.0.1:8080", "127.0.0.1:8080",
			[]string{`metrics.listen "127.0.0.1:8080" is the API's listen address: leave it empty to serve /metrics there`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			cfg.Listen, cfg.Metrics.Listen = tt.apiListen, tt.listen
			var got []string
			if err := cfg.Validate(); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate problems (-want +got):\n%s", diff)
			}
		})
	}
}
