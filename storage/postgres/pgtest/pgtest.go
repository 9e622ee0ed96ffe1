// Package pgtest gives tests a database of their own on the PostgreSQL
// server named by ONBOARD_TEST_POSTGRES_URL (.ci/services starts one).
// Without it a test skips with the reason, or fails when CI=true, so that
// CI cannot pass by skipping the shared backend.
package pgtest

import (
	"context"
	"os"
	"testing"

	"onboard/storage/postgres/scratchdb"
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
	url, drop, err := scratchdb.Create(context.Background(), Server(t), "onboard_test_")
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	t.Cleanup(func() {
		if err := drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return url
}
