package postgres

import (
	"context"
	"crypto/rand"
	neturl "net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"onboard/storage/postgres/pgtest"
)

// TestMigrateEmptyDatabase applies every embedded migration to an empty
// database, by several instances opening it at once, and checks that each
// step ran exactly once and that a second open changes nothing.
func TestMigrateEmptyDatabase(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	stores := make([]*Store, 4)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, url, Options{MaxConnections: 2}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		stores[i].Close()
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range ms {
		want = append(want, m.name)
	}
	if got := appliedMigrations(t, url); !cmp.Equal(got, want) {
		t.Fatalf("schema_version after a concurrent first open (-want +got):\n%s", cmp.Diff(want, got))
	}
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := appliedMigrations(t, url); !cmp.Equal(got, want) {
		t.Fatalf("schema_version after a second open (-want +got):\n%s", cmp.Diff(want, got))
	}
}

// TestMigrateRefusesNewerSchema: a database migrated by a newer onboard is
// not opened by an older one.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "INSERT INTO schema_version (version, name) VALUES (1000, '1000_future.sql')"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, url, Options{}); err == nil {
		t.Fatal("opened a database whose schema is newer than the binary's")
	}
}

// appliedMigrations lists schema_version's names in version order.
func appliedMigrations(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT name FROM schema_version ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestSecretSharedOnce: instances asking for a secret together all get the
// value of the one that created it.
func TestSecretSharedOnce(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() {
			v, err := s.Secret(ctx, "session", func() ([]byte, error) { return []byte{byte(i)}, nil })
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	wg.Wait()
	for i := range got {
		if !cmp.Equal(got[i], got[0]) {
			t.Fatalf("instance %d got %x, instance 0 %x", i, got[i], got[0])
		}
	}
}

// TestMigratedDatabaseNeedsNoCreateRight: once the schema is up to date,
// a role that may only read and write the tables opens the database.
func TestMigratedDatabaseNeedsNoCreateRight(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	role := "onboard_rw_" + strings.ToLower(rand.Text()[:8])
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
		"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
	} {
		if _, err := s.pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	s.Close()
	t.Cleanup(func() {
		for _, c := range []struct{ url, sql string }{{url, "DROP OWNED BY " + role}, {pgtest.Server(t), "DROP ROLE " + role}} {
			conn, err := pgx.Connect(ctx, c.url)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := conn.Exec(ctx, c.sql); err != nil {
				t.Errorf("%s: %v", c.sql, err)
			}
			conn.Close(ctx)
		}
	})
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.User(role)
	rw, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatalf("open as a role without CREATE: %v", err)
	}
	rw.Close()
}
