package postgres_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/onboarding/onboardingtest"
	"onboard/storage/postgres"
	"onboard/storage/postgres/pgtest"
)

// scaleSmall is the number of applications the list at scale is compared
// with; scaleListTarget bounds the ratio of the two latencies.
const (
	scaleSmall      = 10_000
	scaleListTarget = 1.3
)

// TestScaleListPostgres compares a page of the partner list
// (ListApplications, 50 newest first, and 50 of one status) with
// ONBOARD_SCALE applications stored against 10,000, at the Store: nothing
// but the database's work and the decoding of the page. The applications
// are created through Store.CreateApplication by 64 goroutines, into
// databases named onboard_scale_N on the test server, which are kept for
// the next run (drop them when done). Each round lists on both databases,
// alternating request by request so that whatever else the machine does
// slows both alike; the checks use each size's best of three rounds.
//
//	ONBOARD_SCALE=1000000 go test -run TestScaleListPostgres -timeout 2h -v ./storage/postgres/
func TestScaleListPostgres(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ONBOARD_SCALE"))
	if n <= scaleSmall {
		t.Skipf("set ONBOARD_SCALE to a number of applications above %d (such as 1000000) to measure the list at scale on PostgreSQL", scaleSmall)
	}
	server := pgtest.Server(t)
	stores := []*postgres.Store{scaleStore(t, server, scaleSmall), scaleStore(t, server, n)}
	type sample struct{ all, byStatus []time.Duration }
	best := make([]sample, len(stores))
	ctx := context.Background()
	for round := range 3 {
		got := make([]sample, len(stores))
		for range 300 {
			for i, s := range stores {
				for _, status := range []onboarding.Status{"", onboarding.StatusSent} {
					start := time.Now()
					page, _, err := s.ListApplications(ctx, onboarding.ListQuery{OrgID: "acme", Status: status, Limit: 50})
					d := time.Since(start)
					if err != nil || len(page) != 50 {
						t.Fatalf("list: %d applications, %v", len(page), err)
					}
					if status == "" {
						got[i].all = append(got[i].all, d)
					} else {
						got[i].byStatus = append(got[i].byStatus, d)
					}
				}
			}
		}
		for i := range stores {
			if round == 0 || quantile(got[i].all, 0.5) < quantile(best[i].all, 0.5) {
				best[i].all = got[i].all
			}
			if round == 0 || quantile(got[i].byStatus, 0.5) < quantile(best[i].byStatus, 0.5) {
				best[i].byStatus = got[i].byStatus
			}
		}
	}
	for _, q := range []float64{0.5, 0.9} {
		for _, c := range []struct {
			name         string
			small, large []time.Duration
		}{{"list", best[0].all, best[1].all}, {"list by status", best[0].byStatus, best[1].byStatus}} {
			s, l := quantile(c.small, q), quantile(c.large, q)
			ratio := float64(l) / float64(s)
			t.Logf("%s p%.0f: %v at %d, %v at %d: %.2f×", c.name, q*100, s, scaleSmall, l, n, ratio)
			if ratio > scaleListTarget {
				t.Errorf("%s p%.0f at %d is %.2f× its latency at %d; target ≤ %.1f×", c.name, q*100, n, ratio, scaleSmall, scaleListTarget)
			}
		}
	}
}

// quantile is the q-quantile of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[int(q*float64(len(s)-1))]
}

// scaleStore opens the kept database of n applications on server,
// creating it and the applications it lacks.
func scaleStore(t *testing.T, server string, n int) *postgres.Store {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("onboard_scale_%d", n)
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err == nil && !exists {
		_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	}
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	s, err := postgres.Open(ctx, u.String(), postgres.Options{MaxConnections: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var have int
	for _, st := range []onboarding.Status{onboarding.StatusSent, onboarding.StatusInProgress, onboarding.StatusSubmitted} {
		c, err := countApplications(ctx, u.String(), st)
		if err != nil {
			t.Fatal(err)
		}
		have += c
	}
	if have >= n {
		t.Logf("%s: reusing %d applications", name, have)
		return s
	}
	start := time.Now()
	var next atomic.Int64
	next.Store(int64(have))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := s.CreateApplication(ctx, scaleApplication(int(i)), onboarding.Changes{}); err != nil {
					errs <- err
					return
				}
				if i%100_000 == 0 && i > 0 {
					t.Logf("%s: %d created, %.0f/s", name, i, float64(i-int64(have))/time.Since(start).Seconds())
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d applications created in %v", name, n-have, time.Since(start).Round(time.Second))
	return s
}

// countApplications counts the applications of status in the database at url.
func countApplications(ctx context.Context, url string, status onboarding.Status) (int, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM applications WHERE org_id = 'acme' AND status = $1", string(status)).Scan(&n)
	return n, err
}

// scaleApplication is the i-th application of a scale database: a full
// application of its own id, creation ULID and link slugs, in one of three
// statuses.
func scaleApplication(i int) *onboarding.Application {
	app := onboardingtest.FullApplication("acme-standard")
	app.ID = uuid.NewString()
	app.Seq = ulid.Make()
	app.Status = []onboarding.Status{onboarding.StatusSent, onboarding.StatusInProgress, onboarding.StatusSubmitted}[i%3]
	for p := range app.Participants {
		app.Participants[p].LinkSlug = rand.Text()
	}
	return app
}
