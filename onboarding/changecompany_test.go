package onboarding_test

import (
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// registryParties are the register's officers and owners of the company
// the change tests choose: a director holding 50-75% and a corporate owner.
func registryParties(context.Context) (onboarding.Parties, error) {
	return onboarding.Parties{
		People: []onboarding.RegistryPerson{{Roles: []onboarding.PersonRole{onboarding.PersonDirector}, FullName: "Jane Alexandra Smith",
			FirstName: "Jane Alexandra", LastName: "Smith", DateOfBirth: "1970-03", Nationality: "GB", Shares: &onboarding.ShareBand{Lower: 50, Upper: 75}}},
		Entities: []onboarding.RegistryEntity{{Name: "NORTHWIND HOLDINGS LIMITED", Type: onboarding.EntityParent, Country: "GB", Shares: &onboarding.ShareBand{Lower: 25, Upper: 50}}},
	}, nil
}

// chosenApp stores a GB application on company selection whose applicant
// chose NORTHWIND TRADING LIMITED, with its director and corporate owner
// from the register.
func chosenApp(t *testing.T, e *formEnv) string {
	t.Helper()
	id := selectingApp(e)
	if err := e.svc.SelectCompany(context.Background(), e.primary(id), "10000001", "NORTHWIND TRADING LIMITED"); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestChangeCompany(t *testing.T) {
	accepted := func(blob string) onboarding.Document {
		return onboarding.Document{FileID: "f-" + blob, FileName: "file.pdf", FileType: "application/pdf", UploadedAt: formNow,
			Status: onboarding.DocumentAccepted, BlobID: blob, Size: 10}
	}
	tests := []struct {
		name     string
		docs     onboarding.RegistryDocumentsStatus // the registry documents' status when the company is changed
		withDocs bool                               // a filing is stored
	}{
		{name: "registry documents fetched", docs: onboarding.RegistryDocumentsComplete, withDocs: true},
		{name: "registry documents still being fetched", docs: onboarding.RegistryDocumentsPending},
		{name: "no registry documents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t, formOptions{registry: &fakeRegistry{parties: registryParties}})
			id := chosenApp(t, e)
			regPersonBlob, regEntityBlob, filingBlob := e.putBlob("registry person's id"), e.putBlob("registry entity's"), e.putBlob(filingPDF)
			ownBlob, companyBlob := e.putBlob("applicant's own person's id"), e.putBlob("bank statement")
			// The applicant completes the application around the register's
			// details: their own person, company and ownership, documents,
			// and answers of their own.
			e.seed(id, func(a *onboarding.Application) {
				d := &a.Data
				d.People[0].Email = "jane@example.com"
				d.People[0].Documents = map[string]onboarding.Document{"identity_document": accepted(regPersonBlob)}
				d.Entities[0].Documents = map[string]onboarding.Document{"certificate_of_incorporation": accepted(regEntityBlob)}
				d.People = append(d.People, onboarding.Person{ID: "own-person", Source: onboarding.SourceUserAdded, FullName: "Sam Lee",
					Roles: []onboarding.PersonRole{onboarding.PersonDirector}, Documents: map[string]onboarding.Document{"identity_document": accepted(ownBlob)}})
				d.Entities = append(d.Entities, onboarding.Entity{ID: "own-entity", Source: onboarding.SourceUserAdded, Name: "Lee Family Trust", Type: onboarding.EntityOther, Country: "GB"})
				d.Ownership = append(d.Ownership,
					onboarding.Ownership{ID: "own-of-target", OwnerType: onboarding.OwnerPerson, OwnerID: "own-person", OwnedType: onboarding.OwnedTarget, Percentage: 10, IsDirect: true},
					onboarding.Ownership{ID: "own-of-registry-entity", OwnerType: onboarding.OwnerPerson, OwnerID: "own-person", OwnedType: onboarding.OwnedEntity, OwnedID: d.Entities[0].ID, Percentage: 40},
					onboarding.Ownership{ID: "entity-of-own-entity", OwnerType: onboarding.OwnerEntity, OwnerID: "own-entity", OwnedType: onboarding.OwnedTarget, Percentage: 5, IsDirect: true})
				d.Documents = map[string]onboarding.Document{"bank_statement": accepted(companyBlob)}
				d.Fields["industry"] = raw("software")
				d.Fields["company_type"] = raw("private_limited")
				d.Fields["incorporation_date"] = raw("2016-01-04")
				d.Fields["registered_address"] = raw(map[string]string{"line1": "1 High Street", "city": "London", "postcode": "EC1A 1AA", "country": "GB"})
				a.Visited = []string{"company", "business"}
				a.RegistryDocumentsStatus = tt.docs
				if tt.withDocs {
					a.RegistryDocuments = []onboarding.RegistryDocument{{ID: "rd-1", Ref: "filing-1", Source: onboarding.SourceUKRegistry,
						DocumentType: "certificate_of_incorporation", BlobID: filingBlob, FileName: "incorporation.pdf"}}
				}
			})
			chosen := e.app(id)
			if !chosen.CompanyChosen {
				t.Fatal("SelectCompany did not record that the applicant chose the company")
			}
			// What the change must leave: the application as it was, less
			// everything from the register.
			want := e.app(id)
			for _, f := range []string{"company_number", "company_name", "company_type", "incorporation_date", "registered_address"} {
				delete(want.Data.Fields, f)
			}
			want.Data.People = []onboarding.Person{want.Data.People[1]}
			want.Data.Entities = []onboarding.Entity{want.Data.Entities[1]}
			want.Data.Ownership = slices.DeleteFunc(want.Data.Ownership, func(o onboarding.Ownership) bool {
				return o.ID != "own-of-target" && o.ID != "entity-of-own-entity"
			})
			want.Data.Meta.RegistrySources = nil
			want.RegistryNumber, want.CompanyChosen = "", false
			want.RegistryDocuments, want.RegistryDocumentsStatus = nil, ""
			want.Visited = []string{"business"} // the company's details are to check again
			want.UpdatedAt = formNow

			before := len(e.activity(id))
			v := e.primary(id)
			if !v.CanChangeCompany() {
				t.Fatal("CanChangeCompany = false for a company the applicant chose")
			}
			if err := e.svc.ChangeCompany(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			got := e.app(id)
			if diff := cmp.Diff(want, got, cmpEmpty); diff != "" {
				t.Errorf("application after the change (-want +got):\n%s", diff)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionCompanyChanged, "10000001")})
			for blob, kept := range map[string]bool{regPersonBlob: false, regEntityBlob: false, filingBlob: !tt.withDocs, ownBlob: true, companyBlob: true} {
				if e.blobExists(blob) != kept {
					t.Errorf("blob %s stored = %v, want %v", blob, !kept, kept)
				}
			}
			pending, err := e.store.PendingRegistryDocuments(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(pending, id) {
				t.Error("the application is still queued for registry documents")
			}
			// The applicant is back at the company search, and may choose again.
			if !v.NeedsCompany() || v.CanChangeCompany() {
				t.Errorf("after the change: NeedsCompany %v, CanChangeCompany %v; want true, false", v.NeedsCompany(), v.CanChangeCompany())
			}
			if m := v.Missing(); len(m) == 0 || m[0].Message != "Choose your company from the register" {
				t.Errorf("missing after the change = %+v, want the company first", m)
			}
			if err := e.svc.SelectCompany(context.Background(), v, "10000001", "NORTHWIND TRADING LIMITED"); err != nil {
				t.Fatalf("choosing again: %v", err)
			}
			again := e.app(id)
			if !again.CompanyChosen || again.RegistryNumber != "10000001" || len(again.Data.People) != 2 || again.Data.People[0].FullName != "Sam Lee" {
				t.Errorf("chosen again: chosen %v, number %q, people %+v", again.CompanyChosen, again.RegistryNumber, again.Data.People)
			}
		})
	}
}

// TestChangeCompanyRefused covers who may not change the company, and
// when: the application is left as it was, with nothing logged.
func TestChangeCompanyRefused(t *testing.T) {
	tests := []struct {
		name      string
		app       func(t *testing.T, e *formEnv) string
		visitor   func(e *formEnv, id string) *onboarding.Visitor
		meanwhile func(a *onboarding.Application) // after the visitor was built
		wantErr   error
	}{
		{name: "no company chosen yet", app: func(_ *testing.T, e *formEnv) string { return selectingApp(e) }, wantErr: onboarding.ErrCompanyNotChosen},
		{
			name: "the partner gave the number at create, on company selection",
			app: func(_ *testing.T, e *formEnv) string {
				id := selectingApp(e)
				e.seed(id, func(a *onboarding.Application) {
					a.RegistryNumber = "10000001"
					a.Data.Fields["company_number"], a.Data.Fields["company_name"] = raw("10000001"), raw("NORTHWIND TRADING LIMITED")
				})
				return id
			},
			wantErr: onboarding.ErrCompanyNotChangeable,
		},
		{name: "the partner gave the company, without company selection", app: func(_ *testing.T, e *formEnv) string { return e.create() }, wantErr: onboarding.ErrCompanyNotChangeable},
		{
			name: "company selection turned off since the choice",
			app: func(t *testing.T, e *formEnv) string {
				id := chosenApp(t, e)
				e.seed(id, func(a *onboarding.Application) { a.ConfigID = configStd })
				return id
			},
			wantErr: onboarding.ErrCompanyNotChangeable,
		},
		{
			name: "submitted",
			app: func(t *testing.T, e *formEnv) string {
				id := chosenApp(t, e)
				e.seed(id, func(a *onboarding.Application) { a.Status = onboarding.StatusSubmitted })
				return id
			},
			wantErr: onboarding.ErrApplicationFrozen,
		},
		{
			name: "submitted meanwhile", app: chosenApp,
			meanwhile: func(a *onboarding.Application) { a.Status = onboarding.StatusSubmitted },
			wantErr:   onboarding.ErrApplicationFrozen,
		},
		{
			name: "changed meanwhile in another browser", app: chosenApp,
			meanwhile: func(a *onboarding.Application) {
				a.RegistryNumber, a.CompanyChosen = "", false
				delete(a.Data.Fields, "company_number")
			},
			wantErr: onboarding.ErrCompanyNotChosen,
		},
		{name: "signed out", app: chosenApp, visitor: (*formEnv).signedOut, wantErr: onboarding.ErrNotSignedIn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t, formOptions{registry: &fakeRegistry{parties: registryParties}})
			id := tt.app(t, e)
			v := e.primary(id)
			if tt.visitor != nil {
				v = tt.visitor(e, id)
			}
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			} else if v.CanChangeCompany() {
				t.Error("CanChangeCompany = true")
			}
			stored := e.app(id)
			before := len(e.activity(id))
			checkErr(t, e.svc.ChangeCompany(context.Background(), v), tt.wantErr)
			if diff := cmp.Diff(stored, e.app(id)); diff != "" {
				t.Errorf("a refused change changed the application (-before +after):\n%s", diff)
			}
			e.checkActivity(id, before, nil)
		})
	}
}

