package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestClaimPlanReadsNoBacklog: the generic plan PostgreSQL keeps for
// claimSQL, made on an empty deliveries table as it is when an instance
// starts on a new database, finds what a claim leaves (the earliest
// unclaimed head and the earliest lease of the endpoint) as the first
// entry of an index of its kind, not by reading and sorting every queued
// head: with a backlog, that made every claim slower as the queue grew,
// and delivery fell further behind.
func TestClaimPlanReadsNoBacklog(t *testing.T) {
	s, _ := openTest(t, Options{})
	now := time.Now().UTC()
	plan := genericPlan(t, s, `claim(text[], int[], timestamptz, int, text, timestamptz, bool[])`, claimSQL,
		fmt.Sprintf(`claim(ARRAY['we_1'], ARRAY[4], '%s', 4, 'owner', '%s', ARRAY[false])`,
			now.Format(time.RFC3339Nano), now.Add(time.Minute).Format(time.RFC3339Nano)))
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
