package onboarding_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage"
)

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

// newViewService returns a Service that signs download links with a fixed
// key and clock, for an organization with the configurations viewStd and
// viewCustom.
func newViewService(t *testing.T) *onboarding.Service {
	t.Helper()
	svc, _ := newViewServiceAt(t, func() time.Time { return viewNow })
	return svc
}

// newViewServiceAt is newViewService with clock as its clock, and its
// store.
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

// TestViewIsTheGetApplicationPayload pins View with links to the bytes the
// server's get-application wrote before the view moved into onboarding.
func TestViewIsTheGetApplicationPayload(t *testing.T) {
	svc := newViewService(t)
	for _, tt := range []struct {
		name string
		app  *onboarding.Application
		want string
	}{
		{"full", viewApplication(viewStd), viewFullWant},
		{"bare", bareApplication(), viewBareWant},
	} {
		t.Run(tt.name, func(t *testing.T) {
			view, err := svc.View(tt.app, onboarding.ViewOptions{Links: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(view)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("View (-before +now):\n%s", diff)
			}
		})
	}
}

// viewFullWant and viewBareWant are what get-application wrote for
// viewApplication(viewStd) and bareApplication before the move.
const (
	viewFullWant = `{"id":"6f1c2a9e-5d7b-4c3a-9e8f-0a1b2c3d4e5f","config_id":"view-std","status":"submitted","link":"https://onboard.example/a/slug-primary-0123456789",` +
		`"data":{"fields":{"annual_turnover":{"amount":1250000,"currency":"GBP"},"bank_account_iban":"GB82WEST12345698765432","company_name":"Northwind Trading Ltd","company_number":"10000001","registered_address":{"line1":"14 Harbour Road","city":"Bristol","postcode":"BS1 6XX","country":"GB"},"tax_id":"GB123456789"},` +
		`"people":[{"id":"p1","source":"registry","roles":["director","ubo"],"full_name":"Eleanor Mary Hargreaves","first_name":"Eleanor Mary","last_name":"Hargreaves","email":"eleanor@northwind.example","phone_number":"+447700900123","date_of_birth":"1979-03","nationality":"GB","home_address":{"line1":"1 Elm Row","city":"Bath","postcode":"BA1 1AA","country":"GB"},"documents":{"person_id_document":{"file_id":"d-p1","file_name":"passport scan.pdf","file_type":"application/pdf","uploaded_at":"2026-03-01T09:11:12.345Z","status":"accepted","acceptance_reason":"baseline_passed","download_url":"https://onboard.example/files/blob-p1?disposition=attachment\u0026expires=1772625660\u0026filename=passport+scan.pdf\u0026signature=eo8VPxFvcnxJnWtS7GYR6Fsr56CdQybCj_6HwtVVcwY\u0026type=application%2Fpdf"}}},` +
		`{"id":"p2","source":"user_added","roles":["shareholder"],"full_name":"Kim","first_name":"","last_name":"Kim","documents":{}}],` +
		`"entities":[{"id":"e1","source":"user_added","name":"Northwind Holdings BV","type":"holding_company","country":"NL","documents":{"certificate_of_incorporation":{"file_id":"d-e1","file_name":"kvk.pdf","file_type":"application/pdf","uploaded_at":"2026-03-01T09:11:12.345Z","status":"forced","user_override_reason":"checked by hand","overridden_at":"2026-03-02T11:11:12.345Z","download_url":"https://onboard.example/files/blob-e1?disposition=attachment\u0026expires=1772625660\u0026filename=kvk.pdf\u0026signature=BiHTzsvYqaUqppQeitsawUj0B196WZeGV9BV6Uncl7A\u0026type=application%2Fpdf"}}}],` +
		`"ownership":[{"id":"o1","owner_type":"person","owner_id":"p1","owned_type":"target","percentage":75,"percentage_band":"75-100","is_direct":true,"is_nominee":false},{"id":"o2","owner_type":"entity","owner_id":"e1","owned_type":"entity","owned_id":"e1","percentage":12.5,"is_direct":false,"is_nominee":true}],` +
		`"documents":{"certificate_of_incorporation":{"file_id":"d-c1","file_name":"coi.pdf","file_type":"application/pdf","uploaded_at":"2026-03-01T09:11:12.345Z","status":"accepted","acceptance_reason":"validation_passed","download_url":"https://onboard.example/files/blob-c1?disposition=attachment\u0026expires=1772625660\u0026filename=coi.pdf\u0026signature=5C-J6gvZw4l6uhCgfSEsGay7Yv_39PGRAzjG4H7OOzA\u0026type=application%2Fpdf"},"proof_of_address":{"file_id":"d-c2","file_name":"","file_type":"","uploaded_at":"2026-03-01T09:11:12.345Z","status":"skipped","user_override_reason":"exempt","overridden_at":"2026-03-02T11:11:12.345Z"}},` +
		`"meta":{"primary_contact":{"name":null,"email":"jane@northwind.example","role":"cfo"},"registry_sources":["uk_registry"],"website_favicon":"https://northwind.example/favicon.ico","web_extracted_industry":"software"}},` +
		`"participants":[{"email":"jane@northwind.example","name":"Jane Smith","role":"primary","link":"https://onboard.example/a/slug-primary-0123456789"},{"email":"sam@northwind.example","name":null,"role":"collaborator","link":"https://onboard.example/a/slug-collab-0123456789"}],` +
		`"registry_documents":[{"id":"r1","source":"uk_registry","document_type":"AA","filing_date":"2025-06-30","fetched_at":"2026-03-01T09:11:12.345Z","download_url":"https://onboard.example/files/blob-r1?disposition=attachment\u0026expires=1772625660\u0026filename=AA.pdf\u0026signature=noyBLRoXRfT35XgENglwG0CGt77XyIieXIw1499TD8g\u0026type=application%2Fpdf"},` +
		`{"id":"r2","source":"uk_registry","document_type":"CS01","filing_date":null,"fetched_at":null,"download_url":"https://onboard.example/files/blob-r2?disposition=attachment\u0026expires=1772625660\u0026filename=confirmation.pdf\u0026signature=fZPJ9xHAHPfUv7dhSEBWuQiXy8hA7WGs8MgoZSWN07I\u0026type=application%2Fpdf"},` +
		`{"id":"r3","source":"uk_registry","document_type":"NEWINC","filing_date":null,"fetched_at":null}],"registry_documents_status":"partial",` +
		`"created_at":"2026-03-01T09:11:12.345Z","updated_at":"2026-03-03T09:11:12.345Z","submitted_at":"2026-03-03T09:11:12.345Z","completed_at":null,"decisions":[]}`
	viewBareWant = `{"id":"1e2d3c4b-5a69-4788-9aab-bccddeeff001","config_id":"view-std","status":"created",` +
		`"data":{"fields":{},"people":[],"entities":[],"ownership":[],"documents":{},"meta":{}},` +
		`"participants":[],"registry_documents":[],"registry_documents_status":"pending","created_at":"2026-03-01T10:11:12.000Z","updated_at":"2026-03-01T10:11:12.000Z","submitted_at":null,"completed_at":"2026-03-01T10:11:12.000Z","decisions":[]}`
)

func TestViewOptions(t *testing.T) {
	svc := newViewService(t)
	for _, tt := range []struct {
		name   string
		app    *onboarding.Application
		opts   onboarding.ViewOptions
		absent []string // JSON text that must not appear
		kept   []string // JSON text that must appear
	}{
		{
			name:   "links",
			app:    viewApplication(viewStd),
			opts:   onboarding.ViewOptions{Links: true},
			absent: []string{`"bank_statement"`, `"file_id":"d-c3"`},
			kept: []string{
				`"tax_id":"GB123456789"`, `"bank_account_iban":"GB82WEST12345698765432"`,
				`"download_url":"https://onboard.example/files/blob-c1?`, `"download_url":"https://onboard.example/files/blob-p1?`,
				`"download_url":"https://onboard.example/files/blob-e1?`, `"download_url":"https://onboard.example/files/blob-r1?`,
				`"date_of_birth":"1979-03"`, `"home_address":{`,
			},
		},
		{
			name:   "no links",
			app:    viewApplication(viewStd),
			absent: []string{`download_url`, `/files/`},
			kept:   []string{`"file_id":"d-c1"`, `"file_id":"d-p1"`, `"file_id":"d-e1"`, `"id":"r1"`, `"link":"https://onboard.example/a/slug-primary-0123456789"`},
		},
		{
			name:   "standard form without sensitive",
			app:    viewApplication(viewStd),
			opts:   onboarding.ViewOptions{WithoutSensitive: true},
			absent: []string{`tax_id`, `GB123456789`, `bank_account_iban`, `GB82WEST12345698765432`, `download_url`},
			kept: []string{
				`"company_name":"Northwind Trading Ltd"`, `"company_number":"10000001"`, `"annual_turnover":{`, `"registered_address":{`,
				`"full_name":"Eleanor Mary Hargreaves"`, `"email":"eleanor@northwind.example"`, `"phone_number":"+447700900123"`,
				`"date_of_birth":"1979-03"`, `"nationality":"GB"`, `"home_address":{`, `"person_id_document":{`, `"certificate_of_incorporation":{`,
			},
		},
		{
			name: "custom form without sensitive",
			app:  viewApplication(viewCustom),
			opts: onboarding.ViewOptions{Links: true, WithoutSensitive: true},
			absent: []string{
				`date_of_birth`, `1979-03`, `home_address`, `Elm Row`, `person_id_document`, `d-p1`, `blob-p1`, `person_tax_number`, `AB123456C`,
			},
			kept: []string{
				`"tax_id":"GB123456789"`, `"bank_account_iban":"GB82WEST12345698765432"`,
				`"full_name":"Eleanor Mary Hargreaves"`, `"first_name":"Eleanor Mary"`, `"email":"eleanor@northwind.example"`, `"nationality":"GB"`,
				`{"id":"p1","source":"registry","roles":["director","ubo"],"full_name":"Eleanor Mary Hargreaves","first_name":"Eleanor Mary",` +
					`"last_name":"Hargreaves","email":"eleanor@northwind.example","phone_number":"+447700900123","nationality":"GB","documents":{}}`,
				`"download_url":"https://onboard.example/files/blob-c1?`, `"download_url":"https://onboard.example/files/blob-e1?`,
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			app := tt.app
			before, err := json.Marshal(app)
			if err != nil {
				t.Fatal(err)
			}
			view, err := svc.View(app, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(view)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b)
			for _, s := range tt.absent {
				if strings.Contains(got, s) {
					t.Errorf("the view has %s:\n%s", s, got)
				}
			}
			for _, s := range tt.kept {
				if !strings.Contains(got, s) {
					t.Errorf("the view lacks %s:\n%s", s, got)
				}
			}
			after, err := json.Marshal(app)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(before), string(after)); diff != "" {
				t.Errorf("View changed the application (-before +after):\n%s", diff)
			}
		})
	}
}

