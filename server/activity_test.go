package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/admin"
	"onboard/onboarding"
)

// activityPath is the activity log of application id, with query.
func activityPath(id, query string) string {
	return "/api/external/applications/" + id + "/activity" + query
}

// activityPage is a page of the activity log, its entries generic so that
// their exact members are compared.
type activityPage struct {
	Entries    []map[string]any `json:"entries"`
	HasMore    bool             `json:"has_more"`
	NextCursor *string          `json:"next_cursor"`
}

func (e *env) activityPage(t testing.TB, key, id, query string) activityPage {
	t.Helper()
	w := e.do("GET", activityPath(id, query), key, "")
	if w.Code != http.StatusOK {
		t.Fatalf("activity %s = %d %s", query, w.Code, w.Body)
	}
	var p activityPage
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// life takes an application of acme through a real life, a second apart:
// create, invite resent, PATCH, the applicant signing in, saving a page
// and uploading a document, the test helper completing and submitting it,
// a decision and an operator's skip. It returns the application's id.
func (e *env) life(t *testing.T) string {
	t.Helper()
	id := e.create(t, "acme", "")
	step := func() { e.clock.Advance(time.Second) }
	step()
	if w := e.do("POST", "/api/external/applications/"+id+"/invite", "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("invite = %d %s", w.Code, w.Body)
	}
	step()
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software","website":"https://northwind.example"}}`); w.Code != http.StatusOK {
		t.Fatalf("PATCH = %d %s", w.Code, w.Body)
	}
	step()
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	step()
	a.get("/s/business")
	form := a.shownInputs()
	form.Set("business_description", "We sell accounting software.")
	form.Set("action", "save")
	wantRedirect(t, a.post("/s/business", form), a.base+"?done=saved")
	step()
	a.get("/s/documents")
	wantRedirect(t, a.upload("certificate_of_incorporation", "", "cert.pdf", "application/pdf", testPDF(t)), a.base+"/s/documents?done=uploaded#doc-certificate_of_incorporation")
	step()
	if w := e.do("POST", submitPath(id), "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("submit = %d %s", w.Code, w.Body)
	}
	step()
	e.decide(t, id, `{"type":"application.referred"}`)
	step()
	if _, err := (admin.Local{Service: e.svc}).OverrideDocument(context.Background(), admin.DocumentOverride{
		AppID: id, FieldID: "bank_statement", Reason: "Not needed", Action: admin.ActionSkip}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestActivityLog reads the log of a real life: every entry in order, its
// actor in the shape of its type, the fields changed, and hashes that
// chain as docs/api.md says, checked from the API's answer alone.
func TestActivityLog(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.life(t)
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.svc.APIKeys(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var clientID string
	for _, k := range keys {
		if k.Name == "acme all" {
			clientID = k.ClientID
		}
	}
	var personDocs []string // the test helper's uploads, in the order of the people
	for _, p := range app.Data.People {
		if _, ok := p.Documents["person_id_document"]; ok {
			personDocs = append(personDocs, "person_id_document for person "+p.ID)
		}
	}
	if len(personDocs) == 0 {
		t.Fatal("the test helper uploaded no person's document")
	}

	key := map[string]any{"type": "api_key", "id": clientID, "name": "acme all"}
	applicant := map[string]any{"type": "applicant", "id": app.Primary().ID, "email": "jane@northwind.example"}
	system := map[string]any{"type": "system"}
	operator := map[string]any{"type": "operator"}
	type want struct {
		at     int // seconds after testNow
		actor  map[string]any
		action string
		fields []any
		detail any
	}
	wants := []want{
		{0, key, "application.created", nil, nil},
		{0, system, "invite.sent", nil, nil},
		{1, key, "invite.resend_requested", nil, nil},
		{1, system, "invite.sent", nil, nil},
		{2, key, "fields.updated", []any{"industry", "website"}, nil},
		{3, applicant, "verification.sent", nil, nil},
		{3, applicant, "participant.verified", nil, nil},
		{3, applicant, "application.opened", nil, nil},
		{4, applicant, "form.saved", []any{"business_description"}, "business"},
		{5, applicant, "document.uploaded", nil, "certificate_of_incorporation"},
		{6, key, "test_helper.submit", nil, nil},
		{6, key, "form.saved", []any{"confirm_accuracy", "confirm_terms"}, "confirmation"},
		{6, key, "document.uploaded", nil, "proof_of_address"},
	}
	for _, d := range personDocs {
		wants = append(wants, want{6, key, "document.uploaded", nil, d})
	}
	wants = append(wants,
		want{6, key, "application.submitted", nil, nil},
		want{7, key, "decision.recorded", nil, "application.referred"},
		want{8, operator, "document.skipped", nil, "bank_statement: Not needed"},
	)

	page := e.activityPage(t, "acme-read", id, "?limit=100")
	if page.HasMore || page.NextCursor != nil {
		t.Errorf("one page: has_more %v, next_cursor %v", page.HasMore, page.NextCursor)
	}
	var got, expected []map[string]any
	for _, w := range wants {
		fields := w.fields
		if fields == nil {
			fields = []any{}
		}
		expected = append(expected, map[string]any{"at": onboarding.Timestamp(testNow.Add(time.Duration(w.at) * time.Second)),
			"actor": w.actor, "action": w.action, "fields": fields, "detail": w.detail})
	}
	prev := hexSHA256(id) // the log's start: the hash of the application id
	lastID := ""
	for i, entry := range page.Entries {
		rest := map[string]any{}
		for k, v := range entry {
			rest[k] = v
		}
		entryID, _ := rest["id"].(string)
		hash, _ := rest["hash"].(string)
		delete(rest, "id")
		delete(rest, "hash")
		got = append(got, rest)
		if !strings.HasPrefix(entryID, "act_") || entryID <= lastID {
			t.Errorf("entry %d id %q: want act_ and after %q", i, entryID, lastID)
		}
		lastID = entryID
		// What a partner does: drop the hash, canonicalise (sorted
		// members, no whitespace, no HTML escaping), hash after the
		// previous entry's hash.
		delete(entry, "hash")
		if h := hexSHA256(prev + sortedJSON(t, entry)); hash != h {
			t.Errorf("entry %d (%s): hash %s, want %s", i, rest["action"], hash, h)
		}
		prev = hash
	}
	if diff := cmp.Diff(expected, got); diff != "" {
		t.Errorf("activity (-want +got):\n%s", diff)
	}

	// verify-log finds it whole.
	r, err := admin.Local{Service: e.svc}.VerifyLog(context.Background(), admin.VerifyLog{AppID: id}, func(b admin.LogBreak) error {
		t.Errorf("broken: %+v", b)
		return nil
	})
	if err != nil || r != (admin.LogReport{Applications: 1, Entries: len(wants)}) {
		t.Errorf("VerifyLog = %+v, %v", r, err)
	}
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sortedJSON is v as encoding/json writes a map: members sorted, compact;
// with HTML escaping off, that is RFC 8785 for these entries.
func sortedJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestActivityPaging pages through a log with every page size: the pages
// are the whole log in order, has_more and next_cursor say what remains.
func TestActivityPaging(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	for i := 0; i < 6; i++ {
		if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software"}}`); w.Code != http.StatusOK {
			t.Fatal(w.Body)
		}
	}
	all := e.activityPage(t, "acme", id, "").Entries // the default limit, 50
	if len(all) != 8 {
		t.Fatalf("%d entries, want 8", len(all))
	}
	for _, limit := range []string{"1", "3", "7", "8", "100"} {
		var got []map[string]any
		query := "?limit=" + limit
		for pages := 0; ; pages++ {
			p := e.activityPage(t, "acme", id, query)
			got = append(got, p.Entries...)
			if !p.HasMore {
				if p.NextCursor != nil {
					t.Errorf("limit %s: last page has next_cursor %q", limit, *p.NextCursor)
				}
				break
			}
			if p.NextCursor == nil || pages > 10 {
				t.Fatalf("limit %s: has_more without a next_cursor (page %d)", limit, pages)
			}
			query = "?limit=" + limit + "&cursor=" + url.QueryEscape(*p.NextCursor)
		}
		if diff := cmp.Diff(all, got); diff != "" {
			t.Errorf("limit %s: pages (-want +got):\n%s", limit, diff)
		}
	}
	// An entry appended after a page is on the page its cursor opens.
	p := e.activityPage(t, "acme", id, "?limit=7")
	if !p.HasMore || p.NextCursor == nil {
		t.Fatalf("7 of 8 entries: has_more %v, next_cursor %v", p.HasMore, p.NextCursor)
	}
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"website":"https://x.example"}}`); w.Code != http.StatusOK {
		t.Fatal(w.Body)
	}
	next := e.activityPage(t, "acme", id, "?cursor="+url.QueryEscape(*p.NextCursor))
	if len(next.Entries) != 2 || !cmp.Equal(next.Entries[0], all[7]) || !cmp.Equal(next.Entries[1]["fields"], []any{"website"}) || next.HasMore {
		t.Errorf("after the 7th entry: %v, want the 8th and the new one", next)
	}
}

// TestActivityErrors checks every error of the endpoint, with its status
// and body, in the order they are checked.
func TestActivityErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	other := e.create(t, "acme", "")
	theirs := e.create(t, "globex", "")
	for i := 0; i < 2; i++ {
		e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software"}}`)
		e.do("PATCH", "/api/external/applications/"+other, "acme", `{"fields":{"industry":"software"}}`)
	}
	otherCursor := *e.activityPage(t, "acme", other, "?limit=1").NextCursor
	listCursor := decode(t, e.do("GET", "/api/external/applications?limit=1", "acme", ""))["next_cursor"].(string)
	unknown := uuid.NewString()
	limitMsg := errBody("limit must be between 1 and 100")
	tests := []struct {
		name, key, path string
		status          int
		body            map[string]any
	}{
		{"no key", "", activityPath(id, ""), 401, errBody("Missing API key")},
		{"key without applications:read", "acme-create", activityPath(id, ""), 401, errBody("API key missing required scopes: applications:read")},
		{"write-only key", "acme-write", activityPath(id, ""), 401, errBody("API key missing required scopes: applications:read")},
		{"limit 0", "acme", activityPath(id, "?limit=0"), 400, limitMsg},
		{"limit 101", "acme", activityPath(id, "?limit=101"), 400, limitMsg},
		{"limit not a number", "acme", activityPath(id, "?limit=ten"), 400, limitMsg},
		{"negative limit", "acme", activityPath(id, "?limit=-1"), 400, limitMsg},
		{"bad limit before an unknown application", "acme", activityPath(unknown, "?limit=0"), 400, limitMsg},
		{"cursor not base64", "acme", activityPath(id, "?cursor=!!!"), 400, errBody("Invalid cursor")},
		{"cursor of another application's log", "acme", activityPath(id, "?cursor="+url.QueryEscape(otherCursor)), 400, errBody("Invalid cursor")},
		{"cursor of list applications", "acme", activityPath(id, "?cursor="+url.QueryEscape(listCursor)), 400, errBody("Invalid cursor")},
		{"unknown application", "acme", activityPath(unknown, ""), 404, errBody("Application not found")},
		{"malformed id", "acme", activityPath("nope", ""), 404, errBody("Application not found")},
		{"upper-case id", "acme", activityPath(strings.ToUpper(id), ""), 404, errBody("Application not found")},
		{"another organization's application", "acme", activityPath(theirs, ""), 404, errBody("Application not found")},
		{"acme's application to globex", "globex", activityPath(id, ""), 404, errBody("Application not found")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("GET", tt.path, tt.key, ""), tt.status, tt.body)
		})
	}
	wantError(t, e.do("POST", activityPath(id, ""), "acme", ""), http.StatusMethodNotAllowed, errBody("Method not allowed"))
	// The cursor of the application's own log works.
	if p := e.activityPage(t, "acme", other, "?cursor="+url.QueryEscape(otherCursor)); len(p.Entries) != 3 {
		t.Errorf("other's own cursor: %d entries, want 3", len(p.Entries))
	}
	// Each organization reads its own.
	if p := e.activityPage(t, "globex", theirs, ""); len(p.Entries) == 0 || p.Entries[0]["actor"].(map[string]any)["name"] != "globex all" {
		t.Errorf("globex's log = %v", p.Entries)
	}
}
