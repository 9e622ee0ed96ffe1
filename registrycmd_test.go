package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/registry"
)

// fakeCompaniesHouse plays Companies House for one company, with a document
// whose content redirects to a "storage" path of the same server, and
// records which paths got which Authorization header.
type fakeCompaniesHouse struct {
	*httptest.Server
	pdf []byte

	mu   sync.Mutex
	auth map[string]string // path → Authorization
}

func newFakeCompaniesHouse(t *testing.T) *fakeCompaniesHouse {
	f := &fakeCompaniesHouse{pdf: []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"), auth: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCompaniesHouse) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.auth[r.URL.Path] = r.Header.Get("Authorization")
	f.mu.Unlock()
	w.Header().Set("Set-Cookie", "session=cookie-secret")
	json := func(body string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Ratelimit-Remain", "599")
		fmt.Fprint(w, body)
	}
	switch r.URL.Path {
	case "/company/10000001":
		json(`{"company_name":"NORTHWIND TRADING LIMITED","company_number":"10000001","company_status":"active","type":"ltd"}`)
	case "/company/10000001/officers":
		json(`{"items":[{"name":"HARGREAVES, Eleanor Mary","officer_role":"director","date_of_birth":{"month":3,"year":1979}}],"total_results":1}`)
	case "/company/10000001/persons-with-significant-control":
		json(`{"items":[],"total_results":0}`)
	case "/company/10000001/filing-history":
		json(`{"items":[{"transaction_id":"T1","category":"incorporation","type":"NEWINC","date":"2018-04-16",
			"links":{"document_metadata":"` + f.URL + `/document/Doc1"}}],"total_count":1}`)
	case "/document/Doc1":
		json(`{"links":{"document":"` + f.URL + `/document/Doc1/content"},"resources":{"application/pdf":{"content_length":` +
			fmt.Sprint(len(f.pdf)) + `}}}`)
	case "/document/Doc1/content":
		http.Redirect(w, r, f.URL+"/storage/Doc1/application-pdf?X-Amz-Signature=presigned-secret&X-Amz-Expires=60", http.StatusFound)
	case "/storage/Doc1/application-pdf":
		if r.URL.Query().Get("X-Amz-Signature") != "presigned-secret" {
			http.Error(w, "AccessDenied", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(f.pdf)
	default:
		http.NotFound(w, r)
	}
}

// TestRegistryRecord runs `onboard registry record` against a fake
// Companies House and replays what it wrote through the fixtures transport,
// offline.
func TestRegistryRecord(t *testing.T) {
	ch := newFakeCompaniesHouse(t)
	out := filepath.Join(t.TempDir(), "recordings")
	config := writeFile(t, "onboard.toml", fmt.Sprintf(`
[registry]
companies_house_api_key = "ch-api-key-secret"
companies_house_url = %q
`, ch.URL))
	r := mustRun(t, "registry", "record", "--config", config, "--country", "GB", "--number", "1000 0001", "--out", out)
	for _, line := range []string{"company profile: ok", "officers and PSCs (1 people, 0 entities): ok",
		"filing history (1 documents): ok", "document T1 certificate_of_incorporation 2018-04-16: ok", "files written under"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr does not report %q:\n%s", line, r.stderr)
		}
	}
	files := strings.Fields(r.stdout)
	if len(files) != 8 { // profile, officers, PSCs, history, metadata, 302, PDF + its body file
		t.Errorf("stdout lists %d files, want 8:\n%s", len(files), r.stdout)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("listed file %s: %v", f, err)
		}
	}

	// Credentials reached Companies House, never the storage host, and
	// none of them (nor the cookie or the pre-signed signature) is on disk.
	ch.mu.Lock()
	if got := ch.auth["/company/10000001"]; !strings.HasPrefix(got, "Basic ") {
		t.Errorf("profile request Authorization = %q, want Basic", got)
	}
	if got := ch.auth["/storage/Doc1/application-pdf"]; got != "" {
		t.Errorf("storage request Authorization = %q, want none", got)
	}
	ch.mu.Unlock()
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		for _, secret := range []string{"ch-api-key-secret", "Y2gtYXBpLWtleS1zZWNyZXQ6", "cookie-secret", "presigned-secret"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s contains %q", p, secret)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// The recordings answer the same questions with nobody listening.
	ch.Close()
	reg, err := registry.New(registry.Options{Mode: registry.ModeFixtures, Fixtures: os.DirFS(out), CompaniesHouseBaseURL: ch.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if c, err := reg.VerifyCompany(ctx, "GB", "10000001", "Northwind Trading Ltd"); err != nil || c.Name != "NORTHWIND TRADING LIMITED" {
		t.Errorf("replayed VerifyCompany = %+v, %v", c, err)
	}
	p, err := reg.Parties(ctx, "GB", "10000001")
	if err != nil || len(p.People) != 1 || p.People[0].FullName != "Eleanor Mary Hargreaves" {
		t.Errorf("replayed Parties = %+v, %v", p, err)
	}
	filings, err := reg.Filings(ctx, "GB", "10000001")
	if err != nil || len(filings) != 1 {
		t.Fatalf("replayed Filings = %+v, %v", filings, err)
	}
	rc, err := reg.OpenFiling(ctx, "GB", filings[0])
	if err != nil {
		t.Fatalf("replayed OpenFiling: %v", err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(ch.pdf), string(got)); diff != "" {
		t.Errorf("replayed PDF (-recorded +replayed):\n%s", diff)
	}
}

// TestRegistryRecordRefuses covers the command's errors.
func TestRegistryRecordRefuses(t *testing.T) {
	noKey := writeFile(t, "onboard.toml", "")
	withKey := writeFile(t, "onboard.toml", "[registry]\ncompanies_house_api_key = \"k\"\ncompanies_house_url = \"http://127.0.0.1:9\"\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no GB credentials", []string{"--config", noKey, "--country", "GB", "--number", "10000001"}, 1,
			"onboard: registry record --country GB needs registry.companies_house_api_key in the configuration"},
		{"no IE credentials", []string{"--config", noKey, "--country", "IE", "--number", "100001"}, 1,
			"onboard: registry record --country IE needs registry.cro_email and registry.cro_api_key in the configuration"},
		{"malformed number", []string{"--config", withKey, "--country", "GB", "--number", "123456789"}, 1,
			"onboard: Invalid company number '123456789' for UK company registry"},
		{"unknown country", []string{"--config", withKey, "--country", "FR", "--number", "1"}, 2, "--country"},
		{"registry down", []string{"--config", withKey, "--country", "GB", "--number", "10000001"}, 0,
			"company profile: companies house GET /company/10000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBinary(t, slices.Concat([]string{"registry", "record", "--out", t.TempDir()}, tt.args)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}
