package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/admin"
	"onboard/server/web"
)

// TestUnreadableLinksAreRefused: a signed download link and an applicant's
// link whose query string cannot be read whole, or that gives a parameter
// twice, are refused, not read in part (the lists' queries are in
// TestBadInputIsRefused).
func TestUnreadableLinksAreRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.bluebell(t, "acme")
	var sd seedDoc
	for _, d := range e.seedDocuments(t, id, testDocuments()) {
		if d.content != nil && d.doc.Status == "accepted" {
			sd = d
			break
		}
	}
	w := e.do("GET", "/api/external/applications/"+id+"/documents/"+sd.doc.FileID, "acme-read", "")
	link, _ := decode(t, w)["url"].(string)
	if w.Code != http.StatusOK || link == "" {
		t.Fatalf("get document = %d %s", w.Code, w.Body)
	}
	e.wantDownload(t, link, sd)
	for _, tt := range []struct{ name, link, want string }{
		{"a broken escape after the link", link + "&x=%zz", `Invalid query string: invalid %-escape "%zz"`},
		{"a semicolon after the link", link + ";x=1", `Invalid query string: ";" is not a separator (use "&")`},
		{"a broken escape in the signature", strings.Replace(link, "s=", "s=%zz", 1), `Invalid query string: invalid %-escape "%zz"`},
	} {
		t.Run("download: "+tt.name, func(t *testing.T) {
			w := e.download(t, tt.link)
			if w.Code != http.StatusBadRequest {
				t.Errorf("status = %d, want 400; body %.200s", w.Code, w.Body)
				return
			}
			if diff := cmp.Diff(errBody(tt.want), decode(t, w)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}

	created := decode(t, e.do("POST", "/api/external/applications", "acme",
		`{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd","pre_auth":true}`))
	code, _ := created["pre_auth_code"].(string)
	formLink, _ := created["link"].(string)
	if code == "" || formLink == "" {
		t.Fatalf("create with pre_auth: %v", created)
	}
	for _, tt := range []struct{ name, query string }{
		{"a broken escape after the code", "?auth_code=" + code + "%zz"},
		{"the code twice", "?auth_code=" + code + "&auth_code=" + code},
		{"a broken escape in another parameter", "?auth_code=" + code + "&utm=%zz"},
		{"done twice", "?done=saved&done=invited"},
	} {
		t.Run("form: "+tt.name, func(t *testing.T) {
			a := e.applicantAt(t, formLink)
			w := a.get(tt.query)
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "This address could not be read.") {
				t.Errorf("GET %s = %d, want 400 and the page saying the address could not be read; body %.300s", tt.query, w.Code, w.Body)
			}
			if a.cookie != nil {
				t.Errorf("GET %s gave a session cookie", tt.query)
			}
		})
	}
	// The link whole still signs in.
	if w := e.applicantAt(t, formLink).get("?auth_code=" + code); w.Code != http.StatusSeeOther {
		t.Errorf("GET with the code = %d, want 303", w.Code)
	}
}

// TestAdminQueriesAreStrict: the admin socket reads its query strings as
// the API does: a filter it cannot read is refused, never dropped (which
// would select every organization), and so is an empty or repeated limit.
func TestAdminQueriesAreStrict(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := admin.NewHandler(admin.Options{Service: e.svc, Answer: web.ErrorAnswer})
	for _, tt := range []struct{ path, want string }{
		{"/keys?org=acme%zz", `Invalid query string: invalid %-escape "%zz"`},
		{"/keys?org=acme&org=globex", `Invalid query string: duplicate parameter "org"`},
		{"/webhooks?org=%zz", `Invalid query string: invalid %-escape "%zz"`},
		{"/webhook-deliveries?limit=", "Invalid limit ''"},
		{"/webhook-deliveries?limit=1&limit=2", `Invalid query string: duplicate parameter "limit"`},
		{"/webhook-deliveries?event=%zz", `Invalid query string: invalid %-escape "%zz"`},
		{"/apps/verify-log?app=a;b", `Invalid query string: ";" is not a separator (use "&")`},
		{"/apps/export?org=acme&status=%zz", `Invalid query string: invalid %-escape "%zz"`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tt.path, nil))
		if w.Code != http.StatusBadRequest || decode(t, w)["error"] != tt.want {
			t.Errorf("GET %s = %d %.200s, want 400 %q", tt.path, w.Code, w.Body, tt.want)
		}
	}
}
