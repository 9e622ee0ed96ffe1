package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	tests := []struct {
		name string
		key  string
		want string
	}{
		{"no header", "", "Missing API key"},
		{"blank header", "raw:   ", "Missing API key"},
		{"basic scheme", "raw:Basic " + e.keys["acme"], "Invalid API key"},
		{"bearer without key", "raw:Bearer", "Invalid API key"},
		{"not our prefix", "raw:Bearer sk_live_abc.def", "Invalid API key"},
		{"no dot", "raw:Bearer svc_abcdefghijklmnop", "Invalid API key"},
		{"unknown client id", "raw:Bearer svc_abcdefghijklmnop.secret", "Invalid API key"},
		{"wrong secret", "raw:Bearer " + e.keys["acme"][:21] + "WRONGSECRET", "Invalid API key"},
		{"revoked", "revoked", "Invalid API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := e.do("GET", "/api/external/applications/"+id, tt.key, "")
			wantError(t, w, http.StatusUnauthorized, errBody(tt.want))
			if got := w.Header().Get("WWW-Authenticate"); got == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	t.Run("two Authorization headers", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/api/external/applications/"+id, nil)
		r.Header.Add("Authorization", "Bearer "+e.keys["acme"])
		r.Header.Add("Authorization", "Bearer "+e.keys["acme"])
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		wantError(t, w, http.StatusUnauthorized, errBody("Invalid API key"))
	})
	t.Run("bearer is case-insensitive", func(t *testing.T) {
		if w := e.do("GET", "/api/external/applications", "raw:bearer "+e.keys["acme"], ""); w.Code != http.StatusOK {
			t.Errorf("status = %d, want 200", w.Code)
		}
	})
	t.Run("expired", func(t *testing.T) {
		if w := e.do("GET", "/api/external/applications", "expiring", ""); w.Code != http.StatusOK {
			t.Fatalf("before expiry: status = %d, want 200", w.Code)
		}
		e.clock.Advance(time.Hour)
		wantError(t, e.do("GET", "/api/external/applications", "expiring", ""), http.StatusUnauthorized, errBody("Invalid API key"))
	})
}

func TestScopes(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	create := `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"123","company_name":"X"}`
	endpoints := []struct {
		method, path, body string
		scope              string
		status             int
	}{
		{"POST", "/api/external/applications", create, "applications:create", http.StatusCreated},
		{"POST", "/api/external/applications/" + id + "/pre-auth", "", "applications:create", http.StatusCreated},
		{"GET", "/api/external/applications", "", "applications:read", http.StatusOK},
		{"GET", "/api/external/applications/" + id, "", "applications:read", http.StatusOK},
		{"GET", "/api/external/applications/" + id + "/fields", "", "applications:read", http.StatusOK},
		{"PATCH", "/api/external/applications/" + id, `{"fields":{"industry":"software"}}`, "applications:write", http.StatusOK},
	}
	keyOf := map[string]string{"applications:create": "acme-create", "applications:read": "acme-read", "applications:write": "acme-write"}
	for _, ep := range endpoints {
		for scope, key := range keyOf {
			t.Run(ep.method+" "+ep.path+" with "+scope, func(t *testing.T) {
				w := e.do(ep.method, ep.path, key, ep.body)
				if scope == ep.scope {
					if w.Code != ep.status {
						t.Errorf("status = %d, want %d: %s", w.Code, ep.status, w.Body)
					}
					return
				}
				wantError(t, w, http.StatusUnauthorized, errBody("API key missing required scopes: "+ep.scope))
			})
		}
	}
}

func TestOrganizationIsolation(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	for _, ep := range []struct{ method, path, body string }{
		{"GET", "/api/external/applications/" + id, ""},
		{"GET", "/api/external/applications/" + id + "/fields", ""},
		{"PATCH", "/api/external/applications/" + id, `{"fields":{"industry":"software"}}`},
		{"POST", "/api/external/applications/" + id + "/pre-auth", ""},
	} {
		wantError(t, e.do(ep.method, ep.path, "globex", ep.body), http.StatusNotFound, errBody("Application not found"))
	}
	w := e.do("GET", "/api/external/applications", "globex", "")
	if got := decode(t, w)["applications"].([]any); len(got) != 0 {
		t.Errorf("globex lists %d applications of acme", len(got))
	}
}
