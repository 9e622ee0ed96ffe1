package storage

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRecordEncodingIsStable pins the bytes records are stored as. Records
// are the onboarding types encoded as JSON by field name, so renaming a
// domain field would silently drop that field from every stored record on
// the next read; this test fails first. A deliberate change needs a new
// codec version (record.Encode) or a migration, then `go test -update`.
func TestRecordEncodingIsStable(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	records := map[string]any{
		"application": &onboarding.Application{
			ID: "e6dacf7e-ad57-49c6-995a-093d1c6825e5", Seq: ulid.MustParse("01KAJ6F4G0000000000000000A"),
			OrgID: "acme", ConfigID: "acme-standard", Country: "GB", Status: onboarding.StatusSent,
			Data: onboarding.Data{
				Fields: map[string]json.RawMessage{"company_name": json.RawMessage(`"NORTHWIND TRADING LIMITED"`)},
				People: []onboarding.Person{{ID: "p1", Source: onboarding.SourceRegistry, Roles: []onboarding.PersonRole{"director"}, FullName: "Jane Smith",
					FirstName: "Jane", LastName: "Smith", Email: "jane@example.com", PhoneNumber: "+442079460958", DateOfBirth: "1984-07",
					Nationality: "GB", HomeAddress: &onboarding.Address{Line1: "1 High St", City: "Bristol", Postcode: "BS1 1AA", Country: "GB"},
					Documents: map[string]onboarding.Document{"person_id_document": {FileID: "f2", Status: "accepted", UploadedAt: at}}}},
				Entities:  []onboarding.Entity{{ID: "e1", Source: onboarding.SourceRegistry, Name: "BLUEBELL GROUP LIMITED", Type: "parent", Country: "GB"}},
				Ownership: []onboarding.Ownership{{ID: "o1", OwnerType: "entity", OwnerID: "e1", OwnedType: "target", Percentage: 50, PercentageBand: "50-75", IsDirect: true}},
				Documents: map[string]onboarding.Document{"proof_of_address": {FileID: "f1", FileName: "poa.pdf", FileType: "application/pdf", UploadedAt: at,
					Status: "forced", AcceptanceReason: "baseline_passed", UserOverrideReason: "checked by phone", OverriddenAt: &later, BlobID: "b1"}},
				Meta: onboarding.Meta{PrimaryContact: &onboarding.Contact{Name: "Jane", Email: "jane@example.com", Role: "CFO"},
					RegistrySources: []onboarding.RegistrySource{"uk_registry"}, WebsiteFavicon: "https://x.example/favicon.ico", WebExtractedIndustry: "software"},
			},
			Participants: []onboarding.Participant{{ID: "8b9f7bd2-f5c6-41d8-8cc5-c23abfb71ccc", LinkSlug: "slug", Email: "jane@example.com",
				Name: "Jane", Role: onboarding.RolePrimary, Verified: true, PreAuthHash: []byte{1, 2, 3}, PreAuthExpires: later}},
			CreatedAt: at, UpdatedAt: later, SubmittedAt: &later, CompletedAt: &later,
			RegistryDocumentsStatus: onboarding.RegistryDocumentsPending,
			RegistryNumber:          "10000001",
			RegistryDocuments:       []onboarding.RegistryDocument{{ID: "r1", Ref: "MzQwMDAwMDAwMWFkaXF6a2N4", Source: "uk_registry", DocumentType: "annual_accounts", FilingDate: "2024-12-02", FetchedAt: &later, BlobID: "b2", FileName: "10000001-aa-2024-12-02.pdf"}},
		},
		"activity": &storedActivity{Activity: onboarding.Activity{At: at, Action: onboarding.ActionFieldsUpdated,
			Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "abc", Name: "ci"}, Fields: []string{"industry"}, Detail: "d"},
			Prev: onboarding.ActivityChainStart("e6dacf7e-ad57-49c6-995a-093d1c6825e5"), Hash: onboarding.ActivityChainStart("h")},
		"api_key": &onboarding.APIKey{ClientID: "abc", OrgID: "acme", Name: "ci", Scopes: []onboarding.Scope{onboarding.ScopeApplicationsRead},
			SecretHash: []byte{9, 9}, CreatedAt: at, ExpiresAt: &later, LastUsedAt: &later, RevokedAt: &later},
		"event": &onboarding.Event{ID: "evt_01KAJ6F4G0000000000000000A", Type: onboarding.EventApplicationSent, OrgID: "acme",
			Subject: "e6dacf7e-ad57-49c6-995a-093d1c6825e5", Endpoint: "we_01KAJ6F4G0000000000000000B", At: at,
			Body: json.RawMessage(`{"id":"evt_01KAJ6F4G0000000000000000A","type":"application.sent","timestamp":"2026-11-21T09:30:00Z","data":{}}`)},
		"endpoint": &onboarding.Endpoint{ID: "we_01KAJ6F4G0000000000000000B", OrgID: "acme", URL: "https://hooks.example.com/onboard",
			Description: "CRM", Events: []onboarding.EventType{onboarding.EventApplicationSent}, Enabled: false, DisabledReason: "410 Gone",
			Secrets:   []onboarding.SigningSecret{{Key: []byte{1, 2}, CreatedAt: later}, {Key: []byte{3}, CreatedAt: at, ExpiresAt: &later}},
			CreatedAt: at, Exhausted: 2},
		"queued_delivery": &queuedDelivery{EventID: "evt_01KAJ6F4G0000000000000000A", EventType: onboarding.EventApplicationSent,
			EndpointID: "we_01KAJ6F4G0000000000000000B", Subject: "e6dacf7e-ad57-49c6-995a-093d1c6825e5", Attempts: 3, NextAt: at,
			Owner: "worker-1", LeaseUntil: later},
		"delivery_attempt": &onboarding.DeliveryAttempt{EventID: "evt_01KAJ6F4G0000000000000000A", EventType: onboarding.EventApplicationSent,
			EndpointID: "we_01KAJ6F4G0000000000000000B", OrgID: "acme", Attempt: 2, At: at, StatusCode: 503, Latency: 1500 * time.Millisecond,
			Error: "HTTP 503", Response: "busy"},
		// The server encodes its saved responses itself (SaveResponse
		// stores them as given); the record keeps the layout of earlier
		// versions so that saved responses replay across an upgrade.
		"idempotent_response": json.RawMessage(mustJSON(t, struct {
			Fingerprint []byte
			Status      int
			Body        []byte
			CreatedAt   time.Time
		}{Fingerprint: []byte{7}, Status: 201, Body: []byte{1, 2}, CreatedAt: at})),
		// The outcome a request's transaction writes under its
		// Idempotency-Key; the server reads it back with the layout of a
		// saved response (the same Fingerprint and CreatedAt, no Status).
		"idempotent_outcome": &onboarding.IdempotentOutcome{ClientID: "abc", Key: "order-42", Fingerprint: []byte{7}, CreatedAt: at,
			ID: "e6dacf7e-ad57-49c6-995a-093d1c6825e5", DecisionID: "d1", ApplicationStatus: onboarding.StatusSent, Mail: onboarding.MailFailed,
			SealedCode: []byte{1, 2}, ExpiresAt: &later, AlreadyVerified: true},
	}
	for name, rec := range records {
		t.Run(name, func(t *testing.T) {
			b, err := record.Encode(rec)
			if err != nil {
				t.Fatal(err)
			}
			var pretty any
			if err := record.Decode(b, &pretty); err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(pretty, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("stored encoding of %s changed (-want +got):\n%s", name, diff)
			}
		})
	}
}
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
