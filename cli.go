package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/alecthomas/kong"

	"onboard/config"
)

// CLI is onboard's command line (docs/cli.md).
type CLI struct {
	Config  string           `help:"Configuration file (TOML). Without one, the embedded sandbox defaults are used." env:"ONBOARD_CONFIG" placeholder:"FILE"`
	DataDir string           `help:"Data directory; overrides data_dir of the configuration. Every command but serve and restore needs it to exist, unless the records and files are in PostgreSQL and S3." placeholder:"DIR"`
	Version kong.VersionFlag `help:"Print the version and exit."`

	Serve      ServeCmd      `cmd:"" help:"Run the API server."`
	Keys       KeysCmd       `cmd:"" help:"Create, list and revoke API keys."`
	Apps       AppsCmd       `cmd:"" help:"Export applications and verify their activity logs."`
	Docs       DocsCmd       `cmd:"" help:"Force or skip an application's document requirement."`
	Webhooks   WebhooksCmd   `cmd:"" help:"Register webhook endpoints, see their deliveries, redeliver events."`
	Registry   RegistryCmd   `cmd:"" help:"Work with the company registries."`
	Backup     BackupCmd     `cmd:"" help:"Write a backup archive of the data directory, also while serve runs."`
	Restore    RestoreCmd    `cmd:"" help:"Restore a backup archive into a new, empty data directory."`
	Blobs      BlobsCmd      `cmd:"" help:"Remove stored files that no record refers to."`
	Bench      BenchCmd      `cmd:"" help:"Measure the server's throughput and latency over loopback against Badger's ceilings."`
	ConfigCmd  ConfigCmd     `cmd:"" name:"config" help:"Check a configuration file."`
	VersionCmd VersionCmd    `cmd:"" name:"version" help:"Print the version."`
	Help       HelpCmd       `cmd:"" help:"Show help for onboard or one of its commands."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script (bash, zsh or fish)."`
}

// env is what every command's Run receives: the command line's globals and
// where to write.
type env struct {
	cli    *CLI
	stdout io.Writer
	stderr io.Writer
}

// usageError is a command line that parsed but makes no sense: it exits 2,
// as a parse error does.
type usageError struct{ error }

