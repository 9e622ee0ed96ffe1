package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

const rfiBody = `{"company_name":"Northwind Trading Ltd","country":"GB","company_number":"10000001","primary_contact":{"name":"Jane Smith","email":"jane@northwind.example","role":"Director"}}`

// createRFI creates an RFI request for key and returns the response.
func (e *env) createRFI(t *testing.T, key, body string) map[string]any {
	t.Helper()
	if body == "" {
		body = rfiBody
	}
	w := e.do("POST", "/api/external/rfi-requests", key, body)
	if w.Code != http.StatusCreated {
		t.Fatalf("create rfi request = %d %s", w.Code, w.Body)
	}
	return decode(t, w)
}

// rfiVisitor signs in at a pre-authenticated RFI link through the domain,
// as the page does.
func (e *env) rfiVisitor(t *testing.T, created map[string]any) *onboarding.RFIVisitor {
	t.Helper()
	return rfiVisitorOf(t, e, created)
}

func rfiVisitorOf(t testing.TB, e *env, created map[string]any) *onboarding.RFIVisitor {
	t.Helper()
	u, err := url.Parse(created["link"].(string))
	if err != nil {
		t.Fatal(err)
	}
	slug := strings.TrimPrefix(u.Path, "/r/")
	v, err := e.svc.VisitRFI(context.Background(), u.Host, slug, u.Query().Get("auth_code"), nil)
	if err != nil || !v.SignedIn {
		t.Fatalf("VisitRFI = %+v, %v; want signed in", v, err)
	}
	return v
}

