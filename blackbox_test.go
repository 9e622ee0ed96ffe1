package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// liveContract checks live exchanges with a running server against the
// OpenAPI document that server itself serves.
type liveContract struct {
	t *testing.T
	p *serveProc
	v validator.Validator
}

// fetchContract reads /api/external/openapi.json from p and builds its
// validator.
func fetchContract(t *testing.T, p *serveProc) *liveContract {
	t.Helper()
	body := p.wantStatus(t, http.StatusOK, "GET", "/api/external/openapi.json", "", "")
	doc, err := libopenapi.NewDocument([]byte(body))
	if err != nil {
		t.Fatalf("the served document does not parse: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("the served document does not build a validator: %v", errs)
	}
	return &liveContract{t: t, p: p, v: v}
}

// do sends one request and checks the request and the response against
// the document; it returns the status and the body.
func (c *liveContract) do(method, path, key, body string) (int, string) {
	c.t.Helper()
	newReq := func() *http.Request {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, c.p.base+path, r)
		if err != nil {
			c.t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		return req
	}
	resp, err := client.Do(newReq())
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if ok, errs := c.v.ValidateHttpResponse(newReq(), resp); !ok {
		for _, e := range errs {
			c.t.Errorf("%s %s → %d: the live answer breaks the served contract: %s (%s)", method, path, resp.StatusCode, e.Message, e.Reason)
		}
	}
	return resp.StatusCode, string(b)
}

// TestBlackBoxOperations drives the built binary as a partner and an
// operator would: API calls validated live against the served OpenAPI
// document, then apps export through the admin socket, apps verify-log,
// a backup while serving, a restore, and the restored server answering
// the same reads, again validated against its document.
func TestBlackBoxOperations(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	c := fetchContract(t, p)

	// A partner's integration: create, pre-fill, submit through the test
	// helper, decide; an RFI request completed through its helper.
	status, body := c.do("POST", "/api/external/applications", key, createBody)
	if status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	id := decodeJSON(t, body)["application_id"].(string)
	c.do("PATCH", "/api/external/applications/"+id, key, `{"fields":{"industry":"software","website":"https://northwind.example"}}`)
	c.do("POST", "/api/external/test-helpers/applications/"+id+"/submit", key, "")
	c.do("POST", "/api/external/applications/"+id+"/decision", key, `{"type":"application.approved"}`)
	status, body = c.do("POST", "/api/external/rfi-requests", key, `{"company_name":"Emerald","country":"IE","primary_contact":{"name":"C","email":"c@emerald.example"}}`)
	if status != http.StatusCreated {
		t.Fatalf("create rfi = %d %s", status, body)
	}
	rfi := decodeJSON(t, body)["request_id"].(string)
	c.do("POST", "/api/external/test-helpers/rfi-requests/"+rfi+"/complete", key, "")
	// The registry documents job gives way to requests; the reads below
	// are compared with the restored server's, so they wait for it.
	for deadline := time.Now().Add(time.Minute); ; {
		_, body := c.do("GET", "/api/external/applications/"+id, key, "")
		if decodeJSON(t, body)["registry_documents_status"] != "pending" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("registry documents still pending after a minute")
		}
		time.Sleep(50 * time.Millisecond) // polling until the job has run
	}
	reads := []string{
		"/api/external/applications/" + id,
		"/api/external/applications?limit=10",
		"/api/external/applications/" + id + "/fields",
		"/api/external/applications/" + id + "/activity",
		"/api/external/rfi-requests/" + rfi,
		"/api/external/rfi-requests",
		"/api/external/events?limit=100",
	}
	before := map[string]any{}
	for _, path := range reads {
		status, body := c.do("GET", path, key, "")
		if status != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, status, body)
		}
		before[path] = withoutLinks(t, body)
	}
	// Errors are part of the contract too.
	c.do("GET", "/api/external/applications/"+id, "", "")
	c.do("GET", "/api/external/rfi-requests/9f9f9f9f-0000-4000-8000-000000000000", key, "")
	c.do("POST", "/api/external/rfi-requests", key, `{"country":"GB"}`)
	c.do("GET", "/healthz", "", "")
	c.do("GET", "/readyz", "", "")

	// The operator: export through the running server, verify the logs,
	// back up while serving.
	export := mustRun(t, "apps", "export", "--data-dir", data, "--org", "default")
	lines := bufio.NewScanner(strings.NewReader(export.stdout))
	n := 0
	for lines.Scan() {
		n++
		var got map[string]any
		if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
			t.Fatalf("export line %d: %v", n, err)
		}
		if diff := cmp.Diff(before["/api/external/applications/"+id], got); diff != "" {
			t.Errorf("exported application differs from get-application without download_url (-get +export):\n%s", diff)
		}
	}
	if n != 1 {
		t.Errorf("export wrote %d lines, want 1", n)
	}
	if r := mustRun(t, "apps", "verify-log", "--data-dir", data); !strings.HasPrefix(r.stdout, "OK: 1 application, 1 RFI request") {
		t.Errorf("verify-log: %q", r.stdout)
	}
	archive := filepath.Join(t.TempDir(), "onboard.tar.gz")
	mustRun(t, "backup", "--data-dir", data, "--out", archive)
	p.stop(t)

	// The restore drill: a new directory, a server on it, the same reads.
	restored := filepath.Join(t.TempDir(), "restored")
	mustRun(t, "restore", "--in", archive, "--data-dir", restored)
	q := startServe(t, "--data-dir", restored)
	rc := fetchContract(t, q)
	for _, path := range reads {
		status, body := rc.do("GET", path, key, "")
		if status != http.StatusOK {
			t.Fatalf("restored GET %s = %d %s", path, status, body)
		}
		if diff := cmp.Diff(before[path], withoutLinks(t, body)); diff != "" {
			t.Errorf("restored GET %s differs (-original +restored):\n%s", path, diff)
		}
	}
	if r := mustRun(t, "apps", "verify-log", "--data-dir", restored); !strings.HasPrefix(r.stdout, "OK:") {
		t.Errorf("verify-log on the restored directory: %q", r.stdout)
	}
}

// withoutLinks decodes a JSON body and drops every download_url (signed
// afresh on each read).
func withoutLinks(t *testing.T, body string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "download_url")
			for _, c := range x {
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(v)
	return v
}
