package main

import (
	"errors"
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
	store    *storage.Store
	svc      *onboarding.Service
	sessions *form.SignedSessions  // the applicant form's sessions, under the session key
	backup   *backup.Maker         // onboard backup of this data directory
	sweeper  *onboarding.BlobSweep // removes blobs no record refers to
	log      *slog.Logger          // serve's, for the background work that has no request to answer
}

// close closes the store, reporting a failure on stderr.
func (a *app) close(stderr io.Writer) {
	if err := a.store.Close(); err != nil {
		fmt.Fprintln(stderr, "onboard:", err)
	}
}

// openApp opens the data directory and builds the Service.
func openApp(cfg config.Config, log *slog.Logger) (*app, error) { return openMeteredApp(cfg, log, nil) }

// openMeteredApp is openApp with the Service's transports counted on m
// (nil: not counted).
func openMeteredApp(cfg config.Config, log *slog.Logger, m *metrics.Collectors) (*app, error) {
	orgs, err := cfg.DomainOrganizations()
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
	sessionKey, err := blobs.LoadOrCreateKey(filepath.Join(cfg.DataDir, "secrets", "session.key"))
	if err != nil {
		store.Close()
		return nil, err
	}
	sessions, err := form.NewSignedSessions(sessionKey)
	if err != nil {
		store.Close()
		return nil, err
	}
	svc, files, err := newService(cfg, store, orgs, sessionKey, log, m)
	if err != nil {
		store.Close()
		return nil, err
	}
	backup := backup.New(store, files, cfg.DataDir, version(), log)
	sweeper := &onboarding.BlobSweep{Records: store, Files: files, Log: log, Now: time.Now}
	return &app{store: store, svc: svc, sessions: sessions, backup: backup, sweeper: sweeper, log: log}, nil
}

// newService builds the Service on store with the configured registry,
// mailer, blob store and webhook transport, and the session key of
// applicant access; m (may be nil) counts what the transports do. It
// returns the blob store too, guarded so that a backup can hold its
// deletions off.
func newService(cfg config.Config, store *storage.Store, orgs []*onboarding.Organization, sessionKey []byte, log *slog.Logger, m *metrics.Collectors) (*onboarding.Service, *blobs.Guard, error) {
	reg, err := newRegistry(cfg, m.RegistryCounter())
	if err != nil {
		return nil, nil, err
	}
	mailer, err := newMailer(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	blobStore, signer, err := openBlobs(cfg)
	if err != nil {
		return nil, nil, err
	}
	files := blobs.NewGuard(blobStore.WithSpace(store))
	schedule := make([]time.Duration, len(cfg.Webhooks.RetrySchedule))
	for i, d := range cfg.Webhooks.RetrySchedule {
		schedule[i] = d.Duration
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Registry: reg, Mailer: m.Mailer(mailer), Organizations: orgs,
		PublicURL: cfg.PublicURL, Environment: cfg.Environment, Logger: log, Blobs: files, Links: signer,
		SessionKey: sessionKey, MaxUploadBytes: cfg.Limits.MaxUploadBytes,
		PageCounter: pdf.PageCount, Webhooks: m.Webhooks(newWebhooks(cfg)),
		RetrySchedule: schedule, WebhookTimeout: cfg.Webhooks.Timeout.Duration,
		AppendView: server.AppendView,
	})
	return svc, files, err
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

// openBlobs opens the data directory's blob store and the signer of its
// download links, with the configured key or the one generated into
// secrets/ on the first start.
func openBlobs(cfg config.Config) (*blobs.Store, *blobs.Signer, error) {
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
