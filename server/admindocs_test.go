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

// TestAdminDocumentOverride drives POST /docs/override of the admin socket's
// handler: the JSON answers and statuses the CLI relays.
func TestAdminDocumentOverride(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	h := admin.NewHandler(admin.Options{Service: e.svc, Answer: web.ErrorAnswer})
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/docs/override", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	unknown := "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90"
	for _, tt := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"bad JSON", `{"app":`, http.StatusBadRequest, "Invalid JSON body"},
		{"no action", `{"app":"` + id + `","field":"bank_statement","reason":"r"}`, http.StatusBadRequest, "Invalid action '': use force or skip"},
		{"unknown action", `{"app":"` + id + `","field":"bank_statement","reason":"r","action":"waive"}`, http.StatusBadRequest,
			"Invalid action 'waive': use force or skip"},
		{"unknown application", `{"app":"` + unknown + `","field":"bank_statement","reason":"r","action":"skip"}`, http.StatusNotFound,
			"Application " + unknown + " not found"},
		{"unknown person", `{"app":"` + id + `","field":"person_id_document","person":"p9","reason":"r","action":"skip"}`, http.StatusNotFound,
			"Person p9 not found in application " + id},
		{"force with no upload", `{"app":"` + id + `","field":"bank_statement","reason":"r","action":"force"}`, http.StatusBadRequest,
			"No file has been uploaded for 'bank_statement'; use docs skip to waive the requirement"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, post(tt.body), tt.status, errBody(tt.msg))
		})
	}

	w := post(`{"app":"` + id + `","field":"bank_statement","reason":" Not applicable ","action":"skip"}`)
	if w.Code != http.StatusOK {
		t.Fatalf("skip = %d %s", w.Code, w.Body)
	}
	got := decode(t, w)
	fileID, _ := got["file_id"].(string)
	want := map[string]any{"file_id": fileID, "status": "skipped", "user_override_reason": "Not applicable", "overridden_at": "2026-11-21T09:30:00Z"}
	if diff := cmp.Diff(want, got); diff != "" || fileID == "" {
		t.Errorf("skip answer (-want +got):\n%s", diff)
	}
	doc := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["data"].(map[string]any)["documents"].(map[string]any)["bank_statement"]
	if d, _ := doc.(map[string]any); d["status"] != "skipped" || d["file_id"] != fileID || d["user_override_reason"] != "Not applicable" {
		t.Errorf("get-application shows bank_statement = %v; want the skip", doc)
	}
}
