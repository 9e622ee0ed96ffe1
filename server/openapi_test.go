package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/prometheus/client_golang/prometheus"

	"onboard/server/openapi"
)

// The API's contract is kept true by the whole test suite:
// newEnv wraps the router in contractChecked, so every request a test sends
// to a path the document covers, and its response, is validated against
// the document, and a mismatch fails that test.

// contract is the OpenAPI document as validators.
type contract struct {
	// requests validates requests as the document states them.
	requests validator.Validator
	// responses validates responses against the document with every object
	// schema that lists its properties closed, and with strict headers: a
	// member or a header the document does not declare is an error, so
	// nothing the server sends goes undocumented. (The document itself
	// leaves them open, so that clients accept members added later.)
	responses validator.Validator
}

// loadContract builds the validators once per test binary: compiling the
// document's schemas is the expensive part, and the validators are safe
// for concurrent use.
var loadContract = sync.OnceValues(func() (*contract, error) {
	build := func(doc []byte, opts ...config.Option) (validator.Validator, error) {
		d, err := libopenapi.NewDocument(doc)
		if err != nil {
			return nil, err
		}
		v, errs := validator.NewValidator(d, append(opts, config.WithFormatAssertions())...)
		if len(errs) > 0 {
			return nil, fmt.Errorf("openapi validator: %v", errs)
		}
		return v, nil
	}
	req, err := build(openapi.Document())
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		return nil, err
	}
	closeSchemas(doc)
	closed, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	resp, err := build(closed, config.WithStrictMode(),
		// Bodies are checked by the closed schemas; strict mode is for the
		// headers only (its body check flags every key of a map).
		config.WithStrictIgnorePaths("$.body**"),
		// A security header every response carries; not part of the contract.
		config.WithStrictIgnoredHeadersExtra("X-Content-Type-Options"))
	if err != nil {
		return nil, err
	}
	return &contract{requests: req, responses: resp}, nil
})

// closeSchemas sets additionalProperties to false on every object schema
// in v that lists its properties and says nothing of others.
func closeSchemas(v any) {
	switch x := v.(type) {
	case map[string]any:
		_, props := x["properties"].(map[string]any)
		_, stated := x["additionalProperties"]
		if props && !stated && isObjectType(x["type"]) {
			x["additionalProperties"] = false
		}
		for _, c := range x {
			closeSchemas(c)
		}
	case []any:
		for _, c := range x {
			closeSchemas(c)
		}
	}
}

