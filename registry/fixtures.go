package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ErrNoRecording is returned (wrapped) by FixtureTransport for a request it
// has no recording for. The registry clients report it as
// onboarding.ErrRegistryFailed: in fixtures mode nothing ever reaches a network.
var ErrNoRecording = errors.New("registry fixtures: no recording for request")

// FixtureTransport is an http.RoundTripper that answers registry requests
// from recordings (see the package comment for the format) and refuses every
// request it has no recording for. It is safe for concurrent use: all
// recordings are loaded and checked by NewFixtureTransport and never change.
type FixtureTransport struct {
	// exact holds the recordings without wildcards, by recordingKey.
	exact map[string]*recording
	// patterns holds the recordings with {wildcard} path segments, most
	// literal segments first.
	patterns []*recording
}

// recording is one loaded interaction: what it answers and the response.
type recording struct {
	file     string
	method   string
	host     string
	path     string
	segments []string // path segments; "" marks a {wildcard}
	literals int      // number of non-wildcard path segments and query values
	query    string   // canonical (sorted) query
	params   url.Values
	wildQ    bool // some query value is a {wildcard}
	status   int
	header   http.Header
	body     []byte
}

// recordingFile is the JSON shape of a recording file.
type recordingFile struct {
	Comment  string           `json:"comment,omitempty"`
	Request  recordedRequest  `json:"request"`
	Response recordedResponse `json:"response"`
}

type recordedRequest struct {
	Method string `json:"method"`
	Host   string `json:"host"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
}

type recordedResponse struct {
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers,omitempty"`
	Body     json.RawMessage   `json:"body,omitempty"` // "body": null serves the JSON null
	BodyText *string           `json:"body_text,omitempty"`
	BodyFile string            `json:"body_file,omitempty"`
}

// forbiddenHeaders may never appear in a recording: recordings hold no
// credentials or session state.
var forbiddenHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// NewFixtureTransport loads every *.json file under fsys as a recording and
// returns a transport that serves them. Other files are ignored unless a
// recording names them as its body_file. It fails on a recording that is
// malformed, duplicates another, or contains credentials.
func NewFixtureTransport(fsys fs.FS) (*FixtureTransport, error) {
	t := &FixtureTransport{exact: make(map[string]*recording)}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(name) != ".json" {
			return nil
		}
		rec, err := loadRecording(fsys, name)
		if err != nil {
			return err
		}
		return t.add(rec)
	})
	if err != nil {
		return nil, fmt.Errorf("registry fixtures: %w", err)
	}
	slices.SortStableFunc(t.patterns, func(a, b *recording) int { return b.literals - a.literals })
	return t, nil
}

// loadRecording reads and checks the recording file name of fsys.
func loadRecording(fsys fs.FS, name string) (*recording, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var f recordingFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // our own format: a misspelt member is a mistake
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rec := &recording{
		file:   name,
		method: f.Request.Method,
		host:   strings.ToLower(f.Request.Host),
		path:   f.Request.Path,
		status: f.Response.Status,
		header: make(http.Header, len(f.Response.Headers)),
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	if rec.method == "" || rec.method != strings.ToUpper(rec.method) {
		return nil, bad("request.method %q must be an upper-case HTTP method", rec.method)
	}
	if rec.host == "" || strings.ContainsAny(rec.host, "/@") {
		return nil, bad("request.host %q must be a bare host name", f.Request.Host)
	}
	if !strings.HasPrefix(rec.path, "/") {
		return nil, bad("request.path %q must start with /", rec.path)
	}
	for _, seg := range strings.Split(rec.path, "/")[1:] {
		switch {
		case isWildcard(seg):
			rec.segments = append(rec.segments, "")
		case strings.ContainsAny(seg, "{}") || seg == "":
			return nil, bad("request.path %q: a wildcard must be a whole {name} segment, and segments may not be empty", rec.path)
		default:
			rec.segments = append(rec.segments, seg)
			rec.literals++
		}
	}
	if rec.query, err = canonicalQuery(f.Request.Query); err != nil {
		return nil, bad("request.query: %v", err)
	}
	rec.params, _ = url.ParseQuery(f.Request.Query)
	for k, vs := range rec.params {
		if len(vs) != 1 {
			return nil, bad("request.query: parameter %q appears %d times", k, len(vs))
		}
		switch v := vs[0]; {
		case isWildcard(v):
			rec.wildQ = true
		case strings.ContainsAny(v, "{}"):
			return nil, bad("request.query: a wildcard must be a whole {name} value")
		default:
			rec.literals++
		}
	}
	if rec.status < 100 || rec.status > 599 {
		return nil, bad("response.status %d is not an HTTP status", rec.status)
	}
	for k, v := range f.Response.Headers {
		for _, h := range forbiddenHeaders {
			if strings.EqualFold(k, h) {
				return nil, bad("response.headers: %s must not be recorded", h)
			}
		}
		rec.header.Set(k, v)
	}
	kinds := 0
	if len(f.Response.Body) > 0 {
		kinds++
		rec.body = []byte(f.Response.Body)
	}
	if f.Response.BodyText != nil {
		kinds++
		rec.body = []byte(*f.Response.BodyText)
	}
	if f.Response.BodyFile != "" {
		kinds++
		p := path.Join(path.Dir(name), f.Response.BodyFile)
		if rec.body, err = fs.ReadFile(fsys, p); err != nil {
			return nil, bad("response.body_file: %v", err)
		}
	}
	if kinds > 1 {
		return nil, bad("response: body, body_text and body_file are exclusive")
	}
	if cl := rec.header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(rec.body)) {
		return nil, bad("response.headers: Content-Length %s but the body has %d bytes", cl, len(rec.body))
	}
	return rec, nil
}

