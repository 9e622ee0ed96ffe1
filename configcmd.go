package main

import (
	"context"
	"fmt"

	"github.com/BurntSushi/toml"

	"onboard/config"
)

// ConfigCmd groups the configuration commands.
type ConfigCmd struct {
	Check ConfigCheckCmd `cmd:"" help:"Validate the configuration (--config FILE, or the built-in sandbox defaults) and print the effective settings, secrets masked."`
}

// ConfigCheckCmd validates a configuration file.
type ConfigCheckCmd struct{}

// Run prints the effective configuration as TOML on stdout and a verdict on
// stderr; an invalid one fails listing every problem, and one whose
// PostgreSQL database or S3 bucket cannot be used fails saying why.
func (c *ConfigCheckCmd) Run(e *env) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if err := checkSharedStores(ctx, cfg, e.stderr); err != nil {
		return err
	}
	source := "The built-in sandbox configuration"
	if e.cli.Config != "" {
		source = "Configuration " + e.cli.Config
	}
	fmt.Fprintf(e.stdout, "# Effective configuration: the defaults, then the file, then the environment, then --data-dir.\n# Secrets are shown as %q.\n", config.MaskedText)
	if err := toml.NewEncoder(e.stdout).Encode(cfg.Masked()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s is valid.\n", source)
	return nil
}
