package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/registry"
	"onboard/server/form"
)

// Fuzz targets for the API's input surfaces, through the real router: no
// input may give a 5xx (a panic in a handler is one), and every 4xx is a
// JSON object with an "error" member.

// fuzzEnv is an env for fuzzing: the same stack as newEnv, but its handler
// is the router itself, without the OpenAPI contract check (which reports
// asynchronously, to the test that made the env, and would slow the
// fuzzing down), and with the server's log kept so that a 5xx can
// say what went wrong.
type fuzzEnv struct {
	*env
	log *bytes.Buffer
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	e := newEnv(f, envOptions{})
	sessions, err := form.NewSignedSessions(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		f.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pages := form.New(form.Options{Service: e.svc, Sessions: sessions, Now: e.clock.Now, PublicURL: "https://onboard.test", Logger: logger})
	e.h = New(Options{
		Service: e.svc, Responses: e.store, Pages: pages, Now: e.clock.Now, Sandbox: true,
		Logger: logger,
	}).Handler()
	return &fuzzEnv{env: e, log: &log}
}

// serve sends r through the router, with the log of this request only.
func (e *fuzzEnv) serve(r *http.Request) *httptest.ResponseRecorder {
	e.log.Reset()
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

// send sends body (sent even when empty) with the acme key.
func (e *fuzzEnv) send(method, path string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
	return e.serve(r)
}

// checkAnswer fails unless w is a 2xx with a JSON body or a 4xx whose body
// is a JSON object with a non-empty "error" string. registryDown allows the
// 502 and 503 the fixture registry gives on purpose for the companies
// that simulate its failures.
func (e *fuzzEnv) checkAnswer(t *testing.T, w *httptest.ResponseRecorder, what string, registryDown bool) {
	t.Helper()
	switch {
	case w.Code >= 500:
		if registryDown && (w.Code == http.StatusBadGateway || w.Code == http.StatusServiceUnavailable) {
			return
		}
		t.Fatalf("%s: %d %s\nserver log:\n%s", what, w.Code, w.Body, e.log)
	case w.Code >= 400:
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %d with a body that is not a JSON object (%v): %q", what, w.Code, err, w.Body)
		}
		if msg, ok := body["error"].(string); !ok || msg == "" {
			t.Fatalf("%s: %d without an error message: %s", what, w.Code, w.Body)
		}
	case w.Code >= 200 && w.Code < 300:
		if w.Code != http.StatusNoContent && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s: %d with a body that is not JSON: %q", what, w.Code, w.Body)
		}
	default:
		t.Fatalf("%s: unexpected status %d %s", what, w.Code, w.Body)
	}
}

