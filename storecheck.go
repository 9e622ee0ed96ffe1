package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"onboard/config"
	"onboard/storage/postgres"
)

// checkSharedStores connects to the shared backends cfg names, as serve
// does before it listens, and reports on w what it found: PostgreSQL
// answers and its schema is brought up to date (serve would migrate it
// too), the S3 bucket exists and takes a write. An error says what to
// fix. The embedded backend is not opened: the server may be running.
func checkSharedStores(ctx context.Context, cfg config.Config, w io.Writer) error {
	if cfg.Storage.Backend == config.StoragePostgres {
		pg, err := postgres.Open(ctx, cfg.Storage.PostgresURL, postgres.Options{MaxConnections: 1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return postgresProblem(err)
		}
		pg.Close()
		fmt.Fprintln(w, "The PostgreSQL database answers, and its schema is up to date.")
	}
	if cfg.Blobs.Backend == config.BlobsS3 {
		if _, err := openBucket(ctx, cfg); err != nil {
			return err
		}
		fmt.Fprintf(w, "The S3 bucket %q answers, and the key may list, write, read and delete in it.\n", cfg.Blobs.S3Bucket)
	}
	return nil
}