// TestCreateRFIErrors checks every error of create RFI request in its order.
func TestCreateRFIErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	example := map[string]any{
		"company_name": "Northwind Trading Ltd", "country": "GB", "company_number": "10000001",
		"primary_contact":   map[string]any{"name": "Jane Smith", "email": "jane@northwind.example", "role": "Director"},
		"pre_authenticated": false,
	}
	required := []any{"company_name", "country", "primary_contact.name", "primary_contact.email"}
	missing := func(m ...any) map[string]any {
		return map[string]any{"error": "Missing required fields", "required": required, "missing": m, "example": example}
	}
	contact := `"primary_contact":{"name":"Jane","email":"jane@northwind.example"}`
	tests := []struct {
		name, key, body string
		status          int
		want            map[string]any
	}{
		{"not JSON", "acme", `{"company_name":`, 400, errBody("Invalid JSON body")},
		{"invalid JSON before missing fields", "acme", `{"country":,}`, 400, errBody("Invalid JSON body")},
		{"only country missing", "acme", `{"company_name":"X",` + contact + `}`, 400, errBody("Missing required field: country")},
		{"country empty", "acme", `{"company_name":"X","country":" ",` + contact + `}`, 400, errBody("Missing required field: country")},
		{"everything missing", "acme", `{}`, 400, missing("company_name", "country", "primary_contact.name", "primary_contact.email")},
		{"empty body", "acme", ``, 400, missing("company_name", "country", "primary_contact.name", "primary_contact.email")},
		{"country and name missing", "acme", `{"primary_contact":{"name":"Jane","email":"jane@northwind.example"}}`, 400, missing("company_name", "country")},
		{"contact email empty", "acme", `{"company_name":"X","country":"IE","primary_contact":{"name":"Jane","email":""}}`, 400, missing("primary_contact.email")},
		{"missing before a bad email", "acme", `{"country":"IE","primary_contact":{"name":"Jane","email":"nope"}}`, 400, missing("company_name")},
		{"bad email", "acme", `{"company_name":"X","country":"IE","primary_contact":{"name":"Jane","email":"jane@"}}`, 400, errBody("Invalid email address for primary_contact.email")},
		{"bad email before bad country", "acme", `{"company_name":"X","country":"Ireland","primary_contact":{"name":"Jane","email":"jane"}}`, 400, errBody("Invalid email address for primary_contact.email")},
		{"country not two letters", "acme", `{"company_name":"X","country":"IRL",` + contact + `}`, 400, errBody("Invalid country 'IRL'")},
		{"country with a digit", "acme", `{"company_name":"X","country":"G1",` + contact + `}`, 400, errBody("Invalid country 'G1'")},
		{"GB without number", "acme", `{"company_name":"X","country":"gb",` + contact + `}`, 400, errBody("company_number is required for UK jurisdictions")},
		{"GB number before agent", "acme", `{"company_name":"X","country":"GB","agent_id":"nope",` + contact + `}`, 400, errBody("company_number is required for UK jurisdictions")},
		{"agent not a UUID", "acme", `{"company_name":"X","country":"IE","agent_id":"agent-1",` + contact + `}`, 400, errBody("Invalid agent_id")},
		{"another organization's agent", "acme", `{"company_name":"X","country":"IE","agent_id":"` + globexAgent + `",` + contact + `}`, 400, errBody("Invalid agent_id")},
		{"unknown agent", "acme", `{"company_name":"X","country":"IE","agent_id":"9f9f9f9f-0000-4000-8000-000000000000",` + contact + `}`, 400, errBody("Invalid agent_id")},
		{"inactive agent", "acme", `{"company_name":"X","country":"IE","agent_id":"` + acmeAgentIdle + `",` + contact + `}`, 400, errBody("RFI agent is not active")},
		{"no default agent", "empty", `{"company_name":"X","country":"IE",` + contact + `}`, 400, errBody("No active RFI agent found for this organization")},
		{"agent before registry", "acme", `{"company_name":"X","country":"GB","company_number":"99999999","agent_id":"` + acmeAgentIdle + `",` + contact + `}`, 400, errBody("RFI agent is not active")},
		{"malformed company number", "acme", `{"company_name":"X","country":"GB","company_number":"12-34",` + contact + `}`, 400, nil},
		{"company not found", "acme", `{"company_name":"X","country":"GB","company_number":"99999999",` + contact + `}`, 400, nil},
		{"wrong type", "acme", `{"company_name":1}`, 400, errBody("Invalid request body: company_name must be a string")},
		{"no scope", "acme-read", rfiBody, 401, errBody("API key missing required scopes: rfi:create")},
		{"no key", "", rfiBody, 401, errBody("Missing API key")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := e.do("POST", "/api/external/rfi-requests", tt.key, tt.body)
			if tt.want == nil {
				// The registry's own messages (docs/api.md), tested there;
				// here only that they come through as 400.
				if w.Code != tt.status {
					t.Errorf("status = %d, want %d; %s", w.Code, tt.status, w.Body)
				}
				return
			}
			wantError(t, w, tt.status, tt.want)
		})
	}
	if got := e.do("GET", "/api/external/rfi-requests", "acme", ""); !strings.Contains(got.Body.String(), `"rfi_requests":[]`) {
		t.Errorf("a refused create stored something: %s", got.Body)
	}
}

// TestCreateRFIRegistryMessages checks that the registry's answers are the
// ones of create application, without the name match: a different name passes.
func TestCreateRFIRegistryMessages(t *testing.T) {
	e := newEnv(t, envOptions{})
	contact := `"primary_contact":{"name":"Jane","email":"jane@northwind.example"}`
	wantError(t, e.do("POST", "/api/external/rfi-requests", "acme", `{"company_name":"X","country":"GB","company_number":"99999999",`+contact+`}`),
		400, decode(t, e.do("POST", "/api/external/applications", "acme", `{"primary_contact":{"email":"jane@northwind.example"},"country":"GB","company_number":"99999999","company_name":"X"}`)))
	got := e.createRFI(t, "acme", `{"company_name":"Not the registered name","country":"GB","company_number":"1000 0001",`+contact+`}`)
	r := decode(t, e.do("GET", "/api/external/rfi-requests/"+got["request_id"].(string), "acme", ""))
	if r["registered_name"] != "NORTHWIND TRADING LIMITED" || r["company_number"] != "10000001" || r["company_name"] != "Not the registered name" {
		t.Errorf("registry enrichment: got %v", r)
	}
}

