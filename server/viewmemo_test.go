package server

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage"
)

// TestApplicationJSONRenderedOnce holds get-application's answer, which is
// rendered once per version of an application with holes for its links
// (viewMemo), to the view of the stored application encoded afresh: on the
// first get, on a later get whose links must be signed anew, and after the
// application changes.
func TestApplicationJSONRenderedOnce(t *testing.T) {
	var now atomic.Int64
	now.Store(viewNow.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	svc, store := newViewServiceAt(t, clock)
	memo := newViewMemo(renderedViewsBytes)
	ctx := context.Background()
	key := &onboarding.APIKey{OrgID: "acme", Scopes: []onboarding.Scope{onboarding.ScopeApplicationsRead}}

	custom := viewApplication(viewCustom) // sensitive values are the partner's to read
	custom.ID = "7a1c2a9e-5d7b-4c3a-9e8f-0a1b2c3d4e5f"
	for i := range custom.Participants {
		custom.Participants[i].LinkSlug += "-custom"
	}
	apps := []*onboarding.Application{viewApplication(viewStd), custom, bareApplication()}
	for _, app := range apps {
		app.Seq = ulid.Make()
		if err := store.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}

	// want is the view of the stored application, encoded now.
	want := func(t *testing.T, id string) string {
		t.Helper()
		app, err := store.Application(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		view, err := svc.View(app, onboarding.ViewOptions{Links: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(view)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	get := func(t *testing.T, id string) string {
		t.Helper()
		b, err := memo.applicationJSON(ctx, svc, key, id, []byte("before:"))
		if err != nil {
			t.Fatal(err)
		}
		s, ok := strings.CutPrefix(string(b), "before:")
		if !ok {
			t.Fatalf("ApplicationJSON did not append to dst: %.40s", b)
		}
		return s
	}

	for _, app := range apps {
		t.Run(app.ID, func(t *testing.T) {
			now.Store(viewNow.UnixNano())
			first := get(t, app.ID)
			if diff := cmp.Diff(want(t, app.ID), first); diff != "" {
				t.Errorf("first get (-fresh view +answer):\n%s", diff)
			}
			now.Store(viewNow.Add(90 * time.Second).UnixNano())
			later := get(t, app.ID)
			if diff := cmp.Diff(want(t, app.ID), later); diff != "" {
				t.Errorf("get 90 s later (-fresh view +answer):\n%s", diff)
			}
			if strings.Contains(first, "download_url") && first == later {
				t.Errorf("get 90 s later answered the links of the first get")
			}
			if again := get(t, app.ID); again != later {
				t.Errorf("a second get at the same instant differs:\n%s\n%s", later, again)
			}

			if _, err := store.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				if a.Data.Fields == nil {
					a.Data.Fields = map[string]json.RawMessage{}
				}
				a.Data.Fields["company_name"] = json.RawMessage(`"Renamed <Ltd>"`)
				a.Data.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {
					FileID: "d-new", FileName: "new.pdf", FileType: "application/pdf", UploadedAt: viewNow,
					Status: onboarding.DocumentAccepted, BlobID: "blob-new",
				}}
				a.UpdatedAt = clock()
				return onboarding.Changes{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			changed := get(t, app.ID)
			if diff := cmp.Diff(want(t, app.ID), changed); diff != "" {
				t.Errorf("get after an update (-fresh view +answer):\n%s", diff)
			}
			for _, s := range []string{`"company_name":"Renamed \u003cLtd\u003e"`, `/files/blob-new?`} {
				if !strings.Contains(changed, s) {
					t.Errorf("get after an update lacks %s:\n%s", s, changed)
				}
			}
		})
	}
}

// viewNow is the clock of the view tests: it fixes the download links'
// expiry, so their signatures are the same on every run.
var viewNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// Configurations of the view tests' organization.
const (
	viewStd    = "view-std"    // the standard form
	viewCustom = "view-custom" // person-scoped fields sensitive, tax_id not
)

// viewCustomForm is the standard form with the date of birth, home
// address, identity document and an extra tax number of each person
// sensitive, and tax_id and bank_account_iban not.
func viewCustomForm(t *testing.T) *onboarding.Form {
	t.Helper()
	fields := append([]onboarding.Field(nil), onboarding.StandardForm().Fields()...)
	for i := range fields {
		switch f := &fields[i]; f.ID {
		case "person_date_of_birth", "person_home_address", "person_id_document":
			f.Sensitive = true
		case "tax_id", "bank_account_iban":
			f.Sensitive = false
		}
	}
	fields = append(fields, onboarding.Field{
		ID: "person_tax_number", Label: "Personal tax number", Type: onboarding.TypeText, Category: "people", PersonScoped: true, Sensitive: true,
	})
	form, err := onboarding.NewForm("custom", fields)
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// newViewServiceAt returns a Service that signs download links with a
// fixed key and clock as its clock, for an organization with the
// configurations viewStd and viewCustom, and its store.
func newViewServiceAt(t *testing.T, clock func() time.Time) (*onboarding.Service, *storage.Store) {
	t.Helper()
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	signer, err := blobs.NewSigner(bytes.Repeat([]byte{7}, 32), clock)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Now: clock, PageCounter: pdf.PageCount, PublicURL: "https://onboard.example", Links: signer,
		Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: viewStd, Configs: []*onboarding.Configuration{
			{ID: viewStd, Form: onboarding.StandardForm(), Countries: []string{"GB"}},
			{ID: viewCustom, Form: viewCustomForm(t), Countries: []string{"GB"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store
}

// viewApplication returns an application on configuration configID with
// something in every member of the view: sensitive values of both forms,
// documents of every status with and without files, registry documents,
// a contact without a name and participants.
func viewApplication(configID string) *onboarding.Application {
	at := time.Date(2026, 3, 1, 10, 11, 12, 345_678_000, time.FixedZone("CET", 3600))
	overridden := at.Add(26 * time.Hour)
	submitted := at.Add(48 * time.Hour)
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	return &onboarding.Application{
		ID: "6f1c2a9e-5d7b-4c3a-9e8f-0a1b2c3d4e5f", OrgID: "acme", ConfigID: configID, Country: "GB",
		Status: onboarding.StatusSubmitted,
		Data: onboarding.Data{
			Fields: map[string]json.RawMessage{
				"company_name":       raw(`"Northwind Trading Ltd"`),
				"company_number":     raw(`"10000001"`),
				"registered_address": raw(`{"line1":"14 Harbour Road","city":"Bristol","postcode":"BS1 6XX","country":"GB"}`),
				"annual_turnover":    raw(`{"amount":1250000,"currency":"GBP"}`),
				"tax_id":             raw(`"GB123456789"`),
				"bank_account_iban":  raw(`"GB82WEST12345698765432"`),
			},
			People: []onboarding.Person{
				{
					ID: "p1", Source: onboarding.SourceRegistry, Roles: []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonUBO},
					FullName: "Eleanor Mary Hargreaves", FirstName: "Eleanor Mary", LastName: "Hargreaves",
					Email: "eleanor@northwind.example", PhoneNumber: "+447700900123", DateOfBirth: "1979-03", Nationality: "GB",
					HomeAddress: &onboarding.Address{Line1: "1 Elm Row", City: "Bath", Postcode: "BA1 1AA", Country: "GB"},
					Fields:      map[string]json.RawMessage{"person_tax_number": raw(`"AB123456C"`)},
					Documents: map[string]onboarding.Document{
						"person_id_document": {FileID: "d-p1", FileName: "passport scan.pdf", FileType: "application/pdf", UploadedAt: at,
							Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonBaselinePassed, BlobID: "blob-p1"},
					},
				},
				{ID: "p2", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonShareholder}, FullName: "Kim", LastName: "Kim"},
			},
			Entities: []onboarding.Entity{{
				ID: "e1", Source: onboarding.SourceUserAdded, Name: "Northwind Holdings BV", Type: onboarding.EntityHoldingCompany, Country: "NL",
				Documents: map[string]onboarding.Document{
					"certificate_of_incorporation": {FileID: "d-e1", FileName: "kvk.pdf", FileType: "application/pdf", UploadedAt: at,
						Status: onboarding.DocumentForced, UserOverrideReason: "checked by hand", OverriddenAt: &overridden, BlobID: "blob-e1"},
				},
			}},
			Ownership: []onboarding.Ownership{
				{ID: "o1", OwnerType: onboarding.OwnerPerson, OwnerID: "p1", OwnedType: onboarding.OwnedTarget, Percentage: 75, PercentageBand: "75-100", IsDirect: true},
				{ID: "o2", OwnerType: onboarding.OwnerEntity, OwnerID: "e1", OwnedType: onboarding.OwnedEntity, OwnedID: "e1", Percentage: 12.5, IsNominee: true},
			},
			Documents: map[string]onboarding.Document{
				"certificate_of_incorporation": {FileID: "d-c1", FileName: "coi.pdf", FileType: "application/pdf", UploadedAt: at,
					Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonValidationPassed, BlobID: "blob-c1"},
				"proof_of_address": {FileID: "d-c2", UploadedAt: at, Status: onboarding.DocumentSkipped, UserOverrideReason: "exempt", OverriddenAt: &overridden},
				"bank_statement":   {FileID: "d-c3", FileName: "bank.pdf", FileType: "application/pdf", UploadedAt: at, Status: onboarding.DocumentRejected, BlobID: "blob-c3"},
			},
			Meta: onboarding.Meta{
				PrimaryContact:  &onboarding.Contact{Email: "jane@northwind.example", Role: "cfo"},
				RegistrySources: []onboarding.RegistrySource{onboarding.SourceUKRegistry},
				WebsiteFavicon:  "https://northwind.example/favicon.ico", WebExtractedIndustry: "software",
			},
		},
		Participants: []onboarding.Participant{
			{ID: "pa1", LinkSlug: "slug-primary-0123456789", Email: "jane@northwind.example", Name: "Jane Smith", Role: onboarding.RolePrimary},
			{ID: "pa2", LinkSlug: "slug-collab-0123456789", Email: "sam@northwind.example", Role: onboarding.RoleCollaborator, InvitedBy: "pa1"},
		},
		CreatedAt: at, UpdatedAt: submitted, SubmittedAt: &submitted,
		RegistryDocumentsStatus: onboarding.RegistryDocumentsPartial,
		RegistryDocuments: []onboarding.RegistryDocument{
			{ID: "r1", Source: onboarding.SourceUKRegistry, DocumentType: "AA", FilingDate: "2025-06-30", FetchedAt: &at, BlobID: "blob-r1"},
			{ID: "r2", Source: onboarding.SourceUKRegistry, DocumentType: "CS01", BlobID: "blob-r2", FileName: "confirmation.pdf"},
			{ID: "r3", Source: onboarding.SourceUKRegistry, DocumentType: "NEWINC"},
		},
	}
}

// bareApplication is an application with nothing collected yet: no
// fields, no primary participant, registry documents still pending.
func bareApplication() *onboarding.Application {
	at := time.Date(2026, 3, 1, 10, 11, 12, 0, time.UTC)
	return &onboarding.Application{
		ID: "1e2d3c4b-5a69-4788-9aab-bccddeeff001", OrgID: "acme", ConfigID: viewStd, Country: "GB", Status: onboarding.StatusCreated,
		CreatedAt: at, UpdatedAt: at, CompletedAt: &at,
		RegistryDocumentsStatus: onboarding.RegistryDocumentsPending,
		RegistryDocuments:       []onboarding.RegistryDocument{{ID: "r1", Source: onboarding.SourceUKRegistry, DocumentType: "AA", BlobID: "blob-r1"}},
	}
}
