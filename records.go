package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"onboard/blobs"
	"onboard/config"
	"onboard/storage"
	"onboard/storage/postgres"
)

// openTimeout bounds opening the stores: connecting to the database,
// migrating its schema, checking the bucket. A server that cannot reach
// them by then fails to start, saying which, rather than waiting on.
const openTimeout = 30 * time.Second

// The generated secrets, named as their files in the data directory's
// secrets/ and as their rows in the database, so that a backup of either
// backend names them alike.
const (
	sessionKeyName         = "session.key"          // applicants' sessions and access links
	downloadSigningKeyName = "download-signing.key" // download links, unless blobs.signing_key gives one
)

// records is the record store the configuration names, opened.
type records struct {
	store  recordStore
	badger *storage.Store  // the embedded store; nil on PostgreSQL
	pg     *postgres.Store // the PostgreSQL store; nil on the embedded one
	// secret returns the generated secret called name, creating it on
	// first use and keeping it with the records: under the data
	// directory's secrets/, or in the database, where every instance
	// shares it.
	secret func(ctx context.Context, name string) ([]byte, error)
	// watchDeliveries hears of the deliveries other instances queue (see
	// app); nil on the embedded store.
	watchDeliveries func(ctx context.Context, wake func()) error
}

// sharedBackend reports whether cfg keeps records or files outside the
// data directory, in PostgreSQL or an S3 bucket.
func sharedBackend(cfg config.Config) bool {
	return cfg.Storage.Backend == config.StoragePostgres || cfg.Blobs.Backend == config.BlobsS3
}

// openRecords opens the record store of storage.backend.
func openRecords(ctx context.Context, cfg config.Config, log *slog.Logger) (*records, error) {
	if cfg.Storage.Backend == config.StoragePostgres {
		return openPostgres(ctx, cfg, log)
	}
	store, err := storage.Open(filepath.Join(cfg.DataDir, "badger"), storage.Options{Logger: log})
	if errors.Is(err, storage.ErrLocked) {
		return nil, fmt.Errorf("data directory %s is in use by another onboard process", cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	secret := func(_ context.Context, name string) ([]byte, error) {
		return blobs.LoadOrCreateKey(filepath.Join(cfg.DataDir, "secrets", name))
	}
	return &records{store: store, badger: store, secret: secret}, nil
}

// openPostgres connects to storage.postgres_url, bringing its schema up to
// date; an error says what the operator must fix.
func openPostgres(ctx context.Context, cfg config.Config, log *slog.Logger) (*records, error) {
	pg, err := postgres.Open(ctx, cfg.Storage.PostgresURL, postgres.Options{MaxConnections: cfg.Storage.MaxConnections, Logger: log})
	if err != nil {
		return nil, postgresProblem(err)
	}
	secret := func(ctx context.Context, name string) ([]byte, error) {
		text, err := pg.Secret(ctx, name, newKeyText)
		if err != nil {
			return nil, err
		}
		key, err := blobs.DecodeKey(string(text))
		if err != nil {
			return nil, fmt.Errorf("secret %s in the database: %w", name, err)
		}
		return key, nil
	}
	return &records{store: pg, pg: pg, secret: secret, watchDeliveries: pg.WatchDeliveries}, nil
}

// newKeyText is a new generated secret as its file in secrets/ holds it:
// a line of standard base64 of blobs.MinKeySize random bytes.
func newKeyText() ([]byte, error) {
	key := make([]byte, blobs.MinKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(key) + "\n"), nil
}
