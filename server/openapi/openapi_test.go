package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The server's tests check the document against the server
// (server/openapi_test.go); these check the package's own promises.

func TestDocumentIsOpenAPI31(t *testing.T) {
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(Document(), &doc); err != nil {
		t.Fatalf("the embedded document is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	// Document hands out a copy: changing it cannot change what is served.
	b := Document()
	b[0] = 'x'
	if Document()[0] != '{' {
		t.Errorf("Document returned the embedded bytes themselves")
	}
}

func TestIfNoneMatch(t *testing.T) {
	h := Handler()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", Path, nil))
	etag := w.Header().Get("ETag")
	tests := []struct {
		header string
		want   int
	}{
		{"", http.StatusOK},
		{etag, http.StatusNotModified},
		{"W/" + etag, http.StatusNotModified}, // weak comparison (RFC 9110 §13.1.2)
		{`"a", ` + etag + `, "b"`, http.StatusNotModified},
		{"*", http.StatusNotModified},
		{`"a", "b"`, http.StatusOK},
		{etag[:len(etag)-2] + `"`, http.StatusOK},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", Path, nil)
		if tt.header != "" {
			r.Header.Set("If-None-Match", tt.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("If-None-Match %q: %d, want %d", tt.header, w.Code, tt.want)
		}
		if got := w.Header().Get("ETag"); got != etag {
			t.Errorf("If-None-Match %q: ETag %q, want %q", tt.header, got, etag)
		}
		if tt.want == http.StatusNotModified && w.Body.Len() > 0 {
			t.Errorf("If-None-Match %q: a 304 with a body", tt.header)
		}
	}
}
