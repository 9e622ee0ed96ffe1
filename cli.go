package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"

	"onboard/blobs"
	"onboard/notify"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/registry"
	"onboard/server"
	"onboard/storage"
)

// CLI is onboard's command line (DESIGN §4).
type CLI struct {
	Config  string `help:"Configuration file (TOML). Without one, the embedded sandbox defaults are used." env:"ONBOARD_CONFIG" placeholder:"FILE"`
	DataDir string `help:"Data directory; overrides data_dir of the configuration." placeholder:"DIR"`

	Serve    ServeCmd    `cmd:"" help:"Run the API server."`
	Keys     KeysCmd     `cmd:"" help:"Create, list and revoke API keys."`
	Docs     DocsCmd     `cmd:"" help:"Force or skip an application's document requirement."`
	Registry RegistryCmd `cmd:"" help:"Work with the company registries."`
	Version  VersionCmd  `cmd:"" help:"Print the version."`
}

// env is what every command's Run receives: the command line's globals and
// where to write.
type env struct {
	cli    *CLI
	stdout io.Writer
	stderr io.Writer
}

// config loads and validates the configuration with the global overrides.
func (e *env) config() (Config, error) {
	cfg, err := LoadConfig(e.cli.Config)
	if err != nil {
		return Config{}, err
	}
	if e.cli.DataDir != "" {
		cfg.DataDir = e.cli.DataDir
	}
	return cfg, nil
}

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

// ServeCmd runs the API server.
type ServeCmd struct {
	Listen    string `help:"Address to listen on; overrides listen." placeholder:"ADDR"`
	PublicURL string `help:"Base URL of applicant links; overrides public_url." name:"public-url" placeholder:"URL"`
}

// Run serves until SIGINT or SIGTERM, then lets in-flight requests finish.
func (c *ServeCmd) Run(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if c.Listen != "" {
		cfg.Listen = c.Listen
	}
	if c.PublicURL != "" {
		cfg.PublicURL = c.PublicURL
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, a second one ends the process at once
		// instead of waiting for the graceful shutdown.
		<-ctx.Done()
		stop()
	}()

	a, err := openApp(cfg, log)
	if err != nil {
		return err
	}
	defer a.close(e.stderr)

	// Listen before creating the sandbox key, so that a start that fails
	// (port taken) does not use up the one-time key.
	api, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	admin, err := listenAdmin(adminSocket(cfg))
	if err != nil {
		api.Close()
		return err
	}
	if cfg.Environment == "sandbox" {
		if err := printBootstrapKey(context.WithoutCancel(ctx), a.svc, cfg, e.stdout); err != nil {
			api.Close()
			admin.Close()
			return err
		}
	}
	srv := server.New(server.Options{
		Service: a.svc, Responses: a.store, Sessions: a.sessions, Logger: log,
		RatePerSecond: cfg.Limits.RatePerSecond, Burst: cfg.Limits.Burst, MaxJSONBytes: cfg.Limits.MaxJSONBytes,
		PublicURL: cfg.PublicURL,
	})
	log.Info("onboard serving", "environment", cfg.Environment, "listen", api.Addr().String(),
		"public_url", cfg.PublicURL, "data_dir", cfg.DataDir, "registry", cfg.Registry.Mode)
	// The registry documents job runs until the server has stopped; an
	// application it was fetching stays pending and resumes on the next start.
	jobCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	var jobs sync.WaitGroup
	jobs.Go(func() {
		if err := a.svc.RunRegistryDocuments(jobCtx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("registry documents job stopped", "err", err)
		}
	})
	err = srv.Run(ctx, api, admin, 30*time.Second)
	stopJobs()
	jobs.Wait()
	log.Info("onboard stopped")
	return err
}

// printBootstrapKey creates the first sandbox key, for organization
// "default" (or the first organization when there is none by that name),
// and prints it once: when the data directory holds no API key yet, so a
// directory first opened by `keys list`, or by a start that failed before
// this point, still gets its key.
func printBootstrapKey(ctx context.Context, svc *onboarding.Service, cfg Config, out io.Writer) error {
	existing, err := svc.APIKeys(ctx, "")
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return nil
	}
	org := cfg.Organizations[0].ID
	for _, o := range cfg.Organizations {
		if o.ID == "default" {
			org = o.ID
		}
	}
	key, _, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: org, Name: "sandbox bootstrap key"})
	if err != nil {
		return fmt.Errorf("create the sandbox key: %w", err)
	}
	fmt.Fprintf(out, "Sandbox API key for organization %q, all scopes (shown once, store it now):\n%s\n", org, key)
	return nil
}