// isObjectType reports whether a schema's type is, or includes, object.
func isObjectType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// inContract reports whether the document covers path: the external API,
// health and metrics, and downloads. The applicant's HTML pages are not
// part of it.
func inContract(path string) bool {
	return strings.HasPrefix(path, "/api/external/") || strings.HasPrefix(path, "/files/") ||
		path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// contractChecked returns h, checking each exchange with a path the document
// covers against the document and reporting each mismatch on t. The checks
// run beside the test, so that they add nothing to the time a test
// measures, and the test waits for them as it ends. Benchmarks measure the
// server alone, so they get h itself.
func contractChecked(t testing.TB, h http.Handler) http.Handler {
	if _, ok := t.(*testing.B); ok {
		return h
	}
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	var pending sync.WaitGroup
	t.Cleanup(pending.Wait)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !inContract(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				t.Errorf("contract: read the request body: %v", err)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		req := r.Clone(context.Background())
		rec := &capture{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		resp := rec.response()
		pending.Go(func() {
			for _, p := range c.check(req, body, resp) {
				t.Errorf("contract: %s %s → %d: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, p)
			}
		})
	})
}

// check validates one exchange and returns what does not match the
// document: the response, always (its status must be documented for the
// operation, its body and headers must match); the request only by its
// outcome, since tests send invalid requests on purpose: the server must
// refuse (4xx) every request the document calls invalid. A path or method
// the document does not have must get the router's 404 or 405.
func (c *contract) check(r *http.Request, body []byte, resp *http.Response) []string {
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		// The server reads every body as JSON, whatever its Content-Type;
		// the document asks clients for application/json, which some
		// tests leave out.
		req.Header.Set("Content-Type", "application/json")
	}
	_, reqErrs := c.requests.ValidateHttpRequestSync(req)
	for _, e := range reqErrs {
		if e.ValidationType == helpers.PathValidation || e.ValidationSubType == helpers.ValidationMissingOperation {
			if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
				return []string{"the document has no such operation, yet the server answered " + resp.Status}
			}
			return checkError(resp)
		}
	}
	var problems []string
	if resp.StatusCode < 400 && len(reqErrs) > 0 {
		problems = append(problems, "the server accepted a request the document says is invalid: "+describe(reqErrs))
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if _, errs := c.responses.ValidateHttpResponse(req, resp); len(errs) > 0 {
		problems = append(problems, "response: "+describe(errs))
	}
	return problems
}

// checkError checks the router's own 404 or 405 body: the error schema.
func checkError(resp *http.Response) []string {
	var body struct {
		Error string `json:"error"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil || body.Error == "" {
		return []string{fmt.Sprintf("the error body is not {\"error\": …}: %s", b)}
	}
	return nil
}

// describe renders validation errors with the validator's own words.
func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n\t%s (%s)", e.Message, e.Reason)
		for _, s := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n\t\t%s at %s (schema %s)", s.Reason, s.FieldPath, s.KeywordLocation)
		}
	}
	return b.String()
}

// capture passes a response through to the client and keeps a copy: the
// status and headers as they were when it was written, and the body.
type capture struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (w *capture) WriteHeader(code int) {
	if w.status == 0 {
		w.status, w.header = code, w.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *capture) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the client's writer.
func (w *capture) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// response returns what was captured as a client would read it.
func (w *capture) response() *http.Response {
	if w.status == 0 {
		w.status, w.header = http.StatusOK, w.Header().Clone()
	}
	return &http.Response{
		StatusCode: w.status, Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
	}
}

// TestContractCatchesMismatches proves the check fails: each exchange here
// breaks the document in one way, and the check must say so.
func TestContractCatchesMismatches(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	const app = "/api/external/applications/0dbd4554-3b8e-4f0e-9a52-2f4c1e7d9b10"
	valid := `{"success":true,"application_id":"0dbd4554-3b8e-4f0e-9a52-2f4c1e7d9b10","updated_fields":["industry"]}`
	tests := []struct {
		name         string
		method, path string
		body         string
		status       int
		header       http.Header
		respBody     string
		want         string // a phrase the report must contain; "" for none
	}{
		{name: "valid", method: "PATCH", path: app, body: `{"fields":{"industry":"software"}}`, status: 200, respBody: valid},
		{name: "undeclared member", method: "PATCH", path: app, body: `{"fields":{"industry":"software"}}`, status: 200,
			respBody: strings.TrimSuffix(valid, "}") + `,"extra":1}`, want: "extra"},
		{name: "missing member", method: "PATCH", path: app, body: `{"fields":{"industry":"software"}}`, status: 200,
			respBody: `{"success":true,"application_id":"0dbd4554-3b8e-4f0e-9a52-2f4c1e7d9b10"}`, want: "updated_fields"},
		{name: "wrong type", method: "PATCH", path: app, body: `{"fields":{"industry":"software"}}`, status: 200,
			respBody: strings.Replace(valid, `true`, `"yes"`, 1), want: "response"},
		{name: "undocumented status", method: "PATCH", path: app, body: `{"fields":{"industry":"software"}}`, status: 409,
			respBody: `{"error":"Conflict"}`, want: "409"},
		{name: "undeclared header", method: "PATCH", path: app, body: `{"fields":{"industry":"software"}}`, status: 200,
			header: http.Header{"X-Surprise": {"1"}}, respBody: valid, want: "X-Surprise"},
		{name: "accepted an invalid request", method: "PATCH", path: app, body: `{"fields":{},"people":[]}`, status: 200,
			respBody: valid, want: "accepted a request the document says is invalid"},
		{name: "refused an invalid request", method: "PATCH", path: app, body: `{"fields":{},"people":[]}`, status: 400,
			respBody: `{"error":"Invalid request body. Only \"fields\" can be updated via this endpoint."}`},
		{name: "unknown path answered", method: "GET", path: "/api/external/nothing", status: 200, respBody: `{}`, want: "no such operation"},
		{name: "unknown path refused", method: "GET", path: "/api/external/nothing", status: 404, respBody: `{"error":"Not found"}`},
		{name: "unknown method refused", method: "DELETE", path: app, status: 405, respBody: `{"error":"Method not allowed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer svc_x.y")
			if tt.body != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			h := http.Header{"Content-Type": {"application/json"}}
			for k, v := range tt.header {
				h[k] = v
			}
			resp := &http.Response{StatusCode: tt.status, Status: http.StatusText(tt.status), Header: h, Body: io.NopCloser(strings.NewReader(tt.respBody))}
			got := strings.Join(c.check(r, []byte(tt.body), resp), "\n")
			switch {
			case tt.want == "" && got != "":
				t.Errorf("check reported a valid exchange:\n%s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("check = %q, want a report naming %q", got, tt.want)
			}
		})
	}
}

