package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClaimPlanReadsNoBacklog: the generic plan PostgreSQL keeps for
// claimSQL, made on an empty deliveries table as it is when an instance
// starts on a new database, finds what a claim leaves (the earliest
// unclaimed head and the earliest lease of the endpoint) as the first
// entry of an index of its kind, not by reading and sorting every queued
// head: with a backlog, that made every claim slower as the queue grew,
// and delivery fell further behind.
func TestClaimPlanReadsNoBacklog(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `PREPARE claim(text[], int[], timestamptz, int, text, timestamptz, bool[]) AS `+claimSQL); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	explain := fmt.Sprintf(`EXPLAIN EXECUTE claim(ARRAY['we_1'], ARRAY[4], '%s', 4, 'owner', '%s', ARRAY[false])`,
		now.Format(time.RFC3339Nano), now.Add(time.Minute).Format(time.RFC3339Nano))
	rows, err := tx.Query(ctx, explain, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	for _, want := range []string{"using deliveries_unclaimed on deliveries", "using deliveries_leased on deliveries"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the generic plan has no scan %s:\n%s", want, plan)
		}
	}
	for _, unwanted := range []string{"Bitmap Heap Scan on deliveries", "Seq Scan on deliveries"} {
		if strings.Contains(plan, unwanted) {
			t.Errorf("the generic plan reads the queue with a %s:\n%s", unwanted, plan)
		}
	}
}
