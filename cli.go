package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// CLI is onboard's command line (DESIGN §4).
type CLI struct {
	Config  string `help:"Configuration file (TOML). Without one, the embedded sandbox defaults are used." env:"ONBOARD_CONFIG" placeholder:"FILE"`
	DataDir string `help:"Data directory; overrides data_dir of the configuration." placeholder:"DIR"`

	Serve    ServeCmd    `cmd:"" help:"Run the API server."`
	Keys     KeysCmd     `cmd:"" help:"Create, list and revoke API keys."`
	Apps     AppsCmd     `cmd:"" help:"Export applications and verify their activity logs."`
	Docs     DocsCmd     `cmd:"" help:"Force or skip an application's document requirement."`
	Webhooks WebhooksCmd `cmd:"" help:"Register webhook endpoints, see their deliveries, redeliver events."`
	Registry RegistryCmd `cmd:"" help:"Work with the company registries."`
	Backup   BackupCmd   `cmd:"" help:"Write a backup archive of the data directory, also while serve runs."`
	Restore  RestoreCmd  `cmd:"" help:"Restore a backup archive into a new, empty data directory."`
	Blobs    BlobsCmd    `cmd:"" help:"Remove stored files that no record refers to."`
	Bench    BenchCmd    `cmd:"" help:"Measure the server's throughput and latency over loopback against Badger's ceilings."`
	Version  VersionCmd  `cmd:"" help:"Print the version."`
}

// env is what every command's Run receives: the command line's globals and
// where to write.
type env struct {
	cli    *CLI
	stdout io.Writer
	stderr io.Writer
}

// config is how every command gets its configuration: the file (or the
// sandbox defaults), then the command line's overrides, --data-dir first
// and then the command's own flags through override (nil when it has none),
// validated as a whole.
func (e *env) config(override func(*Config)) (Config, error) {
	cfg, err := LoadConfig(e.cli.Config)
	if err != nil {
		return Config{}, err
	}
	if e.cli.DataDir != "" {
		cfg.DataDir = e.cli.DataDir
	}
	if override != nil {
		override(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, nil
}

// runCLI parses args and runs the command they name; see run for the exit
// codes.
func runCLI(args []string, stdout, stderr io.Writer) int {
	var cli CLI
	exit := -1
	parser, err := kong.New(&cli,
		kong.Name("onboard"),
		kong.Description("Self-hosted Partner Onboarding API (KYB)."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
	)
	if err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
		return 1
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit // --help
	}
	if err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
		// The usage of the command that was being parsed goes to stderr
		// with the error, so that stdout stays for a command's output.
		var perr *kong.ParseError
		if errors.As(err, &perr) && perr.Context != nil {
			parser.Stdout = stderr
			fmt.Fprintln(stderr)
			_ = perr.Context.PrintUsage(true)
		}
		return 2
	}
	if err := kctx.Run(&env{cli: &cli, stdout: stdout, stderr: stderr}); err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
		return 1
	}
	return 0
}