// TestContractIsAValidOpenAPIDocument checks the document against the
// OpenAPI 3.1 schema (.ci/run lints it with redocly too).
func TestContractIsAValidOpenAPIDocument(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	if ok, errs := c.requests.ValidateDocument(); !ok {
		t.Errorf("the document is not valid OpenAPI 3.1:%s", describe(errs))
	}
}

// TestContractMatchesRouter fails when the router serves an operation the
// document does not describe, or the document describes one the router
// does not serve. The applicant's HTML pages are not part of the
// contract.
func TestContractMatchesRouter(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	routed := map[string]bool{}
	for _, r := range New(Options{Sandbox: true, Metrics: prometheus.NewRegistry()}).e.Routes() {
		if !inContract(r.Path) {
			continue
		}
		// echo's :name is OpenAPI's {name}.
		parts := strings.Split(r.Path, "/")
		for i, p := range parts {
			if name, ok := strings.CutPrefix(p, ":"); ok {
				parts[i] = "{" + name + "}"
			}
		}
		routed[r.Method+" "+strings.Join(parts, "/")] = true
	}
	for op := range routed {
		if !documented[op] {
			t.Errorf("%s is routed but not in the OpenAPI document", op)
		}
	}
	for op := range documented {
		if !routed[op] {
			t.Errorf("%s is in the OpenAPI document but not routed", op)
		}
	}
}

// TestContractServed checks GET /api/external/openapi.json: no key, the
// embedded document, cacheable with its ETag.
func TestContractServed(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.do("GET", openapi.Path, "", "")
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d %s", w.Code, w.Body)
	}
	var served, embedded any
	if err := json.Unmarshal(w.Body.Bytes(), &served); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(openapi.Document(), &embedded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(embedded, served); diff != "" {
		t.Errorf("served document differs from the embedded one (-embedded +served):\n%s", diff)
	}
	if bytes.ContainsAny(w.Body.Bytes(), "\n") {
		t.Errorf("the served document is not compact")
	}
	etag := w.Header().Get("ETag")
	for header, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "public, no-cache"} {
		if got := w.Header().Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}
	if len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		t.Fatalf("ETag = %q, want a strong entity tag", etag)
	}
	// The client's copy is current: 304, through the router too.
	r := httptest.NewRequest("GET", openapi.Path, nil)
	r.Header.Set("If-None-Match", etag)
	w = httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
		t.Errorf("If-None-Match: %d %q ETag %q, want 304, no body, the same ETag", w.Code, w.Body, w.Header().Get("ETag"))
	}
}

// BenchmarkContractServed measures serving the document through the
// router, to a client that discards it.
func BenchmarkContractServed(b *testing.B) {
	h := New(Options{}).Handler()
	r := httptest.NewRequest("GET", openapi.Path, nil)
	b.ReportAllocs()
	for b.Loop() {
		w := &discard{header: http.Header{}}
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK || w.n < 1000 {
			b.Fatalf("status = %d, %d bytes", w.status, w.n)
		}
	}
}

// discard is a ResponseWriter that keeps only the status and the size.
type discard struct {
	header http.Header
	status int
	n      int
}

func (w *discard) Header() http.Header { return w.header }

func (w *discard) WriteHeader(code int) { w.status = code }

func (w *discard) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}