// TestViewWithoutSensitiveFailsClosed checks that an application whose form
// is no longer configured gets no view without sensitive values (it would
// not know what to leave out), while the partner's full view still works.
func TestViewWithoutSensitiveFailsClosed(t *testing.T) {
	svc := newViewService(t)
	app := viewApplication("removed")
	if view, err := svc.View(app, onboarding.ViewOptions{WithoutSensitive: true}); err == nil {
		t.Errorf("View without sensitive of an unknown form = %+v, want an error", view)
	}
	view, err := svc.View(app, onboarding.ViewOptions{Links: true})
	if err != nil {
		t.Fatalf("View of an unknown form = %v", err)
	}
	if got := string(view.Data.Fields["tax_id"]); got != `"GB123456789"` {
		t.Errorf("tax_id = %s", got)
	}
}

// TestTimestamp holds Timestamp to the layout it writes by hand, at the
// edges of its fields, outside the years it writes, in other zones and at
// random instants.
func TestTimestamp(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 21, 9, 30, 0, 123456789, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 3, 29, 1, 30, 0, 1e6, time.FixedZone("CEST", 2*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0),
	}
	for range 1000 {
		times = append(times, time.Unix(0, rand.Int64N(1<<62)).In(time.FixedZone("", rand.IntN(48*3600)-24*3600)))
	}
	for _, at := range times {
		if got, want := onboarding.Timestamp(at), at.UTC().Format(onboarding.TimestampLayout); got != want {
			t.Errorf("Timestamp(%v) = %s, want %s", at, got, want)
		}
	}
}
