package onboarding_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/onboarding/onboardingtest"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// exportEnv is a Service on a real store and blob directory, for an
// organization acme with the configurations viewStd and viewCustom (tax_id
// and bank_account_iban not sensitive there), and a second organization.
type exportEnv struct {
	svc   *onboarding.Service
	store storetest.Store
	files *blobs.Store
}

func newExportEnv(t *testing.T) *exportEnv {
	t.Helper()
	dir := t.TempDir()
	store := storetest.Open(t)
	files, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Blobs: files, PageCounter: pdf.PageCount, PublicURL: "https://onboard.example",
		Organizations: []*onboarding.Organization{
			{ID: "acme", DefaultConfig: viewStd, Configs: []*onboarding.Configuration{
				{ID: viewStd, Form: onboarding.StandardForm(), Countries: []string{"GB"}},
				{ID: viewCustom, Form: onboardingtest.CustomForm(t), Countries: []string{"GB"}},
			}},
			{ID: "globex", DefaultConfig: "globex-std", Configs: []*onboarding.Configuration{
				{ID: "globex-std", Form: onboarding.StandardForm(), Countries: []string{"GB"}},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &exportEnv{svc: svc, store: store, files: files}
}

// put stores apps, many at once.
func (e *exportEnv) put(t *testing.T, apps ...*onboarding.Application) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(apps))
	sem := make(chan struct{}, 64)
	for _, app := range apps {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := e.store.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// blob stores content and returns its blob id.
func (e *exportEnv) blob(t *testing.T, content string) string {
	t.Helper()
	id, _, err := e.files.Put(context.Background(), strings.NewReader(content), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// run exports q into a new recording sink.
func (e *exportEnv) run(t *testing.T, q onboarding.ExportQuery) (*recordingSink, onboarding.ExportSummary) {
	t.Helper()
	x, err := e.svc.NewExport(q)
	if err != nil {
		t.Fatal(err)
	}
	sink := &recordingSink{}
	sum, err := x.Run(context.Background(), sink)
	if err != nil {
		t.Fatal(err)
	}
	return sink, sum
}

// recordingSink keeps the rows, and what came when: each file and each
// Exported, with how many row bytes had been written by then.
type recordingSink struct {
	rows   bytes.Buffer
	events []string
	// failFile, when set, is File's answer.
	failFile error
}

func (s *recordingSink) Write(p []byte) (int, error) { return s.rows.Write(p) }

func (s *recordingSink) File(f onboarding.ExportFile) error {
	if s.failFile != nil {
		return s.failFile
	}
	b, err := io.ReadAll(f.Body)
	if err != nil {
		return err
	}
	s.events = append(s.events, fmt.Sprintf("@%d file %s/%s %s: %s", s.rows.Len(), f.ApplicationID, f.FileID, f.FileName, b))
	return nil
}

func (s *recordingSink) Exported() error {
	s.events = append(s.events, fmt.Sprintf("@%d exported", s.rows.Len()))
	return nil
}

// exportApp is application i of acme on configID: created and updated
// i minutes after base, in status.
func exportApp(i int, configID string, status onboarding.Status) *onboarding.Application {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := base.Add(time.Duration(i) * time.Minute)
	return &onboarding.Application{
		ID: uuid.NewString(), Seq: ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()), OrgID: "acme", ConfigID: configID,
		Country: "GB", Status: status, CreatedAt: at, UpdatedAt: at,
		Data: onboarding.Data{
			Fields: map[string]json.RawMessage{"company_name": json.RawMessage(fmt.Sprintf(`"Company %d"`, i))},
			Meta:   onboarding.Meta{PrimaryContact: &onboarding.Contact{Email: fmt.Sprintf("c%d@example.com", i)}},
		},
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: strings.ReplaceAll(uuid.NewString(), "-", ""),
			Email: fmt.Sprintf("c%d@example.com", i), Role: onboarding.RolePrimary}},
	}
}

// TestExportNDJSONPages exports more applications than three pages of the
// listing index hold: every one of the organization's, newest first, each
// line View without links; with a status, only those; with since, only
// those updated at or after it.
func TestExportNDJSONPages(t *testing.T) {
	e := newExportEnv(t)
	const n = 1201
	statuses := onboarding.Statuses()
	var apps []*onboarding.Application
	for i := range n {
		apps = append(apps, exportApp(i, viewStd, statuses[i%len(statuses)]))
	}
	other := exportApp(n, "globex-std", onboarding.StatusSent)
	other.OrgID = "globex"
	e.put(t, append(apps, other)...)

	lines := func(apps []*onboarding.Application) string {
		var b strings.Builder
		for _, app := range slices.Backward(apps) {
			view, err := e.svc.View(app, onboarding.ViewOptions{})
			if err != nil {
				t.Fatal(err)
			}
			line, err := json.Marshal(view)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		return b.String()
	}
	for _, tt := range []struct {
		name  string
		q     onboarding.ExportQuery
		apps  []*onboarding.Application
		empty bool
	}{
		{"all", onboarding.ExportQuery{OrgID: "acme"}, apps, false},
		{"ndjson named", onboarding.ExportQuery{OrgID: "acme", Format: onboarding.ExportNDJSON}, apps, false},
		{"status", onboarding.ExportQuery{OrgID: "acme", Status: "review"}, filter(apps, func(a *onboarding.Application) bool { return a.Status == onboarding.StatusReview }), false},
		{"since", onboarding.ExportQuery{OrgID: "acme", Since: "2026-01-01T16:40:00+00:00"}, apps[1000:], false},
		{"since in another offset", onboarding.ExportQuery{OrgID: "acme", Since: "2026-01-01T17:39:59.5+01:00"}, apps[1000:], false},
		{"status and since", onboarding.ExportQuery{OrgID: "acme", Status: "created", Since: "2026-01-01T16:40:00Z"},
			filter(apps[1000:], func(a *onboarding.Application) bool { return a.Status == onboarding.StatusCreated }), false},
		{"since after the last update", onboarding.ExportQuery{OrgID: "acme", Since: "2026-01-02T00:01:00Z"}, nil, true},
		{"the other organization", onboarding.ExportQuery{OrgID: "globex"}, []*onboarding.Application{other}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink, sum := e.run(t, tt.q)
			if diff := cmp.Diff(lines(tt.apps), sink.rows.String()); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if sum != (onboarding.ExportSummary{Applications: len(tt.apps)}) || len(sink.events) != len(tt.apps) {
				t.Errorf("summary %+v, %d Exported calls; want %d applications", sum, len(sink.events), len(tt.apps))
			}
			if tt.empty != (sink.rows.Len() == 0) {
				t.Errorf("rows %q", sink.rows.String())
			}
		})
	}
}

func filter(apps []*onboarding.Application, keep func(*onboarding.Application) bool) []*onboarding.Application {
	var out []*onboarding.Application
	for _, a := range apps {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// TestExportNDJSONKeepsSensitiveValues: the operator's export is the whole
// get-application document without download URLs, sensitive values of the
// form included.
func TestExportNDJSONKeepsSensitiveValues(t *testing.T) {
	e := newExportEnv(t)
	app := onboardingtest.FullApplication(viewCustom) // person_date_of_birth, person_home_address and person_id_document sensitive
	app.Seq = ulid.Make()
	e.put(t, app)
	sink, _ := e.run(t, onboarding.ExportQuery{OrgID: "acme"})
	view, err := e.svc.View(app, onboarding.ViewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want)+"\n", sink.rows.String()); diff != "" {
		t.Errorf("row (-View +export):\n%s", diff)
	}
	for _, s := range []string{`"date_of_birth":"1979-03"`, `"person_id_document"`, `"tax_id":"GB123456789"`} {
		if !strings.Contains(sink.rows.String(), s) {
			t.Errorf("the row has no %s", s)
		}
	}
	if strings.Contains(sink.rows.String(), "download_url") {
		t.Error("the row has a download_url")
	}
}

// TestExportCSV: the header is the fixed columns, then the non-sensitive
// company-level fields of the organization's forms, once each; a cell is
// empty where the application's own form marks the field sensitive; values
// are text, literals or compact JSON, formula-safe.
func TestExportCSV(t *testing.T) {
	e := newExportEnv(t)
	std := onboardingtest.FullApplication(viewStd)
	std.Seq = ulid.MustNew(1000, ulid.DefaultEntropy())
	custom := onboardingtest.FullApplication(viewCustom)
	custom.ID, custom.Seq = uuid.NewString(), ulid.MustNew(2000, ulid.DefaultEntropy())
	custom.Data.Fields = map[string]json.RawMessage{
		"company_name":                 json.RawMessage(`"=Evil Ltd"`),
		"tax_id":                       json.RawMessage(`"+44"`),
		"countries_of_operation":       json.RawMessage(`["GB", "FR"]`),
		"high_risk_revenue_percentage": json.RawMessage(`-0`),
		"regulated_entity":             json.RawMessage(`true`),
		"website":                      json.RawMessage(`null`),
	}
	custom.Data.Meta.PrimaryContact = &onboarding.Contact{Name: "@Jane", Email: "jane@example.com"}
	custom.Participants[0].LinkSlug, custom.Participants[1].LinkSlug = "slug-custom-1", "slug-custom-2"
	e.put(t, std, custom)

	sink, sum := e.run(t, onboarding.ExportQuery{OrgID: "acme", Format: onboarding.ExportCSV})
	if sum.Applications != 2 {
		t.Errorf("summary %+v", sum)
	}
	out := sink.rows.String()
	if strings.Count(out, "\r\n") != 3 {
		t.Errorf("want three CRLF-ended records:\n%q", out)
	}
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := []string{
		"id", "config_id", "status", "company_name", "company_number", "company_country",
		"primary_contact_email", "primary_contact_name", "created_at", "updated_at", "submitted_at", "completed_at",
		"company_type", "incorporation_date", "registered_address", "trading_address", "industry", "website", "phone",
		"business_description", "countries_of_operation", "annual_turnover", "expected_monthly_volume",
		"high_risk_revenue_percentage", "regulated_entity", "confirm_accuracy", "confirm_terms",
		"tax_id", "bank_account_iban", // sensitive in the standard form, not in the custom one
	}
	if diff := cmp.Diff(header, records[0]); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	row := func(r []string) map[string]string {
		m := map[string]string{}
		for i, c := range r {
			if c != "" {
				m[header[i]] = c
			}
		}
		return m
	}
	want := []map[string]string{
		{
			"id": custom.ID, "config_id": viewCustom, "status": "submitted", "company_name": "'=Evil Ltd",
			"primary_contact_email": "jane@example.com", "primary_contact_name": "'@Jane",
			"created_at": "2026-03-01T09:11:12.345Z", "updated_at": "2026-03-03T09:11:12.345Z", "submitted_at": "2026-03-03T09:11:12.345Z",
			"countries_of_operation": `["GB","FR"]`, "high_risk_revenue_percentage": "'-0", "regulated_entity": "true", "tax_id": "'+44",
		},
		{
			"id": std.ID, "config_id": viewStd, "status": "submitted", "company_name": "Northwind Trading Ltd", "company_number": "10000001",
			"primary_contact_email": "jane@northwind.example",
			"created_at":            "2026-03-01T09:11:12.345Z", "updated_at": "2026-03-03T09:11:12.345Z", "submitted_at": "2026-03-03T09:11:12.345Z",
			"registered_address": `{"line1":"14 Harbour Road","city":"Bristol","postcode":"BS1 6XX","country":"GB"}`,
			"annual_turnover":    `{"amount":1250000,"currency":"GBP"}`,
		},
	}
	for i, w := range want {
		if diff := cmp.Diff(w, row(records[i+1])); diff != "" {
			t.Errorf("row %d (-want +got):\n%s", i+1, diff)
		}
	}

	// An application whose configuration is no longer in the file cannot
	// be shown without knowing what is sensitive: the CSV export fails,
	// the NDJSON one (everything shown) does not.
	gone := exportApp(5000, "removed-config", onboarding.StatusSent)
	e.put(t, gone)
	x, err := e.svc.NewExport(onboarding.ExportQuery{OrgID: "acme", Format: onboarding.ExportCSV})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background(), &recordingSink{}); err == nil || !strings.Contains(err.Error(), `configuration "removed-config" is no longer configured`) {
		t.Errorf("CSV export with an unknown configuration: %v", err)
	}
	if _, sum := e.run(t, onboarding.ExportQuery{OrgID: "acme"}); sum.Applications != 3 {
		t.Errorf("NDJSON export: %+v, want 3 applications", sum)
	}
}

// TestExportFiles: after each application's row come the files of the
// documents its view lists (company by field id, people, entities, then
// the registry's), and only then Exported; a skipped or rejected document
// has none; a file removed since the read is counted, not fatal.
func TestExportFiles(t *testing.T) {
	e := newExportEnv(t)
	app := onboardingtest.FullApplication(viewStd)
	app.Seq = ulid.Make()
	app.Data.People[0].Documents["person_id_document"] = withBlob(app.Data.People[0].Documents["person_id_document"], e.blob(t, "passport"))
	app.Data.Entities[0].Documents["certificate_of_incorporation"] = withBlob(app.Data.Entities[0].Documents["certificate_of_incorporation"], e.blob(t, "kvk"))
	app.Data.Documents["certificate_of_incorporation"] = withBlob(app.Data.Documents["certificate_of_incorporation"], e.blob(t, "coi"))
	app.Data.Documents["bank_statement"] = withBlob(app.Data.Documents["bank_statement"], e.blob(t, "rejected upload"))
	app.Data.Documents["bank_statement_2"] = onboarding.Document{FileID: "d-gone", FileName: "gone.pdf", Status: onboarding.DocumentAccepted,
		BlobID: "0123456789abcdef0123456789abcdef"}
	app.RegistryDocuments[0].BlobID = e.blob(t, "accounts")
	app.RegistryDocuments[1].BlobID = e.blob(t, "confirmation")
	pending := exportApp(1, viewStd, onboarding.StatusSent)
	pending.Seq = ulid.MustNew(1, ulid.DefaultEntropy()) // older: exported after app
	pending.RegistryDocumentsStatus = onboarding.RegistryDocumentsPending
	pending.RegistryDocuments = []onboarding.RegistryDocument{{ID: "rp", DocumentType: "AA", BlobID: e.blob(t, "not shown yet")}}
	e.put(t, app, pending)

	sink, sum := e.run(t, onboarding.ExportQuery{OrgID: "acme", Documents: true})
	if sum != (onboarding.ExportSummary{Applications: 2, Documents: 5, MissingDocuments: 1}) {
		t.Errorf("summary %+v", sum)
	}
	first := strings.Index(sink.rows.String(), "\n") + 1
	all := sink.rows.Len()
	want := []string{
		fmt.Sprintf("@%d file %s/d-c1 coi.pdf: coi", first, app.ID),
		fmt.Sprintf("@%d file %s/d-p1 passport scan.pdf: passport", first, app.ID),
		fmt.Sprintf("@%d file %s/d-e1 kvk.pdf: kvk", first, app.ID),
		fmt.Sprintf("@%d file %s/r1 AA.pdf: accounts", first, app.ID),
		fmt.Sprintf("@%d file %s/r2 confirmation.pdf: confirmation", first, app.ID),
		fmt.Sprintf("@%d exported", first),
		fmt.Sprintf("@%d exported", all),
	}
	if diff := cmp.Diff(want, sink.events); diff != "" {
		t.Errorf("files and Exported (-want +got):\n%s", diff)
	}

	// Without Documents, no file.
	if sink, _ := e.run(t, onboarding.ExportQuery{OrgID: "acme", Format: onboarding.ExportCSV}); len(sink.events) != 2 {
		t.Errorf("events without Documents: %v", sink.events)
	}
	// The sink's failure ends the export with it.
	x, err := e.svc.NewExport(onboarding.ExportQuery{OrgID: "acme", Documents: true})
	if err != nil {
		t.Fatal(err)
	}
	full := errors.New("disk full")
	if _, err := x.Run(context.Background(), &recordingSink{failFile: full}); !errors.Is(err, full) {
		t.Errorf("Run with a failing sink: %v, want %v", err, full)
	}
}

func withBlob(d onboarding.Document, blob string) onboarding.Document {
	d.BlobID = blob
	return d
}

// TestExportCanceled: a canceled context stops the export between pages.
func TestExportCanceled(t *testing.T) {
	e := newExportEnv(t)
	var apps []*onboarding.Application
	for i := range 501 {
		apps = append(apps, exportApp(i, viewStd, onboarding.StatusSent))
	}
	e.put(t, apps...)
	x, err := e.svc.NewExport(onboarding.ExportQuery{OrgID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sink := &cancelingSink{after: 500, cancel: cancel}
	sum, err := x.Run(ctx, sink)
	if !errors.Is(err, context.Canceled) || sum.Applications != 500 {
		t.Errorf("Run canceled after the first page: %+v, %v; want 500 applications and context.Canceled", sum, err)
	}
}

// cancelingSink cancels the export's context once after applications.
type cancelingSink struct {
	n, after int
	cancel   func()
}

func (s *cancelingSink) Write(p []byte) (int, error)      { return len(p), nil }
func (s *cancelingSink) File(onboarding.ExportFile) error { return nil }
func (s *cancelingSink) Exported() error {
	if s.n++; s.n == s.after {
		s.cancel()
	}
	return nil
}

// TestNewExportErrors: each refused query and its exact message.
func TestNewExportErrors(t *testing.T) {
	e := newExportEnv(t)
	for _, tt := range []struct {
		name string
		q    onboarding.ExportQuery
		want string
	}{
		{"unknown organization", onboarding.ExportQuery{OrgID: "nope"}, "unknown organization 'nope'"},
		{"no organization", onboarding.ExportQuery{}, "unknown organization ''"},
		{"unknown status", onboarding.ExportQuery{OrgID: "acme", Status: "done"}, "Invalid status 'done'"},
		{"since without a time", onboarding.ExportQuery{OrgID: "acme", Since: "2026-01-01"}, "Invalid since '2026-01-01': use an RFC 3339 time such as 2025-01-31T00:00:00Z"},
		{"since without an offset", onboarding.ExportQuery{OrgID: "acme", Since: "2026-01-01T00:00:00"}, "Invalid since '2026-01-01T00:00:00': use an RFC 3339 time such as 2025-01-31T00:00:00Z"},
		{"unknown format", onboarding.ExportQuery{OrgID: "acme", Format: "json"}, "Invalid format 'json': use ndjson or csv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.NewExport(tt.q)
			if oe := onboarding.AsError(err); oe == nil || oe.Kind != onboarding.KindInvalid || oe.Message != tt.want {
				t.Errorf("NewExport = %v, want the invalid-request error %q", err, tt.want)
			}
		})
	}
}
