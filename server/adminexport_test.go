package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/admin"
	"onboard/admin/admintest"
	"onboard/onboarding"
	"onboard/server/web"
)

// exportScenario makes applications of acme: submitted ones (with the
// sample uploads), enough for the rows to take several parts, one of
// globex.
func exportScenario(t testing.TB, e *env, n int) {
	t.Helper()
	for i := range n {
		id := e.create(t, "acme", fmt.Sprintf(`{"primary_contact":{"email":"a%d@example.com","name":"Ann"},"country":"FR","company_number":"FR%d","company_name":"Export %d SARL"}`, i, i, i))
		if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"business_description":"`+strings.Repeat("Coffee. ", 100)+`","tax_id":"=1"}}`); w.Code != http.StatusOK {
			t.Fatalf("patch = %d %s", w.Code, w.Body)
		}
		if i%50 == 0 {
			if w := e.do("POST", submitPath(id), "acme", ""); w.Code != http.StatusOK {
				t.Fatalf("submit = %d %s", w.Code, w.Body)
			}
		}
	}
	e.create(t, "globex", "")
}

// TestAdminExport drives GET /apps/export of the admin socket: refusals as
// the other admin routes answer them, and exports through the socket's
// client that hand over exactly what the direct path does.
func TestAdminExport(t *testing.T) {
	e := newEnv(t, envOptions{})
	exportScenario(t, e, 120)
	h := admin.NewHandler(admin.Options{Service: e.svc, Answer: web.ErrorAnswer})
	for _, tt := range []struct{ name, query, msg string }{
		{"unknown organization", "org=nope", "unknown organization 'nope'"},
		{"no organization", "", "unknown organization ''"},
		{"unknown status", "org=acme&status=done", "Invalid status 'done'"},
		{"since not RFC 3339", "org=acme&since=yesterday", "Invalid since 'yesterday': use an RFC 3339 time such as 2025-01-31T00:00:00Z"},
		{"unknown format", "org=acme&format=xml", "Invalid format 'xml': use ndjson or csv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/apps/export?"+tt.query, nil))
			wantError(t, w, http.StatusBadRequest, errBody(tt.msg))
		})
	}

	// A file name that would be headers, and ids that would too: the
	// part headers carry them escaped.
	ctx := context.Background()
	blob, _, err := e.blobs.Put(ctx, strings.NewReader("%PDF-1.4 hostile"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	hostile := &onboarding.Application{ID: uuid.NewString(), Seq: ulid.Make(), OrgID: "acme", ConfigID: "acme-standard", Country: "GB", Status: onboarding.StatusSent,
		Data: onboarding.Data{Documents: map[string]onboarding.Document{"bank_statement": {
			FileID: "f\r\nExport-End: ok", FileName: "a\r\nExport-End: ok\r\n\r\n\x00é%zz.pdf", Status: onboarding.DocumentAccepted, BlobID: blob,
		}}}}
	if err := e.store.CreateApplication(ctx, hostile, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}

	client := admintest.Serve(t, h)
	direct := admin.Local{Service: e.svc}
	for _, q := range []onboarding.ExportQuery{
		{OrgID: "acme", Documents: true},
		{OrgID: "acme", Format: onboarding.ExportCSV, Documents: true},
		{OrgID: "acme", Status: "submitted", Since: "2020-01-01T00:00:00Z"},
		{OrgID: "globex", Format: onboarding.ExportCSV},
	} {
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			var want, got admintest.ExportSink
			wantSum, err := direct.Export(ctx, q, &want)
			if err != nil {
				t.Fatal(err)
			}
			gotSum, err := client.Export(ctx, q, &got)
			if err != nil {
				t.Fatal(err)
			}
			if wantSum != gotSum || got.Completed != gotSum.Applications || want.Completed != wantSum.Applications {
				t.Errorf("summary %+v and %d Exported through the socket, %+v and %d directly", gotSum, got.Completed, wantSum, want.Completed)
			}
			if want.Rows.String() != got.Rows.String() {
				t.Errorf("rows through the socket differ:\n%s", cmp.Diff(want.Rows.String(), got.Rows.String()))
			}
			if diff := cmp.Diff(want.Files, got.Files); diff != "" {
				t.Errorf("files (-direct +socket):\n%s", diff)
			}
			if q.Documents && (len(got.Files) < 3 || !strings.HasPrefix(got.Files[0], hostile.ID+"/f\r\nExport-End: ok a\r\nExport-End: ok\r\n\r\n\x00é%zz.pdf: 16 bytes")) {
				t.Errorf("files through the socket: %q; want the hostile one first, then the scenario's", got.Files)
			}
		})
	}

	// A failure once the export runs comes in the last part: the CSV of
	// an application whose configuration is gone.
	gone := &onboarding.Application{ID: uuid.NewString(), Seq: ulid.Make(), OrgID: "acme", ConfigID: "gone", Country: "GB", Status: onboarding.StatusSent}
	if err := e.store.CreateApplication(ctx, gone, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	var sink admintest.ExportSink
	if _, err := client.Export(ctx, onboarding.ExportQuery{OrgID: "acme", Format: onboarding.ExportCSV}, &sink); err == nil || err.Error() != "Internal server error" {
		t.Errorf("export failing midway: %v, want Internal server error", err)
	}
}

// discardResponse is a ResponseWriter that keeps nothing, for benchmarks.
type discardResponse struct{ h http.Header }

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardResponse) WriteHeader(int)             {}
func (d *discardResponse) Flush()                      {}

// discardSink is an ExportSink that keeps nothing, for benchmarks.
type discardSink struct{}

func (discardSink) Write(p []byte) (int, error) { return len(p), nil }
func (discardSink) File(f onboarding.ExportFile) error {
	_, err := io.Copy(io.Discard, f.Body)
	return err
}
func (discardSink) Exported() error { return nil }

// BenchmarkAdminExport exports 1,000 applications (20 with their uploads),
// through the admin socket's handler and through the socket and its
// client, and reports applications a second.
func BenchmarkAdminExport(b *testing.B) {
	const n = 1000
	e := newEnv(b, envOptions{})
	exportScenario(b, e, n)
	h := admin.NewHandler(admin.Options{Service: e.svc, Answer: web.ErrorAnswer})
	client := admintest.Serve(b, h)
	for _, format := range []string{onboarding.ExportNDJSON, onboarding.ExportCSV} {
		b.Run("handler/"+format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := &discardResponse{h: http.Header{}}
				h.ServeHTTP(w, httptest.NewRequest("GET", "/apps/export?org=acme&format="+format, nil))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "apps/s")
		})
		for _, docs := range []bool{false, true} {
			b.Run(fmt.Sprintf("socket/%s/documents=%v", format, docs), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sum, err := client.Export(context.Background(), onboarding.ExportQuery{OrgID: "acme", Format: format, Documents: docs}, discardSink{})
					if err != nil || sum.Applications != n {
						b.Fatalf("export: %+v %v", sum, err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "apps/s")
			})
		}
	}
}
