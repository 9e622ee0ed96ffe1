package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/postgres/pgtest"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

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

// newApp builds an application of org created at t0+i seconds, with one
// participant whose slug is "slug-<org>-<i>".
func newApp(t testing.TB, org string, i int, status onboarding.Status) *onboarding.Application {
	t.Helper()
	at := t0.Add(time.Duration(i) * time.Second)
	return &onboarding.Application{
		ID:       uuid.NewString(),
		Seq:      ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()),
		OrgID:    org,
		ConfigID: "default",
		Country:  "GB",
		Status:   status,
		Data: onboarding.Data{
			Fields: map[string]json.RawMessage{"company_name": json.RawMessage(fmt.Sprintf(`"COMPANY %d"`, i))},
			Meta:   onboarding.Meta{PrimaryContact: &onboarding.Contact{Email: "a@example.com"}},
		},
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: fmt.Sprintf("slug-%s-%d", org, i), Email: "a@example.com", Role: onboarding.RolePrimary}},
		CreatedAt:    at,
		UpdatedAt:    at,
	}
}

// storedApp creates application i of org with status in s, with no
// activity or events, and returns it.
func storedApp(t *testing.T, s *Store, org string, i int, status onboarding.Status) *onboarding.Application {
	t.Helper()
	app := newApp(t, org, i, status)
	if err := s.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	return app
}

// newRFI builds an RFI request created at t0+i seconds, expiring 14 days
// and i hours later.
func newRFI(t testing.TB, org string, i int, status onboarding.RFIStatus) *onboarding.RFIRequest {
	t.Helper()
	at := t0.Add(time.Duration(i) * time.Second)
	opened := at.Add(time.Minute)
	return &onboarding.RFIRequest{
		ID:             uuid.NewString(),
		Seq:            ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()),
		OrgID:          org,
		AgentID:        "6f1c2a9e-8d4b-4c53-9a57-0c1d2e3f4a5b",
		Status:         status,
		CompanyName:    fmt.Sprintf("Company %d", i),
		RegisteredName: fmt.Sprintf("COMPANY %d LTD", i),
		CompanyNumber:  fmt.Sprintf("%08d", i),
		Country:        "GB",
		Contact:        onboarding.Contact{Name: "Jane Smith", Email: "jane@example.com", Role: "Director"},
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: fmt.Sprintf("rfi-%s-%d", org, i),
			Email: "jane@example.com", Name: "Jane Smith", Role: onboarding.RolePrimary}},
		Documents: map[string]onboarding.Document{},
		CreatedAt: at,
		UpdatedAt: at,
		ExpiresAt: at.Add(14*24*time.Hour + time.Duration(i)*time.Hour),
		OpenedAt:  &opened,
	}
}

// createRFIs stores rs with no activity and no events.
func createRFIs(t *testing.T, s *Store, rs ...*onboarding.RFIRequest) {
	t.Helper()
	for _, r := range rs {
		if err := s.CreateRFIRequest(context.Background(), r, onboarding.Changes{}); err != nil {
			t.Fatalf("CreateRFIRequest(%s): %v", r.CompanyName, err)
		}
	}
}

// updateRFI applies change to the request id, with no activity or events.
func updateRFI(t *testing.T, s *Store, id string, change func(*onboarding.RFIRequest)) *onboarding.RFIRequest {
	t.Helper()
	r, err := s.UpdateRFIRequest(context.Background(), id, func(r *onboarding.RFIRequest) (onboarding.Changes, error) {
		change(r)
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatalf("UpdateRFIRequest(%s): %v", id, err)
	}
	return r
}

func act(action string, at time.Time) onboarding.Activity {
	return onboarding.Activity{At: at, Action: action, Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1", Name: "ci"}}
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
