package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

func TestGetApplication(t *testing.T) {
	e := newEnv(t, envOptions{deterministic: true})
	id := e.create(t, "acme", `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd","pre_auth":true}`)
	e.clock.Advance(90_000_000_000)
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"software","annual_turnover":{"amount":1250000,"currency":"GBP"},"countries_of_operation":["GB","IE"]}}`); w.Code != http.StatusOK {
		t.Fatalf("patch = %d %s", w.Code, w.Body)
	}
	w := e.do("GET", "/api/external/applications/"+id, "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store (the payload carries personal data)", cc)
	}
	if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
		t.Errorf("Content-Length = %q, want %d (the body's length, not chunked)", cl, w.Body.Len())
	}
	golden(t, "get_application.json", w.Body.Bytes())

	// Re-reading yields the same application: reads never change it.
	again := e.do("GET", "/api/external/applications/"+id, "acme", "")
	if again.Body.String() != w.Body.String() {
		t.Errorf("second read differs:\n%s\n%s", w.Body, again.Body)
	}
	for _, bad := range []string{uuid.NewString(), "not-a-uuid", "00000000-0000-0000-0000-000000000000",
		strings.ToUpper(id), strings.ReplaceAll(id, "-", ""), "urn:uuid:" + id, "{" + id + "}"} {
		wantError(t, e.do("GET", "/api/external/applications/"+bad, "acme", ""), http.StatusNotFound, errBody("Application not found"))
	}
}

// TestGetWhileUpdating reads an application from several goroutines while
// it is PATCHed: reads share the cached application (Store.ReadApplication),
// so under -race this fails if rendering writes to it or an update changes
// the copy readers share. Every read answers a whole application, and the
// read after the last PATCH shows it.
func TestGetWhileUpdating(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	const readers, reads, patches = 4, 25, 25
	var wg sync.WaitGroup
	failures := make(chan string, readers*reads+patches)
	for range readers {
		wg.Go(func() {
			for range reads {
				if w := e.do("GET", "/api/external/applications/"+id, "acme", ""); w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
					failures <- fmt.Sprintf("GET = %d %s", w.Code, w.Body)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range patches {
			if w := e.do("PATCH", "/api/external/applications/"+id, "acme", fmt.Sprintf(`{"fields":{"business_description":"Edit %d"}}`, i)); w.Code != http.StatusOK {
				failures <- fmt.Sprintf("PATCH = %d %s", w.Code, w.Body)
			}
		}
	})
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	fields := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["data"].(map[string]any)["fields"].(map[string]any)
	if got, want := fields["business_description"], fmt.Sprintf("Edit %d", patches-1); got != want {
		t.Errorf("business_description after the PATCHes = %v, want %q", got, want)
	}
}

func TestGetWithCustomDomain(t *testing.T) {
	e := newEnv(t, envOptions{deterministic: true})
	id := e.create(t, "globex", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000008","company_name":"Bluebell Group Ltd"}`)
	res := decode(t, e.do("GET", "/api/external/applications/"+id, "globex", ""))
	link := res["link"].(string)
	if want := "https://onboarding.globex.example/a/"; len(link) < len(want) || link[:len(want)] != want {
		t.Errorf("link = %s, want the custom domain", link)
	}
	p := res["participants"].([]any)[0].(map[string]any)
	if p["link"] != link || p["name"] != nil || p["role"] != "primary" {
		t.Errorf("participant = %v", p)
	}
	contact := res["data"].(map[string]any)["meta"].(map[string]any)["primary_contact"].(map[string]any)
	if name, ok := contact["name"]; !ok || name != nil {
		t.Errorf("meta.primary_contact.name = %v (present %v), want null as in participants", name, ok)
	}
}

func TestFieldCatalog(t *testing.T) {
	e := newEnv(t, envOptions{deterministic: true})
	id := e.create(t, "acme", "")
	w := e.do("GET", "/api/external/applications/"+id+"/fields", "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d: %s", w.Code, w.Body)
	}
	golden(t, "field_catalog.json", w.Body.Bytes())
	other := e.create(t, "acme", "")
	w2 := e.do("GET", "/api/external/applications/"+other+"/fields", "acme", "")
	if got, want := decode(t, w2)["fields"], decode(t, w)["fields"]; len(got.([]any)) != len(want.([]any)) {
		t.Errorf("catalogs of two applications on one form differ")
	}
	wantError(t, e.do("GET", "/api/external/applications/"+uuid.NewString()+"/fields", "acme", ""), http.StatusNotFound, errBody("Application not found"))
}

func TestRegistryDocumentsOnlyForEligibleApplications(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		name     string
		key      string
		body     string
		eligible bool
	}{
		{"GB with number on a registry-documents config", "acme", "", true},
		{"IE company", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`, false},
		{"GB without number (company selection)", "acme", `{"primary_contact":{"email":"a@example.com"},"config_id":"acme-select","country":"GB"}`, false},
		{"GB on a config without registry documents", "globex", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000008","company_name":"Bluebell Group Ltd"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.create(t, tt.key, tt.body)
			res := decode(t, e.do("GET", "/api/external/applications/"+id, tt.key, ""))
			docs, hasDocs := res["registry_documents"]
			status, hasStatus := res["registry_documents_status"]
			if !tt.eligible {
				if hasDocs || hasStatus {
					t.Errorf("registry_documents = %v, status = %v; want neither member", docs, status)
				}
				return
			}
			if d, ok := docs.([]any); !ok || len(d) != 0 || status != "pending" {
				t.Errorf("registry_documents = %#v, status = %v; want [] and pending", docs, status)
			}
		})
	}
	list := decode(t, e.do("GET", "/api/external/applications", "acme", ""))
	for _, a := range list["applications"].([]any) {
		if _, ok := a.(map[string]any)["registry_documents"]; ok {
			t.Errorf("the list includes registry documents")
		}
	}
}