// stored returns application id as stored.
func (e *fuzzEnv) stored(t testing.TB, id string) *onboarding.Application {
	t.Helper()
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// failingFixture reports whether a create or RFI body names one of the
// fixture companies whose registry lookup fails on purpose (GB 10000005
// answers 429, 10000006 answers 500: testdata/registry/README.md).
func failingFixture(body []byte) bool {
	var req struct {
		CompanyNumber string `json:"company_number"`
	}
	if json.Unmarshal(body, &req) != nil {
		// A body encoding/json refuses may still be one web.DecodeJSON reads
		// (a member of another type that web.DecodeJSON ignores, say).
		for _, n := range []string{"10000005", "10000006"} {
			if bytes.Contains(body, []byte(n[3:])) {
				return true
			}
		}
		return false
	}
	n, err := registry.NormalizeCompanyNumber("GB", req.CompanyNumber)
	return err == nil && (n == "10000005" || n == "10000006")
}

// FuzzPatchFieldValue sends {"fields":{<id>:<value>}} through PATCH for
// any field id and raw value, seeded with a value of every field type of
// the standard form. The answer is 200 or a 4xx, never a 5xx; a 4xx leaves
// the stored application as it was; a 200 stores what Field.Normalize
// makes of the value (nothing when it clears the field), a company number
// in the registry's form.
func FuzzPatchFieldValue(f *testing.F) {
	for _, seed := range []struct{ id, value string }{
		{"company_name", `"Northwind Trading Ltd"`}, {"company_name", `"  "`}, {"company_name", `null`},
		{"company_number", `"10000001"`}, {"company_country", `"gb"`}, {"company_type", `"llp"`},
		{"incorporation_date", `"2018-04-16"`}, {"incorporation_date", `"2999-12-31"`}, {"incorporation_date", `"2023-02-29"`},
		{"registered_address", `{"line1":"1 High St","city":"London","postcode":"E1 6AN","country":"GB"}`},
		{"trading_address", `{"line1":"1 Rue","city":"Paris","country":"fr","region":null}`},
		{"industry", `"software"`}, {"industry", `"Software"`}, {"website", `"https://northwind.example"`},
		{"phone", `"+44 (0)20 7946 0958"`}, {"business_description", `"We sell\nthings.\tReally."`},
		{"countries_of_operation", `["GB","IE","OTHER"]`}, {"countries_of_operation", `["GB","GB"]`},
		{"annual_turnover", `{"amount":1250000.5,"currency":"GBP"}`}, {"expected_monthly_volume", `{"amount":-1,"currency":"EUR"}`},
		{"high_risk_revenue_percentage", `12.5`}, {"high_risk_revenue_percentage", `1e2`}, {"regulated_entity", `true`},
		{"tax_id", `"GB123456789"`}, {"bank_account_iban", `"GB82 WEST 1234 5698 7654 32"`}, {"bank_account_iban", `"GB83WEST12345698765432"`},
		{"person_full_name", `"Jane Smith"`}, {"certificate_of_incorporation", `"x"`}, {"confirm_terms", `true`},
		{"", `1`}, {"industry", ``}, {"industry", `"software"}, "x": {`}, {"industry\u0000", `"software"`},
	} {
		f.Add(seed.id, []byte(seed.value))
	}
	e := newFuzzEnv(f)
	id := e.create(f, "acme", "")
	form := onboarding.StandardForm()
	path := "/api/external/applications/" + id
	f.Fuzz(func(t *testing.T, fieldID string, value []byte) {
		key, err := json.Marshal(fieldID)
		if err != nil {
			t.Fatal(err)
		}
		body := append(append(append([]byte(`{"fields":{`), key...), ':'), value...)
		body = append(body, "}}"...)
		before := e.stored(t, id)
		w := e.send("PATCH", path, body)
		e.checkAnswer(t, w, "PATCH "+string(body), false)
		after := e.stored(t, id)
		if w.Code != http.StatusOK {
			if diff := cmp.Diff(before, after); diff != "" {
				t.Fatalf("PATCH %s = %d changed the application (-before +after):\n%s", body, w.Code, diff)
			}
			return
		}
		field, ok := form.Field(fieldID)
		if !ok {
			t.Fatalf("PATCH %s = 200 for an unknown field", body)
		}
		want, err := field.Normalize(value, e.clock.Now())
		if err != nil {
			t.Fatalf("PATCH %s = 200, yet Normalize refuses the value: %v", body, err)
		}
		// The application is a registry-verified GB company: its number
		// is kept in the registry's form, as create keeps it.
		var number string
		if fieldID == "company_number" && json.Unmarshal(want, &number) == nil {
			n, err := registry.NormalizeCompanyNumber("GB", number)
			if err != nil {
				t.Fatalf("PATCH %s = 200, yet the registry refuses the number: %v", body, err)
			}
			want, _ = json.Marshal(n)
		}
		// The same JSON value: the store re-encodes what it keeps, with
		// encoding/json's HTML escaping ("&" as \u0026).
		if got := after.Data.Fields[fieldID]; !sameJSON(got, want) {
			t.Fatalf("PATCH %s stored %s, want %s", body, got, want)
		}
	})
}

// sameJSON reports whether a and b are both absent or the same JSON value.
func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && cmp.Equal(va, vb)
}