// companiesRegistry is a GB register of two companies whose filing
// history waits, the first time it is asked, until the test lets it
// answer: the company can be changed while its documents are fetched.
type companiesRegistry struct {
	asked   chan string   // receives the number of the first Filings call
	answer  chan struct{} // closed to let the first Filings call answer
	mu      sync.Mutex
	filings int
}

var companies = map[string]string{"10000001": "NORTHWIND TRADING LIMITED", "10000002": "SOUTHWIND TRADING LIMITED"}

func (r *companiesRegistry) Supports(c string, f onboarding.Feature) bool {
	return c == "GB"
}
func (r *companiesRegistry) VerifyCompany(_ context.Context, _, number, _ string) (onboarding.Company, error) {
	return onboarding.Company{Country: "GB", Number: number, Name: companies[number], Status: "active", Source: "uk_registry"}, nil
}
func (r *companiesRegistry) NormalizeNumber(_, number string) (string, error) { return number, nil }
func (r *companiesRegistry) SearchCompanies(context.Context, string, string, int) ([]onboarding.CompanyMatch, error) {
	return nil, nil
}
func (r *companiesRegistry) Parties(context.Context, string, string) (onboarding.Parties, error) {
	return onboarding.Parties{}, nil
}
func (r *companiesRegistry) Filings(ctx context.Context, _, number string) ([]onboarding.Filing, error) {
	r.mu.Lock()
	r.filings++
	first := r.filings == 1
	r.mu.Unlock()
	if first {
		r.asked <- number
		select {
		case <-r.answer:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return []onboarding.Filing{{Ref: "filing-of-" + number, DocumentType: "certificate_of_incorporation", FileName: number + ".pdf"}}, nil
}
func (r *companiesRegistry) OpenFiling(_ context.Context, _ string, f onboarding.Filing) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(filingPDF)), nil
}

