package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"onboard/backup"
	"onboard/blobs"
	"onboard/config"
	"onboard/metrics"
	"onboard/notify"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/registry"
	"onboard/server"
	"onboard/server/form"
	"onboard/storage"
)

// app is the wired application: store, registry, mailer and service.
type app struct {
	store recordStore
	// badger is the embedded store when the configuration names it, for
	// what only it has (the free-space gate, memory release, compaction);
	// nil on PostgreSQL, where none of that is wired.
	badger   *storage.Store
	svc      *onboarding.Service
	sessions *form.SignedSessions  // the applicant form's sessions, under the session key
	backup   *backup.Maker         // onboard backup of this data directory
	sweeper  *onboarding.BlobSweep // removes blobs no record refers to
	// watchDeliveries calls wake whenever another instance sharing the
	// store queued webhook deliveries, until ctx ends; nil on a store no
	// other instance shares.
	watchDeliveries func(ctx context.Context, wake func()) error
	log             *slog.Logger // serve's, for the background work that has no request to answer
}

// recordStore is what main wires from the record store, on either
// backend: the Service's store, the API's saved responses, the blob
// sweep's references, readiness and shutdown.
type recordStore interface {
	onboarding.Store
	server.ResponseStore
	onboarding.BlobReferrer
	// Ping checks that the store answers: GET /readyz's "store" check.
	Ping(ctx context.Context) error
	// Close releases the store; an error means what was written may not
	// all be durable (the embedded store could not flush in time).
	Close() error
}

// close closes the store, reporting a failure on stderr.
func (a *app) close(stderr io.Writer) {
	if err := a.store.Close(); err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
	}
}

// openApp opens the configured stores and builds the Service.
func openApp(cfg config.Config, log *slog.Logger) (*app, error) { return openMeteredApp(cfg, log, nil) }