// FuzzPatchBody sends any bytes as a PATCH body: 200 or a 4xx with an
// error, never a 5xx, and a 4xx leaves the application as it was.
func FuzzPatchBody(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"fields":{}}`, `{"fields":null}`, `{"fields":{"industry":"software"}}`,
		`{"fields":{"industry":"software","industry":"retail"}}`, `{"Fields":{"industry":"software"}}`,
		`{"fields":{"industry":"software"},"people":[]}`, `{"fields":{"nope":1,"confirm_terms":true}}`,
		`{"fields":{"high_risk_revenue_percentage":101,"website":"x"}}`, `{"fields":{"company_name":null}}`,
		`{"fields":{"registered_address":{"line1":"1","city":"x","country":"IE"}}}`, `{"fields":`, `{"fields":{"a":1}} {}`,
		"{\"fields\":{\"company_name\":\"\xff\"}}", `{"fields":{"company_name":"\ud800"}}`,
	} {
		f.Add([]byte(seed))
	}
	e := newFuzzEnv(f)
	id := e.create(f, "acme", "")
	path := "/api/external/applications/" + id
	f.Fuzz(func(t *testing.T, body []byte) {
		before := e.stored(t, id)
		w := e.send("PATCH", path, body)
		e.checkAnswer(t, w, "PATCH "+string(body), false)
		if w.Code != http.StatusOK {
			if diff := cmp.Diff(before, e.stored(t, id)); diff != "" {
				t.Fatalf("PATCH %q = %d changed the application (-before +after):\n%s", body, w.Code, diff)
			}
		}
	})
}

// FuzzCreateApplicationBody sends any bytes as the body of create
// application: 201 or a 4xx with an error, never a 5xx but the registry
// failures the fixtures simulate.
func FuzzCreateApplicationBody(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[1,2]`, `{"primary_contact":`,
		`{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`,
		`{"primary_contact":{"email":"jane@bluebell.example"},"country":"GB","company_number":"10000002","company_name":"Bluebell Holdings Ltd"}`,
		`{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000003","company_name":"Oldco Limited"}`,
		`{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"sc 100007","company_name":"Highland"}`,
		`{"primary_contact":{"email":"a@example.com"},"country":"IE","company_number":"0100001","company_name":"X"}`,
		`{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X","pre_auth":true}`,
		`{"primary_contact":{"email":"a@example.com"},"config_id":"acme-select","country":"GB"}`,
		`{"primary_contact":{"email":"a@example.com"},"config_id":"nope","country":"gb","company_number":"1","company_name":"X"}`,
		`{"primary_contact":{"email":"a@example.com","email":"b@example.com"},"country":"FR"}`,
		`{"primary_contact":{"email":"not an email","name":"\u0000"},"country":5}`,
		`{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000005","company_name":"X"}`,
	} {
		f.Add([]byte(seed))
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := e.send("POST", "/api/external/applications", body)
		e.checkAnswer(t, w, "create "+string(body), failingFixture(body))
	})
}

