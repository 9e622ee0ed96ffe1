package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"onboard/admin"
	"onboard/config"
	"onboard/metrics"
	"onboard/notify"
	"onboard/onboarding"
	"onboard/server"
	"onboard/server/form"
	"onboard/server/web"
)

// ServeCmd runs the API server.
type ServeCmd struct {
	Listen    string `help:"Address to listen on; overrides listen." placeholder:"ADDR"`
	PublicURL string `help:"Base URL of applicant links; overrides public_url." name:"public-url" placeholder:"URL"`
	LogFormat string `help:"Format of the log lines on stderr: text or json." name:"log-format" enum:"text,json" default:"text"`
}

// override applies the serve flags to the configuration.
func (c *ServeCmd) override(cfg *config.Config) {
	if c.Listen != "" {
		cfg.Listen = c.Listen
	}
	if c.PublicURL != "" {
		cfg.PublicURL = c.PublicURL
	}
}

// Run serves until SIGINT or SIGTERM, then lets in-flight requests finish
// and closes the store; a store that cannot be flushed in time
// (storage.Store.Close) makes it fail, saying so.
func (c *ServeCmd) Run(e *env) (err error) {
	cfg, err := e.loadConfig(c.override)
	if err != nil {
		return err
	}
	log := newLogger(c.LogFormat, e.stderr)
	setMemoryLimit(log)
	ctx, stop := notifyShutdown()
	defer stop()

	// A shared backend (PostgreSQL, S3) is opened before listening, so that
	// a database or bucket that cannot be used stops the start before
	// anything is served. The embedded one is opened after: a start that
	// fails to listen (port taken) touches no data directory.
	openCtx, cancelOpen := context.WithTimeout(ctx, openTimeout)
	defer cancelOpen()
	var st *stores
	if sharedBackend(cfg) {
		if st, err = openStores(openCtx, cfg, log); err != nil {
			return err
		}
		// Records in PostgreSQL: the data directory's own lock stands in
		// for the embedded store's (lockDataDir).
		if st.badger == nil {
			release, err := lockDataDir(cfg.DataDir)
			if err != nil {
				st.store.Close()
				return err
			}
			defer release()
		}
	}
	// Without public_url, links follow the address actually listened on
	// (listen's port may be 0): the Service is built after listening.
	api, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if st != nil {
			st.store.Close()
		}
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	cfg.PublicURL = cfg.LinkBase(listenedAt(cfg.Listen, api.Addr()))
	if st == nil {
		if st, err = openStores(openCtx, cfg, log); err != nil {
			api.Close()
			return err
		}
	}

	metrics := metrics.New()
	a, err := newApp(openCtx, cfg, st, log, metrics)
	if err != nil {
		api.Close()
		return err
	}
	cancelOpen()
	defer func() {
		if cerr := a.store.Close(); cerr != nil {
			log.Error("onboard stopped without closing the database", "err", cerr)
			err = errors.Join(err, cerr)
		}
	}()
	metrics.WatchStore(a.store)
	if a.badger != nil {
		metrics.WatchSpace(a.badger)
	}

	// Listen before creating the sandbox key, so that a start that fails
	// (metrics port taken) does not use up the one-time key. The admin
	// socket comes after the store, or on PostgreSQL after the data
	// directory's lock: only the holder of the lock may replace a stale
	// socket.
	admin, err := listenAdmin(adminSocket(cfg))
	if err != nil {
		api.Close()
		return err
	}
	metricsLn, err := listenMetrics(cfg)
	if err != nil {
		api.Close()
		admin.Close()
		return err
	}
	if cfg.Environment == "sandbox" {
		if err := printBootstrapKey(context.WithoutCancel(ctx), a.svc, cfg, e.stdout); err != nil {
			api.Close()
			admin.Close()
			if metricsLn != nil {
				metricsLn.Close()
			}
			return err
		}
	}
	workers := newJobs(log)
	srv := newAPIServer(cfg, a, log, metrics, metricsLn, workers)
	log.Info("onboard serving", "environment", cfg.Environment, "listen", api.Addr().String(),
		"public_url", cfg.PublicURL, "data_dir", cfg.DataDir, "storage", cfg.Storage.Backend, "blobs", cfg.Blobs.Backend,
		"registry", cfg.Registry.Mode, metricsAddr(metricsLn))
	err = serveWithJobs(ctx, srv, a, workers, api, admin, cfg.Limits.MaxMappedBytes)
	log.Info("onboard stopped")
	return err
}

