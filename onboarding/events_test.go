package onboarding

import (
	crand "crypto/rand"
	"encoding/json"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"
)

func ptr[T any](v T) *T { return &v }

// fullView is a view with every member of every view type set, each
// string holding something the encoder escapes.
func fullView() ApplicationView {
	doc := func(name string) DocumentView {
		return DocumentView{
			FileID: "f-" + name, FileName: name + " <scan>.pdf", FileType: "application/pdf",
			UploadedAt: "2026-11-21T09:30:00.000Z", Status: DocumentForced, AcceptanceReason: "baseline_passed",
			UserOverrideReason: "Checked \"by phone\" & post", OverriddenAt: ptr("2026-11-21T09:31:00.000Z"),
			DownloadURL: "https://onboard.test/files/f?expires=1&signature=x&type=application%2Fpdf",
		}
	}
	docs := map[string]DocumentView{"proof_of_address": doc("bill"), "bank_statement": doc("statement"), "ümlaut": doc("u")}
	docs2 := map[string]DocumentView{"person_id_document": doc("passport")}
	return ApplicationView{
		ID: "a1", ConfigID: "default", Status: StatusReview, Link: "https://onboard.test/a/x?auth_code=1&y=2",
		Data: DataView{
			Fields: map[string]json.RawMessage{
				"company_name": json.RawMessage(`"Northwind \u003cTrading\u003e"`),
				"industry":     json.RawMessage(`"software"`),
				"turnover":     json.RawMessage(`{"amount":1250000,"currency":"GBP"}`),
				"spaced":       json.RawMessage(`{ "a" : [1, 2] }`),
				"html":         json.RawMessage(`"a<b>&c"`),
				"unicode":      json.RawMessage(`"Zoë \u2028"`),
			},
			People: []PersonView{{
				ID: "p1", Source: SourceRegistry, Roles: []PersonRole{PersonDirector, PersonUBO}, FullName: "Zoë O'Brien\u2028",
				FirstName: "Zoë", LastName: "O'Brien", Email: "zoe@example.com", PhoneNumber: "+44 20 7946 0958",
				DateOfBirth: "1979-03", Nationality: "GB",
				HomeAddress: &Address{Line1: "1 High St", Line2: "Flat\t2", City: "London", Region: "Greater London", Postcode: "SW1A 1AA", Country: "GB"},
				Documents:   docs2,
			}},
			Entities: []EntityView{{ID: "e1", Source: SourceUserAdded, Name: "Holdco \x01 Ltd", Type: EntityType("company"), Country: "IE", Documents: docs2}},
			Ownership: []OwnershipView{{
				ID: "o1", OwnerType: PartyType("person"), OwnerID: "p1", OwnedType: PartyType("entity"), OwnedID: "e1",
				Percentage: 33.333333333333336, PercentageBand: "25-50", IsDirect: true, IsNominee: true,
			}},
			Documents: docs,
			Meta: MetaView{
				PrimaryContact:       &ContactView{Name: ptr("Jane <Smith>"), Email: "jane@example.com", Role: "Finance & Ops"},
				RegistrySources:      []RegistrySource{RegistrySource("uk_registry")},
				WebsiteFavicon:       "https://example.com/favicon.ico?a=1&b=2",
				WebExtractedIndustry: "software",
			},
		},
		Participants: []ParticipantView{{Email: "jane@example.com", Name: ptr("Jane"), Role: ParticipantRole("primary"), Link: "https://onboard.test/a/x"}},
		RegistryDocuments: &[]RegistryDocumentView{{
			ID: "r1", Source: RegistrySource("uk_registry"), DocumentType: "confirmation_statement",
			FilingDate: ptr("2026-04-20"), FetchedAt: ptr("2026-11-21T09:30:00.000Z"),
			DownloadURL: "https://onboard.test/files/r?disposition=attachment&expires=1",
		}},
		RegistryDocumentsStatus: RegistryDocumentsComplete,
		CreatedAt:               "2026-11-21T09:30:00.000Z",
		UpdatedAt:               "2026-11-21T09:30:00.001Z",
		SubmittedAt:             ptr("2026-11-21T09:35:00.000Z"),
		CompletedAt:             ptr("2026-11-21T09:40:00.000Z"),
		Decisions: []DecisionView{{
			ID: "d1", Type: DecisionType("application.referred"), Timestamp: "2026-11-21T09:40:00.000Z",
			RecordedAt: "2026-11-21T09:40:00.001Z", Data: json.RawMessage(`{"reason":"needs <review>"}`), APIKeyName: "ops & risk",
		}},
	}
}

// TestEventBodyMatchesReflection checks that an event's body, assembled
// from its encoded data, is the wire format of docs/webhooks.md as the
// reflecting encoder writes it.
func TestEventBodyMatchesReflection(t *testing.T) {
	s := &Service{seq: ulid.Monotonic(crand.Reader, 0)}
	at := time.Date(2026, 11, 21, 9, 30, 0, 123e6, time.UTC)
	for name, data := range map[string]any{
		"application": fullView(),
		"other data":  map[string]any{"text": "a<b>&c\u2028", "n": 1.5},
		"null":        nil,
	} {
		t.Run(name, func(t *testing.T) {
			e, err := s.newEvent(EventApplicationReferred, "acme", "subject", at, data)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonv2.Marshal(struct {
				ID        string    `json:"id"`
				Type      EventType `json:"type"`
				Timestamp string    `json:"timestamp"`
				Data      any       `json:"data"`
			}{e.ID, EventApplicationReferred, "2026-11-21T09:30:00.123Z", data}, jsonv1.DefaultOptionsV1())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(e.Body)); diff != "" {
				t.Errorf("event body (-reflection +newEvent):\n%s", diff)
			}
		})
	}
}