func adminSocket(cfg Config) string { return filepath.Join(cfg.DataDir, "admin.sock") }

// listenAdmin listens on the admin socket, owner-only. Only the process that
// holds the data directory's lock gets here, so a socket file left by a
// crashed server is stale and safe to remove.
func listenAdmin(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale admin socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket %s: %w", path, err)
	}
	return ln, nil
}

// app is the wired application: store, registry, mailer and service.
type app struct {
	store    *storage.Store
	svc      *onboarding.Service
	sessions *server.SignedSessions // the applicant form's sessions, under the session key
}

func (a *app) close(stderr io.Writer) {
	if err := a.store.Close(); err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
	}
}

// openApp opens the data directory and builds the Service.
func openApp(cfg Config, log *slog.Logger) (*app, error) {
	orgs, err := cfg.domainOrganizations()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	store, err := storage.Open(filepath.Join(cfg.DataDir, "badger"), storage.Options{Logger: log})
	if errors.Is(err, storage.ErrLocked) {
		return nil, fmt.Errorf("data directory %s is in use by another onboard process", cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	reg, err := newRegistry(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	mailer, err := newMailer(cfg, log)
	if err != nil {
		store.Close()
		return nil, err
	}
	files, signer, err := openBlobs(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	sessionKey, err := blobs.LoadOrCreateKey(filepath.Join(cfg.DataDir, "secrets", "session.key"))
	if err != nil {
		store.Close()
		return nil, err
	}
	sessions, err := server.NewSignedSessions(sessionKey)
	if err != nil {
		store.Close()
		return nil, err
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Registry: reg, Mailer: mailer, Organizations: orgs,
		PublicURL: cfg.PublicURL, Logger: log, Blobs: files, Links: signer,
		SessionKey: sessionKey, MaxUploadBytes: cfg.Limits.MaxUploadBytes,
		PageCounter: pdf.PageCount,
	})
	if err != nil {
		store.Close()
		return nil, err
	}
	return &app{store: store, svc: svc, sessions: sessions}, nil
}

// openBlobs opens the data directory's blob store and the signer of its
// download links, with the configured key or the one generated into
// secrets/ on the first start.
func openBlobs(cfg Config) (*blobs.Store, *blobs.Signer, error) {
	files, err := blobs.Open(filepath.Join(cfg.DataDir, "blobs"))
	if err != nil {
		return nil, nil, err
	}
	var key []byte
	if cfg.Blobs.SigningKey != "" {
		key, err = blobs.DecodeKey(cfg.Blobs.SigningKey)
	} else {
		key, err = blobs.LoadOrCreateKey(filepath.Join(cfg.DataDir, "secrets", "download-signing.key"))
	}
	if err != nil {
		return nil, nil, err
	}
	signer, err := blobs.NewSigner(key, nil)
	if err != nil {
		return nil, nil, err
	}
	return files, signer, nil
}

func newRegistry(cfg Config) (*registry.Registry, error) {
	fixtures, err := fs.Sub(registryFixtures, "testdata/registry")
	if err != nil {
		return nil, err
	}
	return registry.New(registry.Options{
		Mode:                  cfg.Registry.Mode,
		Fixtures:              fixtures,
		CompaniesHouseAPIKey:  cfg.Registry.CompaniesHouseAPIKey,
		CROEmail:              cfg.Registry.CROEmail,
		CROAPIKey:             cfg.Registry.CROAPIKey,
		Timeout:               cfg.Registry.Timeout.Duration,
		CompaniesHouseBaseURL: cfg.Registry.CompaniesHouseURL,
		CROBaseURL:            cfg.Registry.CROURL,
	})
}

// newMailer picks the invite transport: SMTP when configured, the sandbox
// outbox in sandbox, and none in production without SMTP (create then
// answers with a warning).
func newMailer(cfg Config, log *slog.Logger) (onboarding.Mailer, error) {
	if cfg.Mail.SMTPURL != "" {
		m, err := notify.NewSMTP(cfg.Mail.SMTPURL, cfg.Mail.From, notify.SMTPOptions{})
		if err != nil {
			return nil, fmt.Errorf("mail: %w", err)
		}
		return m, nil
	}
	if cfg.Environment == "sandbox" {
		m, err := notify.NewOutbox(filepath.Join(cfg.DataDir, "outbox", "mail"), cfg.Mail.From, log, nil)
		if err != nil {
			return nil, fmt.Errorf("mail outbox: %w", err)
		}
		return m, nil
	}
	log.Warn("no mail.smtp_url in production: invite emails are not sent")
	return nil, nil
}

// KeysCmd groups the API key commands.
type KeysCmd struct {
	Create KeysCreateCmd `cmd:"" help:"Create an API key and print it once."`
	List   KeysListCmd   `cmd:"" help:"List API keys."`
	Revoke KeysRevokeCmd `cmd:"" help:"Revoke an API key; it stops working at once."`
}

// admin is what the operator's commands (keys, docs) need, from the
// running server's admin socket or from the store opened directly.
type admin interface {
	CreateKey(context.Context, server.AdminCreateKey) (server.AdminCreatedKey, error)
	ListKeys(context.Context, string) ([]server.AdminKey, error)
	RevokeKey(context.Context, string) (server.AdminKey, error)
	OverrideDocument(context.Context, server.AdminDocumentOverride) (server.AdminDocument, error)
}

// localAdmin runs the admin commands on a store opened by this process.
type localAdmin struct {
	server.KeyAdmin
	server.DocAdmin
}

// withAdmin runs fn against the running server when one holds the data
// directory, else against the store opened directly; both run the same
// Service code.
func (e *env) withAdmin(fn func(context.Context, admin) error) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	ctx := context.Background()
	if client, err := server.DialAdmin(ctx, adminSocket(cfg)); err == nil {
		return fn(ctx, client)
	}
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer a.close(e.stderr)
	return fn(ctx, localAdmin{server.KeyAdmin{Service: a.svc}, server.DocAdmin{Service: a.svc}})
}

// KeysCreateCmd creates an API key.
type KeysCreateCmd struct {
	Org       string        `help:"Organization the key belongs to." required:""`
	Name      string        `help:"A name that says who uses the key." required:""`
	Scope     []string      `help:"Scope to grant (repeatable): applications:create, applications:read, applications:write, rfi:create. Default: all."`
	ExpiresIn time.Duration `help:"Lifetime, such as 720h. Default: no expiry." name:"expires-in"`
}

// Run prints the key alone on stdout and its details on stderr.
func (c *KeysCreateCmd) Run(e *env) error {
	if c.ExpiresIn < 0 {
		return fmt.Errorf("--expires-in must be positive")
	}
	req := server.AdminCreateKey{OrgID: c.Org, Name: c.Name, Scopes: c.Scope}
	if c.ExpiresIn > 0 {
		req.ExpiresIn = c.ExpiresIn.String()
	}
	return e.withAdmin(func(ctx context.Context, a admin) error {
		created, err := a.CreateKey(ctx, req)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, created.Key)
		k := created.APIKey
		expiry := "never"
		if k.ExpiresAt != nil {
			expiry = k.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(e.stderr, "Created API key %s for organization %q (name %q, scopes %s, expires %s).\nThe key above is shown only once: store it now.\n",
			k.ClientID, k.OrgID, k.Name, strings.Join(k.Scopes, " "), expiry)
		return nil
	})
}

// KeysListCmd lists API keys.
type KeysListCmd struct {
	Org  string `help:"Only this organization's keys."`
	JSON bool   `help:"Print JSON instead of a table." name:"json"`
}

// Run prints one line per key.
func (c *KeysListCmd) Run(e *env) error {
	return e.withAdmin(func(ctx context.Context, a admin) error {
		keys, err := a.ListKeys(ctx, c.Org)
		if err != nil {
			return err
		}
		if c.JSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(keys)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tORG\tNAME\tSCOPES\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ClientID, k.OrgID, k.Name, strings.Join(k.Scopes, ","),
				when(&k.CreatedAt), when(k.LastUsedAt), when(k.ExpiresAt), when(k.RevokedAt))
		}
		return tw.Flush()
	})
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// KeysRevokeCmd revokes an API key.
type KeysRevokeCmd struct {
	KeyID string `arg:"" name:"KEY_ID" help:"The key's client id, as keys list shows it."`
}

// Run revokes the key; a running server refuses it from the next request.
func (c *KeysRevokeCmd) Run(e *env) error {
	return e.withAdmin(func(ctx context.Context, a admin) error {
		k, err := a.RevokeKey(ctx, c.KeyID)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Revoked API key %s (organization %q, name %q).\n", k.ClientID, k.OrgID, k.Name)
		return nil
	})
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the module version, the VCS revision when known, and the Go version.
func (VersionCmd) Run(e *env) error {
	version, revision := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				revision = " " + s.Value[:12]
			}
		}
	}
	fmt.Fprintf(e.stdout, "onboard %s%s %s %s/%s\n", version, revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
