package postgres

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"onboard/storage/postgres/pgtest"
	"onboard/storage/storetest/fixture"
)

// t0 is the fixtures' creation time.
var t0 = fixture.T0

// openTest opens a Store on a fresh database of its own, closed when t
// ends, and returns it with the database's URL (to open more Stores on it).
func openTest(t *testing.T, o Options) (*Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	return openOn(t, url, o), url
}

// openOn opens a Store on the database at url, closed when t ends.
func openOn(t *testing.T, url string, o Options) *Store {
	t.Helper()
	if o.SweepInterval == 0 {
		o.SweepInterval = -1
	}
	s, err := Open(context.Background(), url, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rows returns the rows of a query as strings, one per row with its
// columns joined by " ", sorted: a snapshot of tables for comparisons.
func rows(t *testing.T, s *Store, sql string, args ...any) []string {
	t.Helper()
	rs, err := s.pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, func(row pgx.CollectableRow) (string, error) {
		vals, err := row.Values()
		return line(vals...), err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// line is vals separated by spaces, as rows writes a row.
func line(vals ...any) string {
	return strings.TrimSuffix(fmt.Sprintln(vals...), "\n")
}

func sortStrings(s []string) { sort.Strings(s) }

// everything is a snapshot of every table of records: what a write that
// must write nothing leaves unchanged.
func everything(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for _, table := range []string{"applications", "application_slugs", "rfi_requests", "rfi_slugs", "rfi_expiry_queue",
		"activity_entries", "api_keys", "idempotency"} {
		for _, r := range rows(t, s, `SELECT * FROM `+table) {
			out = append(out, table+": "+r)
		}
	}
	return out
}

// pgtestURL is pgtest.URL, for benchmarks too.
func pgtestURL(t testing.TB) string { return pgtest.URL(t) }

// genericPlan returns the plan PostgreSQL keeps for sql once prepared as
// prepare (a name and its parameter types: "claim(text[], int)") on s's
// database as it is, executed as execute ("claim(ARRAY['a'], 4)"): the
// generic plan, as made on a new database when an instance starts.
func genericPlan(t *testing.T, s *Store, prepare, sql, execute string) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `PREPARE `+prepare+` AS `+sql); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `EXPLAIN EXECUTE `+execute, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
