// Package pgtest gives tests a database of their own on the PostgreSQL
// server named by ONBOARD_TEST_POSTGRES_URL (.ci/services starts one).
// Without it a test skips with the reason, or fails when CI=true, so that
// CI cannot pass by skipping the shared backend.
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable holding the test server's URL: a role that
// may create databases, connected to any database of the server.
const EnvURL = "ONBOARD_TEST_POSTGRES_URL"

// Server returns the test server's URL, skipping t (failing it with
// CI=true) when there is none.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run the PostgreSQL tests (.ci/services start)", EnvURL)
		}
		t.Skipf("%s is not set: no PostgreSQL to test against (eval \"$(.ci/services start)\" starts one)", EnvURL)
	}
	return u
}

// URL creates an empty database for t on the test server and returns its
// URL; the database is dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	server := Server(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	name := "onboard_test_" + strings.ToLower(rand.Text()[:16])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(t, server, name)
}

// withDatabase is server's URL naming database name instead.
func withDatabase(t testing.TB, server, name string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return fmt.Sprint(u)
}