// TestChangeCompanyWhileFetchingDocuments changes the company while the
// registry documents job fetches the first company's filings, and chooses
// another: the first company's filing never lands on the application, and
// the second company's documents are fetched.
func TestChangeCompanyWhileFetchingDocuments(t *testing.T) {
	dir := t.TempDir()
	store := storetest.Open(t)
	files, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	reg := &companiesRegistry{asked: make(chan string, 1), answer: make(chan struct{})}
	idle := make(chan struct{}, 1)
	org := &onboarding.Organization{ID: "acme", Name: "Acme Payments", DefaultConfig: configSelect, Configs: []*onboarding.Configuration{
		{ID: configSelect, Form: onboarding.StandardForm(), Countries: []string{"GB"}, CompanySelection: true, RegistryDocuments: true},
	}}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Registry: reg, Blobs: files, PageCounter: pdf.PageCount, RegistryRetries: []time.Duration{time.Millisecond},
		SessionKey: []byte(strings.Repeat("k", 32)), Organizations: []*onboarding.Organization{org},
		RegistryDocumentsIdle: func() {
			select {
			case idle <- struct{}{}:
			default: // the test has not read the last one yet
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full, _, err := svc.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: "acme", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := svc.Authenticate(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.CreateApplication(ctx, key, onboarding.CreateRequest{PrimaryContact: &onboarding.ContactInput{Email: "a@example.com"}, Country: "GB"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Application.ID
	visitor := func() *onboarding.Visitor {
		app, err := store.Application(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return &onboarding.Visitor{App: app, Participant: app.Primary(), Org: org, Config: org.Configs[0], SignedIn: true}
	}
	if err := svc.SelectCompany(ctx, visitor(), "10000001", "NORTHWIND TRADING LIMITED"); err != nil {
		t.Fatal(err)
	}

	jobCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.RunRegistryDocuments(jobCtx) }()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case n := <-reg.asked:
		if n != "10000001" {
			t.Fatalf("filings fetched for %s, want 10000001", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the registry documents job did not fetch the filings within 10s")
	}
	// While the job waits for the first company's filing history, the
	// applicant changes the company and chooses another.
	if err := svc.ChangeCompany(ctx, visitor()); err != nil {
		t.Fatal(err)
	}
	if err := svc.SelectCompany(ctx, visitor(), "10000002", "SOUTHWIND TRADING LIMITED"); err != nil {
		t.Fatal(err)
	}
	close(reg.answer)
	// The job's pass over the first company ends, then the next pass (woken
	// by the second choice) fetches the second's: wait until the
	// application no longer waits.
	var app *onboarding.Application
	for {
		waitIdle(t, idle)
		if app, err = store.Application(ctx, id); err != nil {
			t.Fatal(err)
		}
		if app.RegistryDocumentsStatus != onboarding.RegistryDocumentsPending {
			break
		}
	}
	refs := []string{}
	for _, d := range app.RegistryDocuments {
		refs = append(refs, d.Ref)
	}
	if diff := cmp.Diff([]string{"filing-of-10000002"}, refs); diff != "" {
		t.Errorf("registry documents stored (-want +got):\n%s", diff)
	}
	if app.RegistryDocumentsStatus != onboarding.RegistryDocumentsComplete || app.RegistryNumber != "10000002" {
		t.Errorf("registry documents %s for company %s, want complete for 10000002", app.RegistryDocumentsStatus, app.RegistryNumber)
	}
	// Only the second company's filing is stored: the first's file was
	// removed when it could not be added.
	n := 0
	if err := filepath.WalkDir(filepath.Join(dir, "blobs"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d files stored, want 1 (the second company's filing)", n)
	}
}
