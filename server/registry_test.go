package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/registry"
	"onboard/storage/storetest"
)

// fixturePDF reads a recorded registry document.
func fixturePDF(t testing.TB, docID string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/registry/companies-house/documents", docID+".pdf"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jobPasses follows the registry documents job's passes over its queue,
// through the Service's RegistryDocumentsIdle hook (end).
type jobPasses struct {
	mu   sync.Mutex
	next chan struct{} // closed when the pass under way, or the next one, ends
}

func newJobPasses() *jobPasses { return &jobPasses{next: make(chan struct{})} }

// end marks the end of a pass; it is the RegistryDocumentsIdle hook.
func (p *jobPasses) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.next)
	p.next = make(chan struct{})
}

// ended returns a channel closed when the pass under way ends (or, when the
// job is waiting, the next one): anything the queue held when ended was
// called has been handled once it is closed.
func (p *jobPasses) ended() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next
}

// waitRegistryDocuments reads get-application after each pass of the
// registry documents job, until the registry documents are no longer
// pending, and returns the application.
func (e *env) waitRegistryDocuments(t testing.TB, id string) map[string]any {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		passEnded := e.passes.ended()
		res := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))
		if res["registry_documents_status"] != "pending" {
			return res
		}
		select {
		case <-passEnded:
		case <-deadline:
			t.Fatalf("registry documents of %s still pending after 15s", id)
		}
	}
}

