package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mapKV is a CeilingKV in memory.
type mapKV map[string][]byte

func (m mapKV) Get(key string) ([]byte, bool, error) { v, ok := m[key]; return v, ok, nil }
func (m mapKV) Put(key string, value []byte) error   { m[key] = value; return nil }

func TestCeilingHandler(t *testing.T) {
	h := CeilingHandler(mapKV{})
	tests := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/kv/a", "", http.StatusNotFound, `{"message":"Not Found"}` + "\n"},
		{"POST", "/kv/a", `{"n":1}`, http.StatusNoContent, ""},
		{"GET", "/kv/a", "", http.StatusOK, `{"n":1}`},
		{"POST", "/kv/b", strings.Repeat("x", maxCeilingValue+1), http.StatusRequestEntityTooLarge, `{"message":"Request Entity Too Large"}` + "\n"},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
		if w.Code != tt.status {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, w.Code, tt.status)
		}
		if diff := cmp.Diff(tt.want, w.Body.String()); diff != "" {
			t.Errorf("%s %s body (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
}