// newAPIServer is the server serve runs: a's API as cfg configures it, its
// metrics on metrics (served on metricsLn, or on the API's listener when
// nil) and the readiness of the store and of the background jobs.
func newAPIServer(cfg config.Config, a *app, log *slog.Logger, metrics *metrics.Collectors, metricsLn net.Listener, workers *jobs) *server.Server {
	proxies, _ := cfg.ProxyPrefixes() // valid: Validate checked them
	readiness := []server.Probe{{Name: "store", Check: a.store.Ping}}
	var writes server.WriteGate
	if a.badger != nil {
		// The embedded store's disk: PostgreSQL and S3 watch their own.
		readiness = append(readiness, server.Probe{Name: "disk", Check: func(context.Context) error { return a.badger.Writable() }})
		writes = a.badger
	}
	readiness = append(readiness,
		workers.probe(jobRegistryDocuments), workers.probe(jobWebhookDelivery), workers.probe(jobRFIExpiry), workers.probe(jobBlobSweep))
	opts := server.Options{
		TrustedProxies: proxies,
		Service:        a.svc, Responses: a.store, Logger: log,
		Pages: form.New(form.Options{Service: a.svc, Sessions: a.sessions, SessionTimeout: cfg.Limits.SessionTimeout.Duration,
			Logger: log, PublicURL: cfg.PublicURL}),
		RatePerSecond: cfg.Limits.RatePerSecond, Burst: cfg.Limits.Burst, MaxJSONBytes: cfg.Limits.MaxJSONBytes,
		Sandbox: cfg.Environment == "sandbox",
		Metrics: metrics.Registry(), MetricsListener: metricsLn, Readiness: readiness,
		Writes: writes,
	}
	adminOpts := admin.Options{Service: a.svc, Answer: web.ErrorAnswer, Logger: log}
	if a.backup != nil {
		adminOpts.Backup = a.backup
	}
	opts.Admin = admin.NewHandler(adminOpts)
	return server.New(opts)
}

// listenedAt is the address links follow without public_url: the host of
// listen as configured (so ":8080" stays unspecified rather than "[::]"),
// the port actually listened on.
func listenedAt(listen string, addr net.Addr) string {
	host, _, err := net.SplitHostPort(listen)
	_, port, err2 := net.SplitHostPort(addr.String())
	if err != nil || err2 != nil {
		return addr.String()
	}
	return net.JoinHostPort(host, port)
}

// serveWithJobs runs the server until ctx ends, with the background jobs
// beside it: registry documents, webhook delivery, RFI expiry and the
// orphan blob sweep, each started (and so ready) before the server serves. The jobs
// run until the server has stopped. An application the registry job was
// fetching stays pending and resumes on the next start; webhook attempts
// in flight finish (each within the webhook timeout), and deliveries still
// queued are sent after the next start; RFI requests due while the server
// was down expire at the next start.
func serveWithJobs(ctx context.Context, srv *server.Server, a *app, j *jobs, api, admin net.Listener, maxMapped int64) error {
	svc := a.svc
	jobCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	j.start(jobRegistryDocuments, func() error { return svc.RunRegistryDocuments(jobCtx) })
	j.start(jobWebhookDelivery, func() error { return runDeliveries(jobCtx, a) })
	j.start(jobRFIExpiry, func() error { return svc.RunRFIExpiry(jobCtx) })
	j.start(jobBlobSweep, func() error { return a.sweeper.Run(jobCtx) })
	released := make(chan struct{})
	go func() {
		defer close(released)
		releaseMemory(jobCtx, svc, srv.ForgetRendered, a.badger, a.log, maxMapped)
	}()
	err := srv.Run(ctx, api, admin, 30*time.Second)
	stopJobs()
	j.wait()
	<-released
	return err
}

// runDeliveries runs the webhook delivery pool until ctx ends and, on a
// store shared with other instances, beside it the watch that wakes the
// pool when another instance queues deliveries.
func runDeliveries(ctx context.Context, a *app) error {
	if a.watchDeliveries == nil {
		return notify.RunWebhooks(ctx, a.svc)
	}
	ctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = a.watchDeliveries(ctx, a.svc.WakeDeliveries) // returns only when ctx ends
	}()
	err := notify.RunWebhooks(ctx, a.svc)
	cancel()
	<-watched
	return err
}

// newLogger returns serve's logger: lines on w from info level, as
// key=value text or (format "json") one JSON object each.
func newLogger(format string, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// printBootstrapKey creates the first sandbox key, for organization
// "default" (or the first organization when there is none by that name),
// and prints it once: when the data directory holds no API key yet, so a
// directory first opened by `keys list`, or by a start that failed before
// this point, still gets its key.
func printBootstrapKey(ctx context.Context, svc *onboarding.Service, cfg config.Config, out io.Writer) error {
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

// adminSocket is the path of the admin socket in the data directory.
func adminSocket(cfg config.Config) string { return filepath.Join(cfg.DataDir, "admin.sock") }

// maxSocketPath is the longest path of a Unix socket: sun_path holds 108
// bytes on Linux, its last the terminating NUL.
const maxSocketPath = 107

// listenAdmin listens on the admin socket, owner-only. Only the process that
// holds the data directory's lock gets here, so a socket file left by a
// crashed server is stale and safe to remove; anything else at the path is
// not removed.
func listenAdmin(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("admin socket %s: the path is %d bytes long, and a Unix socket's may have at most %d: use a data directory with a shorter path", path, len(path), maxSocketPath)
	}
	switch info, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("admin socket: %w", err)
	case info.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("admin socket %s: something that is not a socket is in its place; move it away", path)
	default:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale admin socket: %w", err)
		}
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

// defaultMemoryLimit is serve's soft memory limit (runtime/debug's) unless
// GOMEMLIMIT sets another: the garbage collector works harder as the heap
// nears it, so that a small server's memory stays near its live data
// instead of doubling with garbage between collections. It is a soft
// limit: a heap that needs more gets more. It is about twice the live heap
// of a server under sustained writes (two of Badger's memtables, its
// caches, the decoded applications), which keeps RSS down without
// costing throughput (docs/performance.md).
const defaultMemoryLimit = 128 << 20

// setMemoryLimit applies defaultMemoryLimit when GOMEMLIMIT is not set.
func setMemoryLimit(log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(defaultMemoryLimit)
	log.Debug("soft memory limit", "bytes", defaultMemoryLimit)
}
