// Package onboardingtest holds fixtures for the tests of onboarding and of
// the packages that serve it: a Service on a real store with a fixed
// signing key and clock, applications with something in every member of
// their view, and a view with every member set. Only tests import it.
package onboardingtest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// ViewNow is the clock of the view tests: it fixes the download links'
// expiry, so their signatures are the same on every run.
func ViewNow() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }

// Configurations of the fixtures' organization acme.
const (
	StdConfig    = "view-std"    // the standard form
	CustomConfig = "view-custom" // person-scoped fields sensitive, tax_id not
)

// CustomForm is the standard form with the date of birth, home
// address, identity document and an extra tax number of each person
// sensitive, and tax_id and bank_account_iban not.
func CustomForm(t *testing.T) *onboarding.Form {
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

// NewViewService returns a Service that signs download links with a
// fixed key and clock as its clock, for an organization acme with the
// configurations StdConfig and CustomConfig, and its store.
func NewViewService(t *testing.T, clock func() time.Time) (*onboarding.Service, storetest.Store) {
	t.Helper()
	store := storetest.Open(t)
	signer, err := blobs.NewSigner(bytes.Repeat([]byte{7}, 32), clock)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Now: clock, PageCounter: pdf.PageCount, PublicURL: "https://onboard.example", Links: signer,
		Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: StdConfig, Configs: []*onboarding.Configuration{
			{ID: StdConfig, Form: onboarding.StandardForm(), Countries: []string{"GB"}},
			{ID: CustomConfig, Form: CustomForm(t), Countries: []string{"GB"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store
}

// FullApplication returns an application on configuration configID with
// something in every member of the view: sensitive values of both forms,
// documents of every status with and without files, registry documents,
// a contact without a name and participants.
func FullApplication(configID string) *onboarding.Application {
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

// BareApplication is an application with nothing collected yet: no
// fields, no primary participant, registry documents still pending.
func BareApplication() *onboarding.Application {
	at := time.Date(2026, 3, 1, 10, 11, 12, 0, time.UTC)
	return &onboarding.Application{
		ID: "1e2d3c4b-5a69-4788-9aab-bccddeeff001", OrgID: "acme", ConfigID: StdConfig, Country: "GB", Status: onboarding.StatusCreated,
		CreatedAt: at, UpdatedAt: at, CompletedAt: &at,
		RegistryDocumentsStatus: onboarding.RegistryDocumentsPending,
		RegistryDocuments:       []onboarding.RegistryDocument{{ID: "r1", Source: onboarding.SourceUKRegistry, DocumentType: "AA", BlobID: "blob-r1"}},
	}
}

func ptr[T any](v T) *T { return &v }

// FullView is a view with every member of every view type set, each
// string holding something the encoder escapes.
func FullView() onboarding.ApplicationView {
	doc := func(name string) onboarding.DocumentView {
		return onboarding.DocumentView{
			FileID: "f-" + name, FileName: name + " <scan>.pdf", FileType: "application/pdf",
			UploadedAt: "2026-11-21T09:30:00.000Z", Status: onboarding.DocumentForced, AcceptanceReason: "baseline_passed",
			UserOverrideReason: "Checked \"by phone\" & post", OverriddenAt: ptr("2026-11-21T09:31:00.000Z"),
			DownloadURL: "https://onboard.test/files/f?expires=1&signature=x&type=application%2Fpdf",
		}
	}
	docs := map[string]onboarding.DocumentView{"proof_of_address": doc("bill"), "bank_statement": doc("statement"), "ümlaut": doc("u")}
	docs2 := map[string]onboarding.DocumentView{"person_id_document": doc("passport")}
	return onboarding.ApplicationView{
		ID: "a1", ConfigID: "default", Status: onboarding.StatusReview, Link: "https://onboard.test/a/x?auth_code=1&y=2",
		Data: onboarding.DataView{
			Fields: map[string]json.RawMessage{
				"company_name": json.RawMessage(`"Northwind \u003cTrading\u003e"`),
				"industry":     json.RawMessage(`"software"`),
				"turnover":     json.RawMessage(`{"amount":1250000,"currency":"GBP"}`),
				"spaced":       json.RawMessage(`{ "a" : [1, 2] }`),
				"html":         json.RawMessage(`"a<b>&c"`),
				"unicode":      json.RawMessage(`"Zoë \u2028"`),
			},
			People: []onboarding.PersonView{{
				ID: "p1", Source: onboarding.SourceRegistry, Roles: []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonUBO}, FullName: "Zoë O'Brien\u2028",
				FirstName: "Zoë", LastName: "O'Brien", Email: "zoe@example.com", PhoneNumber: "+44 20 7946 0958",
				DateOfBirth: "1979-03", Nationality: "GB",
				HomeAddress: &onboarding.Address{Line1: "1 High St", Line2: "Flat\t2", City: "London", Region: "Greater London", Postcode: "SW1A 1AA", Country: "GB"},
				Documents:   docs2,
			}},
			Entities: []onboarding.EntityView{{ID: "e1", Source: onboarding.SourceUserAdded, Name: "Holdco \x01 Ltd", Type: onboarding.EntityType("company"), Country: "IE", Documents: docs2}},
			Ownership: []onboarding.OwnershipView{{
				ID: "o1", OwnerType: onboarding.PartyType("person"), OwnerID: "p1", OwnedType: onboarding.PartyType("entity"), OwnedID: "e1",
				Percentage: 33.333333333333336, PercentageBand: "25-50", IsDirect: true, IsNominee: true,
			}},
			Documents: docs,
			Meta: onboarding.MetaView{
				PrimaryContact:       &onboarding.ContactView{Name: ptr("Jane <Smith>"), Email: "jane@example.com", Role: "Finance & Ops"},
				RegistrySources:      []onboarding.RegistrySource{onboarding.RegistrySource("uk_registry")},
				WebsiteFavicon:       "https://example.com/favicon.ico?a=1&b=2",
				WebExtractedIndustry: "software",
			},
		},
		Participants: []onboarding.ParticipantView{{Email: "jane@example.com", Name: ptr("Jane"), Role: onboarding.ParticipantRole("primary"), Link: "https://onboard.test/a/x"}},
		RegistryDocuments: &[]onboarding.RegistryDocumentView{{
			ID: "r1", Source: onboarding.RegistrySource("uk_registry"), DocumentType: "confirmation_statement",
			FilingDate: ptr("2026-04-20"), FetchedAt: ptr("2026-11-21T09:30:00.000Z"),
			DownloadURL: "https://onboard.test/files/r?disposition=attachment&expires=1",
		}},
		RegistryDocumentsStatus: onboarding.RegistryDocumentsComplete,
		CreatedAt:               "2026-11-21T09:30:00.000Z",
		UpdatedAt:               "2026-11-21T09:30:00.001Z",
		SubmittedAt:             ptr("2026-11-21T09:35:00.000Z"),
		CompletedAt:             ptr("2026-11-21T09:40:00.000Z"),
		Decisions: []onboarding.DecisionView{{
			ID: "d1", Type: onboarding.DecisionType("application.referred"), Timestamp: "2026-11-21T09:40:00.000Z",
			RecordedAt: "2026-11-21T09:40:00.001Z", Data: json.RawMessage(`{"reason":"needs <review>"}`), APIKeyName: "ops & risk",
		}},
	}
}