// download fetches a download_url through the router.
func (e *env) download(t *testing.T, link string) *httptest.ResponseRecorder {
	t.Helper()
	path, ok := strings.CutPrefix(link, "https://onboard.test")
	if !ok {
		t.Fatalf("download_url %q is not on the public URL", link)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w
}

// registryDoc is what the test checks of one registry document.
type registryDoc struct {
	DocumentType, FilingDate, FileName, DocID string
}

// TestRegistrySandboxCompanies creates an application for every GB sandbox
// company (docs/sandbox.md) through the API and checks the registry check, the
// pre-population and the final registry documents, downloading each one.
func TestRegistrySandboxCompanies(t *testing.T) {
	e := newEnv(t, envOptions{jobs: true})
	type person struct {
		FullName, FirstName, LastName, DateOfBirth, Nationality string
		Roles                                                   []string
	}
	tests := []struct {
		number, name string
		people       []person
		entities     []map[string]any
		ownership    []string // "owner full name or entity name: percentage band"
		status       string
		docs         []registryDoc
	}{
		{
			number: "10000001", name: "Northwind Trading Ltd",
			people: []person{
				{"Eleanor Mary Hargreaves", "Eleanor Mary", "Hargreaves", "1979-03", "GB", []string{"director", "ubo", "shareholder"}},
				{"Daniel Chukwuemeka Okafor", "Daniel Chukwuemeka", "Okafor", "1985-11", "GB", []string{"director"}},
			},
			ownership: []string{"Eleanor Mary Hargreaves: 75 75-100"},
			status:    "complete",
			docs: []registryDoc{
				{"confirmation_statement", "2026-04-20", "10000001-cs01-2026-04-20.pdf", "NwCs01Doc10000001"},
				{"annual_accounts", "2025-12-18", "10000001-aa-2025-12-18.pdf", "NwAaDoc10000001"},
				{"certificate_of_incorporation", "2018-04-16", "10000001-newinc-2018-04-16.pdf", "NwIncDoc10000001"},
			},
		},
		{
			number: "10000002", name: "Bluebell Holdings PLC",
			people: []person{
				{"Margaret Clare Ashworth", "Margaret Clare", "Ashworth", "1971-06", "GB", []string{"director"}},
				{"Rajesh Kumar Patel", "Rajesh Kumar", "Patel", "", "GB", []string{"ubo", "shareholder"}},
			},
			entities:  []map[string]any{{"name": "BLUEBELL GROUP LIMITED", "type": "parent", "country": "GB", "source": "registry"}},
			ownership: []string{"Rajesh Kumar Patel: 25 25-50", "BLUEBELL GROUP LIMITED: 50 50-75"},
			status:    "partial",
			docs: []registryDoc{
				{"annual_accounts", "2025-09-24", "10000002-aa-2025-09-24.pdf", "BbAaDoc10000002"},
				{"confirmation_statement", "2025-09-10", "10000002-cs01-2025-09-10.pdf", "BbCs01Doc10000002"},
			},
		},
		{
			number: "SC100007", name: "Highland Fisheries Limited",
			people:    []person{{"Iain MacLeod", "Iain", "MacLeod", "", "GB", []string{"director", "ubo", "shareholder"}}},
			ownership: []string{"Iain MacLeod: 75 75-100"},
			status:    "failed",
		},
		{
			number: "10000008", name: "Bluebell Group Limited",
			people: []person{
				{"Margaret Clare Ashworth", "Margaret Clare", "Ashworth", "1971-06", "GB", []string{"director"}},
				{"Patrick Joseph O'Neill", "Patrick Joseph", "O'Neill", "", "IE", []string{"director"}},
			},
			status: "complete",
		},
	}
	for _, tt := range tests {
		t.Run(tt.number, func(t *testing.T) {
			id := e.create(t, "acme", fmt.Sprintf(`{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":%q,"company_name":%q}`, tt.number, tt.name))
			app := e.waitRegistryDocuments(t, id)
			data := app["data"].(map[string]any)

			names := map[string]string{} // id → name
			var gotPeople []person
			for _, p := range data["people"].([]any) {
				p := p.(map[string]any)
				if p["source"] != "registry" {
					t.Errorf("person %v: source %v, want registry", p["full_name"], p["source"])
				}
				var roles []string
				for _, r := range p["roles"].([]any) {
					roles = append(roles, r.(string))
				}
				str := func(k string) string { s, _ := p[k].(string); return s }
				gotPeople = append(gotPeople, person{str("full_name"), str("first_name"), str("last_name"), str("date_of_birth"), str("nationality"), roles})
				names[str("id")] = str("full_name")
			}
			// Dates of birth are checked where the recording gives them;
			// the test table leaves others empty.
			for i := range gotPeople {
				if i < len(tt.people) && tt.people[i].DateOfBirth == "" {
					gotPeople[i].DateOfBirth = ""
				}
			}
			if diff := cmp.Diff(tt.people, gotPeople); diff != "" {
				t.Errorf("people (-want +got):\n%s", diff)
			}
			var gotEntities []map[string]any
			for _, en := range data["entities"].([]any) {
				en := en.(map[string]any)
				names[en["id"].(string)] = en["name"].(string)
				delete(en, "id")
				delete(en, "documents")
				gotEntities = append(gotEntities, en)
			}
			if diff := cmp.Diff(tt.entities, gotEntities); diff != "" {
				t.Errorf("entities (-want +got):\n%s", diff)
			}
			var gotOwnership []string
			for _, o := range data["ownership"].([]any) {
				o := o.(map[string]any)
				if o["owned_type"] != "target" || o["is_direct"] != true || o["is_nominee"] != false {
					t.Errorf("ownership row %v: want a direct, non-nominee holding of the target", o)
				}
				gotOwnership = append(gotOwnership, fmt.Sprintf("%s: %v %v", names[o["owner_id"].(string)], o["percentage"], o["percentage_band"]))
			}
			if diff := cmp.Diff(tt.ownership, gotOwnership); diff != "" {
				t.Errorf("ownership (-want +got):\n%s", diff)
			}
			if got := data["meta"].(map[string]any)["registry_sources"]; !cmp.Equal(got, []any{"uk_registry"}) {
				t.Errorf("meta.registry_sources = %v", got)
			}

			if app["registry_documents_status"] != tt.status {
				t.Errorf("registry_documents_status = %v, want %s", app["registry_documents_status"], tt.status)
			}
			var gotDocs []registryDoc
			for _, d := range app["registry_documents"].([]any) {
				d := d.(map[string]any)
				if d["source"] != "uk_registry" || d["fetched_at"] == nil || d["id"] == "" {
					t.Errorf("registry document %v: want source uk_registry, fetched_at and id", d)
				}
				w := e.download(t, d["download_url"].(string))
				if w.Code != http.StatusOK {
					t.Fatalf("download %v = %d %s", d["download_url"], w.Code, w.Body)
				}
				doc := registryDoc{DocumentType: d["document_type"].(string), FilingDate: d["filing_date"].(string)}
				_, doc.FileName, _ = strings.Cut(w.Header().Get("Content-Disposition"), `filename="`)
				doc.FileName, _, _ = strings.Cut(doc.FileName, `"`)
				for _, want := range tt.docs {
					if bytes.Equal(w.Body.Bytes(), fixturePDF(t, want.DocID)) {
						doc.DocID = want.DocID
					}
				}
				for h, want := range map[string]string{"Content-Type": "application/pdf", "Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"} {
					if got := w.Header().Get(h); got != want {
						t.Errorf("download %s: %s = %q, want %q", doc.FileName, h, got, want)
					}
				}
				gotDocs = append(gotDocs, doc)
			}
			if diff := cmp.Diff(tt.docs, gotDocs); diff != "" {
				t.Errorf("registry documents (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRegistryRejectionsThroughTheAPI covers the registry answers that
// refuse the create, with the exact status and body.
func TestRegistryRejectionsThroughTheAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := func(country, number, name string) string {
		return fmt.Sprintf(`{"primary_contact":{"email":"a@example.com"},"country":%q,"company_number":%q,"company_name":%q}`, country, number, name)
	}
	tests := []struct {
		name, body string
		status     int
		want       map[string]any
	}{
		{"dissolved", body("GB", "10000003", "Oldco Limited"), 400, errBody("Company 10000003 is not active (status: dissolved)")},
		{"not found", body("GB", "10000004", "Anything Ltd"), 400, errBody("Company 10000004 was not found in the UK company registry")},
		{"throttled", body("GB", "10000005", "Anything Ltd"), 503, map[string]any{"error": "The UK company registry is temporarily unavailable; retry in a few minutes", "retryable": true}},
		{"registry error", body("GB", "10000006", "Anything Ltd"), 502, map[string]any{"error": "Registry validation failed", "retryable": true}},
		{"name mismatch", body("GB", "10000001", "Northwind Ltd"), 400, map[string]any{
			"error":          "Company name 'Northwind Ltd' does not match the registered name for 10000001. Did you mean 'NORTHWIND TRADING LIMITED'?",
			"suggested_name": "NORTHWIND TRADING LIMITED"}},
		{"malformed", body("GB", "1234567890", "X Ltd"), 400, errBody("Invalid company number '1234567890' for UK company registry")},
		{"IE strike off listed", body("IE", "100002", "Shamrock Consulting Limited"), 400, errBody("Company 100002 is not active (status: Strike Off Listed)")},
		{"IE not found", body("IE", "100004", "Anything Limited"), 400, errBody("Company 100004 was not found in the Irish company registry")},
		{"IE malformed", body("IE", "1234567", "X Limited"), 400, errBody("Invalid company number '1234567' for Irish company registry")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", "/api/external/applications", "acme", tt.body), tt.status, tt.want)
		})
	}
	// Irish companies get company fields only: the CRO has no officers.
	id := e.create(t, "acme", body("IE", "100003", "Baile Atha Cliath Teo"))
	data := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["data"].(map[string]any)
	if len(data["people"].([]any)) != 0 || len(data["entities"].([]any)) != 0 || len(data["ownership"].([]any)) != 0 {
		t.Errorf("IE application has people, entities or ownership: %v", data)
	}
	if got := data["meta"].(map[string]any)["registry_sources"]; !cmp.Equal(got, []any{"irish_registry"}) {
		t.Errorf("meta.registry_sources = %v, want [irish_registry]", got)
	}
	if got := string(mustJSON(t, data["fields"].(map[string]any)["company_name"])); got != `"BAILE ÁTHA CLIATH TEORANTA"` {
		t.Errorf("company_name = %s, want the registered name", got)
	}
}

// TestSignedDownloadLinks checks the download route's answers to good, expired
// and tampered links.
func TestSignedDownloadLinks(t *testing.T) {
	e := newEnv(t, envOptions{jobs: true})
	id := e.create(t, "acme", "")
	app := e.waitRegistryDocuments(t, id)
	link := app["registry_documents"].([]any)[0].(map[string]any)["download_url"].(string)
	path := strings.TrimPrefix(link, "https://onboard.test")
	blobPath, query, _ := strings.Cut(path, "?")
	blobID := strings.TrimPrefix(blobPath, "/files/")

	replace := func(param, value string) string {
		var parts []string
		for _, p := range strings.Split(query, "&") {
			if k, _, _ := strings.Cut(p, "="); k == param {
				p = k + "=" + value
			}
			parts = append(parts, p)
		}
		return blobPath + "?" + strings.Join(parts, "&")
	}
	otherID := "00000000-0000-4000-8000-000000000000"
	forbidden := errBody("Invalid or expired link")
	tests := []struct {
		name string
		path string
	}{
		{"tampered signature", replace("signature", "AAAA"+strings.Repeat("B", 39))},
		{"no signature", replace("signature", "")},
		{"tampered id", "/files/" + otherID + "?" + query},
		{"tampered disposition", replace("disposition", "inline")},
		{"tampered file name", replace("filename", "other.pdf")},
		{"tampered type", replace("type", "text%2Fhtml")},
		{"later expiry", replace("expires", "99999999999")},
		{"no query", blobPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			e.h.ServeHTTP(w, httptest.NewRequest("GET", tt.path, nil))
			wantError(t, w, http.StatusForbidden, forbidden)
		})
	}
	if w := e.download(t, link); w.Code != http.StatusOK {
		t.Fatalf("valid link = %d %s", w.Code, w.Body)
	}
	// HEAD works on the same link, and Range requests are honoured.
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest("HEAD", path, nil))
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD = %d, %d body bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("Range", "bytes=0-4")
	w = httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != http.StatusPartialContent || w.Body.String() != "%PDF-" {
		t.Errorf("Range 0-4 = %d %q, want 206 %%PDF-", w.Code, w.Body)
	}
	// A range past the end is an error like any other: JSON, not cached,
	// not a download.
	r = httptest.NewRequest("GET", path, nil)
	r.Header.Set("Range", "bytes=999999-")
	w = httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	wantError(t, w, http.StatusRequestedRangeNotSatisfiable, errBody("Requested range not satisfiable"))
	if h := w.Header(); h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Disposition") != "" || !strings.HasPrefix(h.Get("Content-Range"), "bytes */") {
		t.Errorf("416 headers = %v", h)
	}
	// The link lasts 60 seconds.
	e.clock.Advance(60 * time.Second)
	if w := e.download(t, link); w.Code != http.StatusOK {
		t.Errorf("link at 60 s = %d, want 200", w.Code)
	}
	e.clock.Advance(time.Second)
	wantError(t, e.download(t, link), http.StatusForbidden, forbidden)
	// A fresh get signs a fresh link.
	app = decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))
	if w := e.download(t, app["registry_documents"].([]any)[0].(map[string]any)["download_url"].(string)); w.Code != http.StatusOK {
		t.Errorf("fresh link = %d, want 200", w.Code)
	}
	// A valid link to a blob that is gone is 404.
	if err := e.blobs.Delete(blobID); err != nil {
		t.Fatal(err)
	}
	app = decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))
	wantError(t, e.download(t, app["registry_documents"].([]any)[0].(map[string]any)["download_url"].(string)), http.StatusNotFound, errBody("Not found"))
}