// FuzzDecisionBody sends any bytes as the body of record decision on a
// submitted application (put back to submitted after every decision that
// changes its status): 200 or a 4xx with an error, never a 5xx.
func FuzzDecisionBody(f *testing.F) {
	e := newFuzzEnv(f)
	id := e.create(f, "acme", "")
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"type":"application.approved"}`, `{"type":"application.referred","data":{"reason":"x"}}`,
		`{"type":"application.rejected","timestamp":"2026-11-20T10:00:00.123456789+01:00"}`,
		`{"type":"application.approved","timestamp":"0000-01-01T00:00:00Z"}`, `{"type":"application.approved","timestamp":"9999-12-31T23:59:59-23:59"}`,
		`{"type":"application.approved","application_id":"` + id + `"}`, `{"type":"application.approved","application_id":"other"}`,
		`{"type":"application.approved","data":[1]}`, `{"type":"application.approved","data":{"a":1e999}}`,
		`{"type":"application.approved","type":"application.rejected"}`, `{"type":1}`, `{"type":"application.approved"`,
	} {
		f.Add([]byte(seed))
	}
	path := "/api/external/applications/" + id + "/decision"
	setSubmitted := func(t testing.TB) {
		if _, err := e.store.UpdateApplication(context.Background(), id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = onboarding.StatusSubmitted
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	setSubmitted(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		before := e.stored(t, id)
		w := e.send("POST", path, body)
		e.checkAnswer(t, w, "decision "+string(body), false)
		if w.Code != http.StatusOK {
			if diff := cmp.Diff(before, e.stored(t, id)); diff != "" {
				t.Fatalf("decision %q = %d changed the application (-before +after):\n%s", body, w.Code, diff)
			}
			return
		}
		setSubmitted(t)
	})
}

// FuzzRFICreateBody sends any bytes as the body of create RFI request:
// 201 or a 4xx with an error, never a 5xx but the registry failures the
// fixtures simulate.
func FuzzRFICreateBody(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `"x"`,
		`{"company_name":"Northwind Trading Ltd","country":"GB","company_number":"10000001","primary_contact":{"name":"Jane Smith","email":"jane@northwind.example","role":"Director"}}`,
		`{"company_name":"Northwind","primary_contact":{"name":"Jane","email":"jane@northwind.example"},"agent_id":"` + acmeAgentQuick + `","pre_authenticated":true}`,
		`{"company_name":"Northwind","primary_contact":{"name":"Jane","email":"jane@northwind.example"},"agent_id":"` + acmeAgentIdle + `"}`,
		`{"company_name":"Northwind","primary_contact":{"name":"Jane","email":"jane@northwind.example"},"agent_id":"nope"}`,
		`{"company_name":"Shamrock","country":"IE","company_number":"100002","primary_contact":{"email":"a@example.com"}}`,
		`{"company_name":"X","country":"GB","company_number":"10000006","primary_contact":{"email":"a@example.com"}}`,
		`{"company_name":"` + strings.Repeat("x", 201) + `","primary_contact":{"email":"a@example.com"}}`,
		`{"company_name":"\u202eX","primary_contact":{"email":"a@example.com","email":"b@example.com"}}`,
	} {
		f.Add([]byte(seed))
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := e.send("POST", "/api/external/rfi-requests", body)
		e.checkAnswer(t, w, "RFI create "+string(body), failingFixture(body))
	})
}

// listPaths are the list endpoints FuzzListQuery chooses from, with the
// name of their filter parameter; "activity" is filled in with an
// application id.
var listPaths = []struct{ path, filter string }{
	{"/api/external/applications", "status"},
	{"/api/external/events", "type"},
	{"/api/external/rfi-requests", "status"},
	{"/api/external/applications/{id}/activity", ""},
}

// FuzzListQuery sends any limit, cursor and filter to each list endpoint,
// seeded with real cursors of each: 200 or a 4xx with an error, never a
// 5xx; a 200 is a page of at most limit items.
func FuzzListQuery(f *testing.F) {
	e := newFuzzEnv(f)
	id := e.create(f, "acme", "")
	for range 3 {
		e.create(f, "acme", "")
	}
	e.rfiRequest(f, "acme", false)
	e.rfiRequest(f, "acme", true)
	if w := e.send("PATCH", "/api/external/applications/"+id, []byte(`{"fields":{"industry":"software"}}`)); w.Code != http.StatusOK {
		f.Fatalf("PATCH = %d %s", w.Code, w.Body)
	}
	pathOf := func(which uint8) (string, string) {
		l := listPaths[int(which)%len(listPaths)]
		return strings.Replace(l.path, "{id}", id, 1), l.filter
	}
	for i := range listPaths {
		p, filter := pathOf(uint8(i))
		w := e.send("GET", p+"?limit=1", nil)
		var page struct {
			NextCursor string `json:"next_cursor"`
		}
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &page) != nil || page.NextCursor == "" {
			f.Fatalf("GET %s?limit=1 = %d %s, want a page with a next cursor", p, w.Code, w.Body)
		}
		f.Add(uint8(i), "1", page.NextCursor, "")
		f.Add(uint8(i), "100", page.NextCursor, "")
		f.Add(uint8(i), "", page.NextCursor[:len(page.NextCursor)-1], "")
		if filter != "" {
			f.Add(uint8(i), "2", page.NextCursor, "sent")
		}
	}
	for _, seed := range []struct{ limit, cursor, filter string }{
		{"0", "", ""}, {"101", "", ""}, {"-1", "", ""}, {"1e1", "", ""}, {" 5", "", ""}, {"99999999999999999999", "", ""},
		{"", "AQ", ""}, {"", "AQAAAAAAAAAAAAAAAAAAAAAA", ""}, {"", "////", ""}, {"", "AQ==", ""},
		{"", "", "application.submitted"}, {"", "", "approved"}, {"", "", "nope"},
	} {
		f.Add(uint8(0), seed.limit, seed.cursor, seed.filter)
		f.Add(uint8(1), seed.limit, seed.cursor, seed.filter)
	}
	f.Fuzz(func(t *testing.T, which uint8, limit, cursor, filter string) {
		p, filterName := pathOf(which)
		q := url.Values{}
		for name, v := range map[string]string{"limit": limit, "cursor": cursor, filterName: filter} {
			if v != "" && name != "" {
				q.Set(name, v)
			}
		}
		target := p + "?" + q.Encode()
		w := e.send("GET", target, nil)
		e.checkAnswer(t, w, "GET "+target, false)
	})
}

// FuzzDownload sends GET /files/{id}?{query} for any id and query, seeded
// with a genuine signed link: 200 only for the genuine link, else a 4xx
// with an error, never a 5xx.
func FuzzDownload(f *testing.F) {
	e := newFuzzEnv(f)
	content := []byte("%PDF-1.4 fuzz")
	blobID, _, err := e.blobs.Put(context.Background(), bytes.NewReader(content), 1<<20)
	if err != nil {
		f.Fatal(err)
	}
	signer := newTestSigner(f, e.clock)
	link := signer.SignedLink("", blobID, onboarding.Download{FileName: "report.pdf", ContentType: "application/pdf"}, time.Hour)
	query := link[strings.IndexByte(link, '?')+1:]
	f.Add(blobID, query)
	f.Add(blobID, strings.Replace(query, "attachment", "inline", 1))
	f.Add(blobID, query+"&signature=x")
	f.Add(strings.ToUpper(blobID), query)
	f.Add("../blobs", query)
	f.Add("00000000-0000-4000-8000-000000000000", query)
	f.Add(blobID, "expires=99999999999999999999&disposition=inline&filename=a&type=b&signature=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add(blobID, "%zz;&&=")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, id, rawQuery string) {
		u := &url.URL{Path: "/files/" + id, RawQuery: rawQuery}
		r := httptest.NewRequest("GET", "/files/x", nil)
		r.URL, r.RequestURI = u, u.RequestURI()
		w := e.serve(r)
		if w.Code == http.StatusOK {
			if !bytes.Equal(w.Body.Bytes(), content) {
				t.Fatalf("GET %s = 200 with %q", u, w.Body)
			}
			if q, _ := url.ParseQuery(rawQuery); id != blobID || q.Get("signature") != mustQuery(t, query).Get("signature") {
				t.Fatalf("GET %s = 200 for a link that was never signed", u)
			}
			return
		}
		e.checkAnswer(t, w, "GET "+u.String(), false)
	})
}

// newTestSigner is the signer newEnv gives the service: its key and clock.
func newTestSigner(t testing.TB, clk *clock) *blobs.Signer {
	t.Helper()
	s, err := blobs.NewSigner(bytes.Repeat([]byte{7}, 32), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustQuery(t testing.TB, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDecisionTimestampYearRange: a decision timestamp whose offset carries
// it past year 9999 (or before year 0) in UTC is refused as invalid,
// never a 500 from a stored record that cannot be encoded. The years at
// the very edges are taken.
func TestDecisionTimestampYearRange(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		timestamp string
		status    int
		want      map[string]any
	}{
		{"9999-12-31T23:59:59-23:59", 400, errBody("Invalid timestamp")},
		{"9999-12-31T23:00:00-01:00", 400, errBody("Invalid timestamp")},
		{"0000-01-01T00:00:00+00:01", 400, errBody("Invalid timestamp")},
		{"9999-12-31T23:59:59.999+00:00", 200, nil},
		{"0000-01-01T00:00:00Z", 200, nil},
	}
	for _, tt := range tests {
		t.Run(tt.timestamp, func(t *testing.T) {
			id := e.create(t, "acme", "")
			e.setStatus(t, id, onboarding.StatusSubmitted)
			w := e.do("POST", "/api/external/applications/"+id+"/decision", "acme", `{"type":"application.approved","timestamp":"`+tt.timestamp+`"}`)
			if tt.want != nil {
				wantError(t, w, tt.status, tt.want)
				if got := e.apiApp(t, id)["status"]; got != "submitted" {
					t.Errorf("status = %v after a refused decision, want submitted", got)
				}
				return
			}
			if w.Code != tt.status {
				t.Fatalf("decision = %d %s, want %d", w.Code, w.Body, tt.status)
			}
		})
	}
}
