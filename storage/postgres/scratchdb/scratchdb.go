// Package scratchdb creates PostgreSQL databases for runs that need fresh
// data and leave none behind: tests (pgtest) and onboard bench.
package scratchdb

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Create creates an empty database named prefix and a random
// suffix on the server at serverURL (whose role needs CREATEDB) and returns
// its URL, and drop, which removes it with every connection to it.
func Create(ctx context.Context, serverURL, prefix string) (dbURL string, drop func(context.Context) error, err error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("%q is not a postgres:// URL", redact(serverURL))
	}
	name := prefix + strings.ToLower(rand.Text()[:16])
	if err := onServer(ctx, serverURL, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	drop = func(ctx context.Context) error {
		if err := onServer(ctx, serverURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return u.String(), drop, nil
}

// onServer runs one statement on a connection of its own to serverURL
// (CREATE and DROP DATABASE cannot run in a transaction or a pool's
// prepared statement).
func onServer(ctx context.Context, serverURL, sql string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

// redact is rawURL without its password, for messages.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "the URL"
	}
	return u.Redacted()
}