// loadConfig is how every command gets its configuration: the file (or the
// sandbox defaults), then the environment's overrides (ONBOARD_POSTGRES_URL
// and the AWS keys), then the command line's, --data-dir first and then the
// command's own flags through override (nil when it has none), validated as
// a whole. An empty public_url stays empty: see config.
func (e *env) loadConfig(override func(*config.Config)) (config.Config, error) {
	cfg, err := config.Load(e.cli.Config)
	if err != nil {
		return config.Config{}, err
	}
	cfg.ApplyEnv(os.LookupEnv)
	if e.cli.DataDir != "" {
		cfg.DataDir = e.cli.DataDir
	}
	if override != nil {
		override(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		if e.cli.Config != "" {
			return config.Config{}, fmt.Errorf("invalid configuration %s:\n%w", e.cli.Config, err)
		}
		return config.Config{}, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return cfg, nil
}

// config is loadConfig with public_url resolved: when the configuration
// leaves it empty, links follow the listen address.
func (e *env) config(override func(*config.Config)) (config.Config, error) {
	cfg, err := e.loadConfig(override)
	if err != nil {
		return config.Config{}, err
	}
	cfg.PublicURL = cfg.LinkBase(cfg.Listen)
	return cfg, nil
}

// existingConfig is config for the commands that work on a data directory
// that must already exist: every one but serve (which creates it on its
// first start) and restore (which creates it). A mistyped --data-dir or
// data_dir is refused instead of silently starting a new, empty store.
// With PostgreSQL and S3 the data directory holds nothing a command reads
// (the records and files are shared), so it need not exist.
func (e *env) existingConfig() (config.Config, error) {
	cfg, err := e.config(nil)
	if err != nil {
		return config.Config{}, err
	}
	if cfg.Storage.Backend == config.StoragePostgres && cfg.Blobs.Backend == config.BlobsS3 {
		return cfg, nil
	}
	fi, err := os.Stat(cfg.DataDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return config.Config{}, fmt.Errorf("data directory %s does not exist (check --data-dir or data_dir; onboard serve creates it on its first start)", cfg.DataDir)
	case err != nil:
		return config.Config{}, fmt.Errorf("data directory: %w", err)
	case !fi.IsDir():
		return config.Config{}, fmt.Errorf("data directory %s is not a directory", cfg.DataDir)
	}
	// What a data directory that serve used holds: the database, or with
	// PostgreSQL the local blob store.
	marker, what := "badger", "no database (badger/)"
	if cfg.Storage.Backend == config.StoragePostgres {
		marker, what = "blobs", "no stored files (blobs/)"
	}
	if foreign, err := foreignDirectory(cfg.DataDir, marker); err != nil {
		return config.Config{}, fmt.Errorf("data directory: %w", err)
	} else if foreign {
		return config.Config{}, fmt.Errorf("data directory %s is not onboard's: it holds files but %s; check --data-dir or data_dir", cfg.DataDir, what)
	}
	return cfg, nil
}

// foreignDirectory reports whether dir holds something but not marker (the
// database): a mistyped --data-dir naming some other directory, which a
// command would otherwise fill with a new, empty store. An empty directory
// is a data directory yet to be used.
func foreignDirectory(dir, marker string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Name() == marker {
			return false, nil
		}
	}
	return len(entries) > 0, nil
}

// newParser builds the command line's parser on cli, writing to stdout and
// stderr and reporting an exit (--help, --version) through exit.
func newParser(cli *CLI, stdout, stderr io.Writer, exit func(int)) (*kong.Kong, error) {
	return kong.New(cli,
		kong.Name("onboard"),
		kong.Description("Self-hosted Partner Onboarding API (KYB)."),
		kong.Writers(stdout, stderr),
		kong.Exit(exit),
		kong.Vars{"version": versionLine(), "scopes": scopeHelp()},
	)
}

// runCLI parses args and runs the command they name; see run for the exit
// codes.
func runCLI(args []string, stdout, stderr io.Writer) int {
	var cli CLI
	exit := -1
	parser, err := newParser(&cli, stdout, stderr, func(code int) {
		if exit < 0 {
			exit = code
		}
	})
	if err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
		return 1
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit // --help, --version
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
	out := &checkedWriter{w: stdout}
	if err := kctx.Run(&env{cli: &cli, stdout: out, stderr: stderr}); err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
		var uerr usageError
		if errors.As(err, &uerr) {
			return 2
		}
		return 1
	}
	if out.err != nil {
		fmt.Fprintln(stderr, "onboard: write stdout:", out.err)
		return 1
	}
	return 0
}

// checkedWriter is a command's stdout: it keeps the first write error, so
// that a command whose output was lost (a full disk, a closed pipe) fails
// even where it did not look at the error itself.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// checkIDArg refuses, as a usage error, an id argument that cannot name
// anything: empty, or with control characters, which error messages would
// echo to the terminal (an escape sequence). It runs before either way a
// command runs (through the running server, or on the store), so both
// give the same answer. It is called from Run: a kong Validate hook runs
// before kong reports a missing argument, and would say "empty" instead.
func checkIDArg(name, id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return usageError{fmt.Errorf("%s must not be empty", name)}
	case strings.ContainsFunc(id, unicode.IsControl):
		return usageError{fmt.Errorf("%s must not contain control characters", name)}
	}
	return nil
}

// printSecret writes a secret shown only once alone on a line of stdout,
// and returns the write's error: the caller undoes what made the secret,
// since nobody has it.
func (e *env) printSecret(secret string) error {
	_, err := fmt.Fprintln(e.stdout, secret)
	return err
}
