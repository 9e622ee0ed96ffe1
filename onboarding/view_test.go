package onboarding_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/onboarding/onboardingtest"
)

// The configurations of the fixtures' organization, as the view tests
// name them.
const (
	viewStd    = onboardingtest.StdConfig
	viewCustom = onboardingtest.CustomConfig
)

// newViewService returns a Service that signs download links with a fixed
// key and clock, for an organization with the configurations
// viewStd and viewCustom.
func newViewService(t *testing.T) *onboarding.Service {
	t.Helper()
	svc, _ := onboardingtest.NewViewService(t, onboardingtest.ViewNow)
	return svc
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
		{"full", onboardingtest.FullApplication(viewStd), viewFullWant},
		{"bare", onboardingtest.BareApplication(), viewBareWant},
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
// onboardingtest.FullApplication(viewStd) and BareApplication before the move.
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
			app:    onboardingtest.FullApplication(viewStd),
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
			app:    onboardingtest.FullApplication(viewStd),
			absent: []string{`download_url`, `/files/`},
			kept:   []string{`"file_id":"d-c1"`, `"file_id":"d-p1"`, `"file_id":"d-e1"`, `"id":"r1"`, `"link":"https://onboard.example/a/slug-primary-0123456789"`},
		},
		{
			name:   "standard form without sensitive",
			app:    onboardingtest.FullApplication(viewStd),
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
			app:  onboardingtest.FullApplication(viewCustom),
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
	app := onboardingtest.FullApplication("removed")
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