// blockingFilings lets the first filing download through and holds the
// others until their context ends: a server stopped mid-fetch. held, when
// set, receives the ref of each download it holds.
type blockingFilings struct {
	*registry.Registry
	opened chan string
	held   chan string
}

func (b *blockingFilings) OpenFiling(ctx context.Context, country string, f onboarding.Filing) (io.ReadCloser, error) {
	select {
	case b.opened <- f.Ref:
		return b.Registry.OpenFiling(ctx, country, f)
	default:
	}
	select {
	case b.held <- f.Ref:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestRegistryDocumentsResumeAfterRestart stops the job after one of three
// documents is stored, closes the store, and starts again on the same data:
// the application resumes and completes with each document exactly once.
func TestRegistryDocumentsResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	reg, err := registry.New(registry.Options{Mode: "fixtures", Fixtures: os.DirFS("../testdata/registry")})
	if err != nil {
		t.Fatal(err)
	}
	files, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := blobs.NewSigner(bytes.Repeat([]byte{9}, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	passes := newJobPasses()
	data := storetest.NewData(t)
	start := func(r onboarding.Registry) (storetest.Store, *onboarding.Service) {
		store := data.Open(t)
		svc, err := onboarding.New(onboarding.Options{
			Store: store, Registry: r, Organizations: testOrganizations(t), PublicURL: "https://onboard.test",
			Blobs: files, Links: signer, RegistryRetries: []time.Duration{},
			PageCounter: pdf.PageCount, RegistryDocumentsIdle: passes.end,
		})
		if err != nil {
			t.Fatal(err)
		}
		return store, svc
	}

	blocking := &blockingFilings{Registry: reg, opened: make(chan string, 1), held: make(chan string)}
	store, svc := start(blocking)
	key, _, err := svc.CreateAPIKey(context.Background(), onboarding.KeySpec{OrgID: "acme", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	k, err := svc.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.CreateApplication(context.Background(), k, onboarding.CreateRequest{
		PrimaryContact: &onboarding.ContactInput{Email: "a@example.com"}, Country: "GB",
		CompanyNumber: "10000001", CompanyName: "Northwind Trading Ltd",
	})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Application.ID

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.RunRegistryDocuments(ctx) }()
	// The job stores each filing before it opens the next: once the second
	// download hangs, the first document is stored.
	select {
	case <-blocking.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the second download never started")
	}
	cancel() // the server stops while the second download hangs
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunRegistryDocuments = %v, want context.Canceled", err)
	}
	app, err := store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if app.RegistryDocumentsStatus != onboarding.RegistryDocumentsPending || len(app.RegistryDocuments) != 1 {
		t.Fatalf("after the stop: status %q with %d documents, want pending with 1", app.RegistryDocumentsStatus, len(app.RegistryDocuments))
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store, svc = start(reg)
	defer store.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done = make(chan error, 1)
	firstPass := passes.ended()
	go func() { done <- svc.RunRegistryDocuments(ctx) }()
	select { // the application, pending since the restart, is in the job's first pass
	case <-firstPass:
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed job never worked through its queue")
	}
	cancel()
	<-done
	if app, err = store.Application(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if app.RegistryDocumentsStatus != onboarding.RegistryDocumentsComplete {
		t.Errorf("status %q, want complete", app.RegistryDocumentsStatus)
	}
	refs := map[string]bool{}
	for _, d := range app.RegistryDocuments {
		if refs[d.Ref] {
			t.Errorf("filing %s stored twice", d.Ref)
		}
		refs[d.Ref] = true
	}
	if len(refs) != 3 {
		t.Errorf("%d documents stored, want 3", len(refs))
	}
	if pending, err := store.PendingRegistryDocuments(context.Background()); err != nil || len(pending) != 0 {
		t.Errorf("pending queue after completion = %v, %v; want empty", pending, err)
	}
	// Exactly the three blobs remain: the interrupted download left nothing.
	var stored int
	root := filepath.Join(dir, "blobs")
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, p); !d.IsDir() && !strings.HasPrefix(rel, "tmp") {
			stored++
		}
		return nil
	})
	if err != nil || stored != 3 {
		t.Errorf("blob files = %d (%v), want 3", stored, err)
	}
}

// TestSearchCompanies runs the company-selection search through the Service
// and the sandbox recordings.
func TestSearchCompanies(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	names := func(ms []onboarding.CompanyMatch) []string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%s %s active=%v", m.Number, m.Name, m.Active))
		}
		return out
	}
	tests := []struct {
		country, query string
		want           []string
		err            *onboarding.Error
	}{
		{"GB", "north", []string{"10000001 NORTHWIND TRADING LIMITED active=true", "10000009 NORTHERN LIGHTS CATERING LTD active=false"}, nil},
		{"GB", "  North ", []string{"10000001 NORTHWIND TRADING LIMITED active=true", "10000009 NORTHERN LIGHTS CATERING LTD active=false"}, nil},
		{"GB", "bluebell", []string{"10000002 BLUEBELL HOLDINGS PLC active=true", "10000008 BLUEBELL GROUP LIMITED active=true"}, nil},
		{"GB", "highland", []string{"SC100007 HIGHLAND FISHERIES LTD active=true"}, nil},
		{"GB", "zebra crossings", nil, nil},
		{"IE", "emerald", []string{"100001 EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY active=true", "100005 EMERALD ISLE TOURS LIMITED active=false"}, nil},
		{"IE", "baile", []string{"100003 BAILE ÁTHA CLIATH TEORANTA active=true"}, nil},
		{"GB", "no", nil, onboarding.ErrSearchQueryTooShort},
		{"GB", strings.Repeat("a", 161), nil, onboarding.ErrSearchQueryTooLong},
		{"FR", "north", nil, onboarding.ErrSearchNotAvailable("FR")},
	}
	for _, tt := range tests {
		got, err := e.svc.SearchCompanies(ctx, tt.country, tt.query)
		if diff := cmp.Diff(tt.err, onboarding.AsError(err)); diff != "" {
			t.Errorf("SearchCompanies(%s, %q) error (-want +got):\n%s", tt.country, tt.query, diff)
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("SearchCompanies(%s, %q) (-want +got):\n%s", tt.country, tt.query, diff)
		}
	}
}