// add indexes rec, refusing a recording that answers the same requests as
// one already loaded.
func (t *FixtureTransport) add(rec *recording) error {
	if !rec.wildQ && !slices.Contains(rec.segments, "") {
		key := recordingKey(rec.method, rec.host, rec.path, rec.query)
		if other, ok := t.exact[key]; ok {
			return fmt.Errorf("%s: records the same request as %s", rec.file, other.file)
		}
		t.exact[key] = rec
		return nil
	}
	for _, other := range t.patterns {
		if other.literals == rec.literals && overlaps(other, rec) {
			return fmt.Errorf("%s: pattern is ambiguous with %s", rec.file, other.file)
		}
	}
	t.patterns = append(t.patterns, rec)
	return nil
}

// overlaps reports whether some request matches both patterns a and b.
func overlaps(a, b *recording) bool {
	if a.method != b.method || a.host != b.host || len(a.segments) != len(b.segments) || len(a.params) != len(b.params) {
		return false
	}
	for i := range a.segments {
		if a.segments[i] != "" && b.segments[i] != "" && a.segments[i] != b.segments[i] {
			return false
		}
	}
	for k, av := range a.params {
		bv, ok := b.params[k]
		if !ok {
			return false
		}
		if !isWildcard(av[0]) && !isWildcard(bv[0]) && av[0] != bv[0] {
			return false
		}
	}
	return true
}

// isWildcard reports whether a path segment or query value is a {name}
// wildcard.
func isWildcard(s string) bool {
	return len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}'
}

// matchParams reports whether a request's query matches a recording's:
// the same parameters, each once, with equal values or any non-empty value
// where the recording has a wildcard.
func matchParams(pattern, q url.Values) bool {
	if len(pattern) != len(q) {
		return false
	}
	for k, pv := range pattern {
		qv, ok := q[k]
		if !ok || len(qv) != 1 {
			return false
		}
		if isWildcard(pv[0]) {
			if qv[0] == "" {
				return false
			}
		} else if pv[0] != qv[0] {
			return false
		}
	}
	return true
}

// RoundTrip answers req from its recording, or returns an error wrapping
// ErrNoRecording. Exact recordings win over patterns, and a pattern with
// more literal segments wins over one with fewer. Request headers (including
// credentials) play no part in matching.
func (t *FixtureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := t.lookup(req)
	if rec == nil {
		u := *req.URL
		u.User = nil
		return nil, fmt.Errorf("%w: %s %s", ErrNoRecording, req.Method, u.String())
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rec.status, http.StatusText(rec.status)),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(rec.body)),
		ContentLength: int64(len(rec.body)),
		Request:       req,
	}, nil
}

// lookup finds the recording for req, or nil.
func (t *FixtureTransport) lookup(req *http.Request) *recording {
	host := requestHost(req.URL)
	query, err := canonicalQuery(req.URL.RawQuery)
	if err != nil {
		return nil
	}
	if rec, ok := t.exact[recordingKey(req.Method, host, req.URL.Path, query)]; ok {
		return rec
	}
	segments := strings.Split(req.URL.Path, "/")[1:]
	params, _ := url.ParseQuery(req.URL.RawQuery)
	for _, rec := range t.patterns {
		if rec.method == req.Method && rec.host == host && matchSegments(rec.segments, segments) && matchParams(rec.params, params) {
			return rec
		}
	}
	return nil
}

// matchSegments reports whether path segments match a pattern's segments,
// where "" is a wildcard for exactly one non-empty segment.
func matchSegments(pattern, segments []string) bool {
	if len(pattern) != len(segments) {
		return false
	}
	for i, p := range pattern {
		if segments[i] == "" || (p != "" && p != segments[i]) {
			return false
		}
	}
	return true
}

// requestHost is the lower-case host of u without the scheme's default port.
func requestHost(u *url.URL) string {
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	}
	return host
}

// canonicalQuery sorts a raw query by key so that parameter order never
// matters ("b=2&a=1" and "a=1&b=2" are one query).
func canonicalQuery(raw string) (string, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return "", err
	}
	return v.Encode(), nil
}

// recordingKey identifies the request an exact recording answers.
func recordingKey(method, host, urlPath, query string) string {
	return method + " " + host + urlPath + "?" + query
}