func TestCreateRFI(t *testing.T) {
	e := newEnv(t, envOptions{deterministic: true})
	w := e.do("POST", "/api/external/rfi-requests", "acme", strings.Replace(rfiBody, `}}`, `},"pre_authenticated":true}`, 1))
	if w.Code != http.StatusCreated {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	got := decode(t, w)
	id := got["request_id"].(string)
	code, _ := got["pre_auth_code"].(string)
	if len(code) != 16 || strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
		t.Errorf("pre_auth_code = %q, want 16 alphanumeric characters", code)
	}
	participants := got["participants"].([]any)
	pid := participants[0].(map[string]any)["id"].(string)
	slug := strings.TrimPrefix(strings.Split(got["link"].(string), "?")[0], "https://onboard.test/r/")
	want := map[string]any{
		"success": true, "request_id": id, "status": "active",
		"link":                "https://onboard.test/r/" + slug + "?auth_code=" + code,
		"expires_at":          "2026-12-05T09:30:00.000Z",
		"pre_auth_code":       code,
		"pre_auth_expires_at": "2026-11-21T09:40:00.000Z",
		"participants":        []any{map[string]any{"id": pid, "email": "jane@northwind.example", "name": "Jane Smith", "role": "primary"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	// The code is stored only as a hash.
	r, err := e.store.RFIRequest(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(r); bytes.Contains(raw, []byte(code)) {
		t.Error("the stored request contains the pre-auth code")
	}
	// The contact was emailed the link without the code.
	mails := e.mail.messages()
	if len(mails) != 1 || mails[0].Link != "https://onboard.test/r/"+slug || strings.Contains(mails[0].Text, code) ||
		!strings.Contains(mails[0].Text, "Business bank statement") {
		t.Errorf("mail = %+v", mails)
	}

	// Another agent, by id in any case: its expiry; without pre-auth, no code.
	quick := e.createRFI(t, "acme", `{"company_name":"Emerald","country":"ie","agent_id":"`+strings.ToUpper(acmeAgentQuick)+`","primary_contact":{"name":"C","email":"c@emerald.example"}}`)
	if quick["expires_at"] != "2026-11-24T09:30:00.000Z" || quick["pre_auth_code"] != nil || strings.Contains(quick["link"].(string), "auth_code") {
		t.Errorf("quick agent: %v", quick)
	}
	q := decode(t, e.do("GET", "/api/external/rfi-requests/"+quick["request_id"].(string), "acme", ""))
	if q["agent_id"] != acmeAgentQuick || q["country"] != "IE" || q["registered_name"] != nil || q["company_number"] != nil {
		t.Errorf("quick request: %v", q)
	}

	// Links use an organization's active custom domain.
	g := e.createRFI(t, "globex", `{"company_name":"Globex client","country":"FR","primary_contact":{"name":"A","email":"a@client.example"}}`)
	if !strings.HasPrefix(g["link"].(string), "https://onboarding.globex.example/r/") {
		t.Errorf("globex link = %v", g["link"])
	}
}

func TestCreateRFIMailFailure(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mail.fail = os.ErrDeadlineExceeded
	got := e.createRFI(t, "acme", "")
	if got["warning"] != onboarding.RFIInviteWarning || got["status"] != "active" {
		t.Errorf("create with a failing mailer = %v", got)
	}
}

// TestReadRFI covers get, list and get document, with scopes and
// organization isolation.
func TestReadRFI(t *testing.T) {
	e := newEnv(t, envOptions{})
	first := e.createRFI(t, "acme", strings.Replace(rfiBody, `}}`, `},"pre_authenticated":true}`, 1))
	id := first["request_id"].(string)
	second := e.createRFI(t, "acme", `{"company_name":"Emerald","country":"IE","primary_contact":{"name":"C","email":"c@emerald.example"}}`)
	other := e.createRFI(t, "globex", `{"company_name":"Globex client","country":"FR","primary_contact":{"name":"A","email":"a@client.example"}}`)

	// Upload as the contact: one accepted PDF and one rejected file.
	v := e.rfiVisitor(t, first)
	doc, err := e.svc.UploadRFIDocument(context.Background(), v, onboarding.Upload{FieldID: "bank_statement", FileName: "statement.pdf", Type: "application/pdf", Body: bytes.NewReader(testPDF(t))})
	if err != nil || doc.Status != onboarding.DocumentAccepted {
		t.Fatalf("upload = %+v, %v", doc, err)
	}
	if _, err := e.svc.UploadRFIDocument(context.Background(), v, onboarding.Upload{FieldID: "proof_of_address", FileName: "bill.pdf", Type: "application/pdf", Body: strings.NewReader("not a pdf")}); err != nil {
		t.Fatal(err)
	}

	got := decode(t, e.do("GET", "/api/external/rfi-requests/"+id, "acme", ""))
	docs := got["documents"].([]any)
	if len(docs) != 1 {
		t.Fatalf("documents = %v, want only the accepted one", docs)
	}
	d := docs[0].(map[string]any)
	url, _ := d["download_url"].(string)
	if !strings.HasPrefix(url, "https://onboard.test/files/") {
		t.Errorf("download_url = %q", url)
	}
	delete(d, "download_url")
	pid := first["participants"].([]any)[0].(map[string]any)["id"]
	want := map[string]any{
		"id": id, "agent_id": acmeAgent, "status": "active", "company_name": "Northwind Trading Ltd",
		"registered_name": "NORTHWIND TRADING LIMITED", "company_number": "10000001", "country": "GB",
		"link": strings.Split(first["link"].(string), "?")[0], "expires_at": "2026-12-05T09:30:00.000Z",
		"created_at": "2026-11-21T09:30:00.000Z", "opened_at": "2026-11-21T09:30:00.000Z", "completed_at": nil,
		"participants": []any{map[string]any{"id": pid, "email": "jane@northwind.example", "name": "Jane Smith", "role": "primary"}},
		"documents": []any{map[string]any{"id": doc.FileID, "field_id": "bank_statement", "file_name": "statement.pdf",
			"file_type": "application/pdf", "status": "accepted", "uploaded_at": "2026-11-21T09:30:00.000Z"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}

	// The document's own link, valid an hour.
	w := e.do("GET", "/api/external/rfi-requests/"+id+"/documents/"+doc.FileID, "acme", "")
	link := decode(t, w)
	if w.Code != 200 || link["file_name"] != "statement.pdf" || link["file_type"] != "application/pdf" || !strings.HasPrefix(link["url"].(string), "https://onboard.test/files/") {
		t.Errorf("get document = %d %v", w.Code, link)
	}
	e.clock.Advance(59 * time.Minute)
	if r := e.do("GET", strings.TrimPrefix(link["url"].(string), "https://onboard.test"), "", ""); r.Code != 200 || !bytes.Equal(r.Body.Bytes(), testPDF(t)) {
		t.Errorf("download after 59 minutes = %d", r.Code)
	}

	errorsTests := []struct {
		name, key, path string
		status          int
		msg             string
	}{
		{"unknown request", "acme", "/api/external/rfi-requests/9f9f9f9f-0000-4000-8000-000000000000", 404, "RFI request not found"},
		{"not a UUID", "acme", "/api/external/rfi-requests/nope", 404, "RFI request not found"},
		{"upper-case id", "acme", "/api/external/rfi-requests/" + strings.ToUpper(id), 404, "RFI request not found"},
		{"another organization's", "globex", "/api/external/rfi-requests/" + id, 404, "RFI request not found"},
		{"document of another organization's request", "globex", "/api/external/rfi-requests/" + id + "/documents/" + doc.FileID, 404, "RFI request not found"},
		{"unknown document", "acme", "/api/external/rfi-requests/" + id + "/documents/9f9f9f9f-0000-4000-8000-000000000000", 404, "Document not found"},
		{"document of another request", "acme", "/api/external/rfi-requests/" + second["request_id"].(string) + "/documents/" + doc.FileID, 404, "Document not found"},
		{"no scope to read", "acme-create", "/api/external/rfi-requests/" + id, 401, "API key missing required scopes: rfi:read"},
		{"no scope to list", "acme-read", "/api/external/rfi-requests", 401, "API key missing required scopes: rfi:read"},
		{"no scope for a document", "acme-read", "/api/external/rfi-requests/" + id + "/documents/" + doc.FileID, 401, "API key missing required scopes: rfi:read"},
		{"bad status", "acme", "/api/external/rfi-requests?status=open", 400, "Invalid status 'open'"},
		{"bad limit", "acme", "/api/external/rfi-requests?limit=0", 400, "limit must be between 1 and 100"},
		{"bad cursor", "acme", "/api/external/rfi-requests?cursor=xyz", 400, "Invalid cursor"},
	}
	for _, tt := range errorsTests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("GET", tt.path, tt.key, ""), tt.status, errBody(tt.msg))
		})
	}

	// List: newest first, paged, per organization, by status.
	page := decode(t, e.do("GET", "/api/external/rfi-requests?limit=1", "acme", ""))
	items := page["rfi_requests"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != second["request_id"] || page["has_more"] != true {
		t.Fatalf("first page = %v", page)
	}
	next := decode(t, e.do("GET", "/api/external/rfi-requests?limit=1&cursor="+page["next_cursor"].(string), "acme", ""))
	items = next["rfi_requests"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != id || next["has_more"] != false || next["next_cursor"] != nil {
		t.Fatalf("second page = %v", next)
	}
	if d := items[0].(map[string]any)["documents"].([]any); len(d) != 1 || d[0].(map[string]any)["download_url"] == nil {
		t.Errorf("listed documents = %v, want one with a download_url", d)
	}
	wantError(t, e.do("GET", "/api/external/rfi-requests?status=active&cursor="+page["next_cursor"].(string), "acme", ""), 400, errBody("Invalid cursor"))
	if err := e.svc.CompleteRFI(context.Background(), v); err == nil {
		t.Fatal("completed with a rejected document")
	}
	if _, err := e.svc.UploadRFIDocument(context.Background(), v, onboarding.Upload{FieldID: "proof_of_address", FileName: "bill.pdf", Type: "application/pdf", Body: bytes.NewReader(testPDF(t))}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CompleteRFI(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	completed := decode(t, e.do("GET", "/api/external/rfi-requests?status=completed", "acme", ""))["rfi_requests"].([]any)
	active := decode(t, e.do("GET", "/api/external/rfi-requests?status=active", "acme", ""))["rfi_requests"].([]any)
	if len(completed) != 1 || completed[0].(map[string]any)["id"] != id || len(active) != 1 || active[0].(map[string]any)["id"] != second["request_id"] {
		t.Errorf("by status: completed %v, active %v", completed, active)
	}
	if c := completed[0].(map[string]any); c["completed_at"] != "2026-11-21T10:29:00.000Z" {
		t.Errorf("completed_at = %v", c["completed_at"])
	}
	globex := decode(t, e.do("GET", "/api/external/rfi-requests", "globex", ""))["rfi_requests"].([]any)
	if len(globex) != 1 || globex[0].(map[string]any)["id"] != other["request_id"] {
		t.Errorf("globex list = %v", globex)
	}
}