// openMeteredApp is openApp with the Service's transports counted on m
// (nil: not counted).
func openMeteredApp(cfg config.Config, log *slog.Logger, m *metrics.Collectors) (*app, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	st, err := openStores(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return newApp(ctx, cfg, st, log, m)
}

// stores are the record store and the blob store the configuration
// names, opened.
type stores struct {
	*records
	files *files
}

// openStores creates the data directory when missing (with PostgreSQL and
// S3 too: it keeps what is local to this instance) and opens the stores:
// an unreachable database or bucket fails here, saying what to fix.
func openStores(ctx context.Context, cfg config.Config, log *slog.Logger) (*stores, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	recs, err := openRecords(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	files, err := openBlobs(ctx, cfg, recs)
	if err != nil {
		recs.store.Close()
		return nil, err
	}
	return &stores{records: recs, files: files}, nil
}

// newApp builds the Service, and what serve runs beside it, on st; it
// closes st when it fails.
func newApp(ctx context.Context, cfg config.Config, st *stores, log *slog.Logger, m *metrics.Collectors) (*app, error) {
	a, err := buildApp(ctx, cfg, st, log, m)
	if err != nil {
		st.store.Close()
		return nil, err
	}
	return a, nil
}

// buildApp is newApp without the closing.
func buildApp(ctx context.Context, cfg config.Config, st *stores, log *slog.Logger, m *metrics.Collectors) (*app, error) {
	orgs, err := cfg.DomainOrganizations()
	if err != nil {
		return nil, err
	}
	sessionKey, err := st.secret(ctx, sessionKeyName)
	if err != nil {
		return nil, err
	}
	sessions, err := form.NewSignedSessions(sessionKey)
	if err != nil {
		return nil, err
	}
	svc, err := newService(cfg, st.store, orgs, sessionKey, st.files.guard, st.files.signer, log, m)
	if err != nil {
		return nil, err
	}
	a := &app{store: st.store, badger: st.badger, svc: svc, sessions: sessions, log: log, watchDeliveries: st.watchDeliveries,
		sweeper: &onboarding.BlobSweep{Records: st.store, Files: st.files.guard, Log: log, Now: time.Now}}
	if st.badger != nil {
		a.backup = backup.New(st.badger, st.files.guard, cfg.DataDir, version(), log)
	}
	return a, nil
}

// newService builds the Service on store with the configured registry,
// mailer and webhook transport, the blob store files and the signer of
// its links, and the session key of applicant access; m (may be nil)
// counts what the transports do.
func newService(cfg config.Config, store onboarding.Store, orgs []*onboarding.Organization, sessionKey []byte, files onboarding.Blobs, signer *blobs.Signer, log *slog.Logger, m *metrics.Collectors) (*onboarding.Service, error) {
	reg, err := newRegistry(cfg, m.RegistryCounter())
	if err != nil {
		return nil, err
	}
	mailer, err := newMailer(cfg, log)
	if err != nil {
		return nil, err
	}
	schedule := make([]time.Duration, len(cfg.Webhooks.RetrySchedule))
	for i, d := range cfg.Webhooks.RetrySchedule {
		schedule[i] = d.Duration
	}
	return onboarding.New(onboarding.Options{
		Store: store, Registry: reg, Mailer: m.Mailer(mailer), Organizations: orgs,
		PublicURL: cfg.PublicURL, Environment: cfg.Environment, Logger: log, Blobs: files, Links: signer,
		SessionKey: sessionKey, MaxUploadBytes: cfg.Limits.MaxUploadBytes,
		PageCounter: pdf.PageCount, Webhooks: m.Webhooks(newWebhooks(cfg)),
		RetrySchedule: schedule, WebhookTimeout: cfg.Webhooks.Timeout.Duration,
		AppendView: server.AppendView,
	})
}

// newWebhooks returns the webhook transport: https to public addresses
// only in production, http and loopback too in sandbox (docs/webhooks.md).
func newWebhooks(cfg config.Config) *notify.Webhooks {
	sandbox := cfg.Environment == "sandbox"
	return notify.NewWebhooks(notify.WebhookOptions{
		// A User-Agent product version is a token: "(devel)" becomes "devel".
		UserAgent:    "onboard/" + strings.Trim(version(), "()"),
		Timeout:      cfg.Webhooks.Timeout.Duration,
		AllowPrivate: sandbox,
		AllowHTTP:    sandbox,
	})
}

// files are the blob store serve wires, and the signer of its links.
type files struct {
	// guard is the local store or the bucket, whose deletions a backup
	// holds off: the Service's files and the orphan sweep's.
	guard  *blobs.Guard
	signer *blobs.Signer
}

// openBlobs opens the blob store of blobs.backend and the signer of its
// download links, with the configured key or the one generated with the
// records on the first start. The store is guarded, so that a backup can
// hold its deletions off; the local one, on Badger, asks the database's
// free-space gate before each chunk it writes.
func openBlobs(ctx context.Context, cfg config.Config, recs *records) (*files, error) {
	var key []byte
	var err error
	if cfg.Blobs.SigningKey != "" {
		key, err = blobs.DecodeKey(cfg.Blobs.SigningKey)
	} else {
		key, err = recs.secret(ctx, downloadSigningKeyName)
	}
	if err != nil {
		return nil, err
	}
	signer, err := blobs.NewSigner(key, nil)
	if err != nil {
		return nil, err
	}
	var store blobs.Guarded
	if cfg.Blobs.Backend == config.BlobsS3 {
		if store, err = openBucket(ctx, cfg); err != nil {
			return nil, err
		}
	} else {
		local, err := blobs.Open(filepath.Join(cfg.DataDir, "blobs"))
		if err != nil {
			return nil, err
		}
		if recs.badger != nil {
			local.WithSpace(recs.badger)
		}
		store = local
	}
	return &files{guard: blobs.NewGuard(store), signer: signer}, nil
}

// registryOptions are the registry options the configuration's [registry]
// table gives: mode, credentials, timeout and addresses. The fixtures and
// the transport are the caller's.
func registryOptions(cfg config.Config) registry.Options {
	return registry.Options{
		Mode:                  cfg.Registry.Mode,
		CompaniesHouseAPIKey:  cfg.Registry.CompaniesHouseAPIKey,
		CROEmail:              cfg.Registry.CROEmail,
		CROAPIKey:             cfg.Registry.CROAPIKey,
		Timeout:               cfg.Registry.Timeout.Duration,
		CompaniesHouseBaseURL: cfg.Registry.CompaniesHouseURL,
		CROBaseURL:            cfg.Registry.CROURL,
	}
}

// newRegistry returns the configured registry, serving the embedded
// recordings in fixtures mode; count (may be nil) counts its calls.
func newRegistry(cfg config.Config, count func(registry, outcome string)) (*registry.Registry, error) {
	fixtures, err := fs.Sub(registryFixtures, "testdata/registry")
	if err != nil {
		return nil, err
	}
	opts := registryOptions(cfg)
	opts.Fixtures = fixtures
	opts.CountCall = count
	return registry.New(opts)
}

// newMailer picks the invite transport: SMTP when configured, the sandbox
// outbox in sandbox, and none in production without SMTP (create then
// answers with a warning).
func newMailer(cfg config.Config, log *slog.Logger) (onboarding.Mailer, error) {
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
