package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"onboard/atomicfile"
)

// maxRecordedBody caps the response body a Recorder reads and records.
const maxRecordedBody = 50 << 20

// redacted replaces the value of a credential query parameter in recordings.
const redacted = "REDACTED"

// recordedHeaders are the only response headers a Recorder writes (one value
// each), besides a Content-Length it computes itself.
var recordedHeaders = []string{
	"Content-Type",
	"Location",
	"Retry-After",
	"X-Ratelimit-Limit",
	"X-Ratelimit-Remain",
	"X-Ratelimit-Remaining",
	"X-Ratelimit-Reset",
	"X-Ratelimit-Window",
}

// Recorder is an http.RoundTripper that forwards every request to another
// transport and writes the exchange as a recording (see the package comment
// for the format) that a FixtureTransport can serve. It is what
// "onboard registry record" runs the live registry clients over.
//
// A recording holds the request's method, host, path and query, the
// response's status, an allowlist of its headers and its body. Credentials
// never reach a file: request headers (Authorization included) and URL
// userinfo are not recorded, only Content-Type, Location, Retry-After and the
// X-Ratelimit-* headers of the response are, and credential or pre-signing
// query parameters (X-Amz-Credential, X-Amz-Signature,
// X-Amz-Security-Token, Signature, AWSAccessKeyId, key, api_key,
// access_token, token) are written as REDACTED, in the request's query and
// in a Location header alike, so that replaying a redirect's redacted
// Location finds the redacted recording of the request that followed it.
//
// Recordings are named after the request: {host dir}/{path segments joined
// by -}[-{method}][-{8 hex of the SHA-256 of the redacted query}].json, where
// the host dir is companies-house for api.company-information.service.gov.uk,
// companies-house/documents for its other hosts and *.amazonaws.com, cro for
// services.cro.ie and the host itself (":" written "_") otherwise. Binary
// bodies are written beside the recording with the same name and a .pdf or
// .bin extension. Recording a request again overwrites its files; a request
// whose name is already taken in this session by a different request gets a
// suffix of its own instead.
//
// A Recorder is safe for concurrent use. Its RoundTrip fails, without
// sending the request, on a request no recording can describe (a path with
// an empty or {wildcard} segment, a query that does not parse or repeats a
// parameter), and fails after receiving the response when the body exceeds
// 50 MiB or the recording cannot be written: it never drops a recording
// silently.
type Recorder struct {
	next    http.RoundTripper
	dir     string
	now     func() time.Time
	maxBody int64

	mu    sync.Mutex
	names map[string]string // lower-cased recording name → key of the request it records
	files map[string]bool   // slash-separated paths written, relative to dir
}

// NewRecorder returns a Recorder that sends requests through next
// (http.DefaultTransport when nil) and writes recordings under dir, creating
// directories as needed. now dates the recordings' comments (time.Now when
// nil).
func NewRecorder(next http.RoundTripper, dir string, now func() time.Time) *Recorder {
	if next == nil {
		next = http.DefaultTransport
	}
	if now == nil {
		now = time.Now
	}
	return &Recorder{
		next:    next,
		dir:     dir,
		now:     now,
		maxBody: maxRecordedBody,
		names:   make(map[string]string),
		files:   make(map[string]bool),
	}
}

// Files returns the files written so far (recordings and body files),
// sorted, as paths relative to the Recorder's directory.
func (r *Recorder) Files() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.files))
	for f := range r.files {
		out = append(out, filepath.FromSlash(f))
	}
	slices.Sort(out)
	return out
}

// RoundTrip sends req through the next transport, records the exchange and
// returns the response with its body read into memory and re-wrapped, byte
// for byte as received. The response itself is not redacted: the caller
// sees the real Location and headers.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	rr, err := recordableRequest(req)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("registry record: %s %s%s: %w", req.Method, requestHost(req.URL), req.URL.Path, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("registry record: %s %s%s: %w", rr.Method, rr.Host, rr.Path, fmt.Errorf(format, args...))
	}

	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var body []byte
	if resp.Body != nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, r.maxBody+1))
		_ = resp.Body.Close()
		if err != nil {
			return nil, fail("reading the response body: %w", err)
		}
		if int64(len(body)) > r.maxBody {
			return nil, fail("response body exceeds %d bytes, too large to record", r.maxBody)
		}
	}

	f := &recordingFile{
		Comment: fmt.Sprintf("Recorded from %s%s by onboard registry record on %s",
			rr.Host, rr.Path, r.now().UTC().Format(time.DateOnly)),
		Request:  rr,
		Response: recordedResponse{Status: resp.StatusCode},
	}
	if f.Response.Headers, err = recordableHeaders(resp.Header); err != nil {
		return nil, fail("%w", err)
	}
	hasLength := resp.ContentLength >= 0 || resp.Header.Get("Content-Length") != ""
	if err := r.save(f, body, hasLength); err != nil {
		return nil, fail("%w", err)
	}

	out := *resp
	out.Body = io.NopCloser(bytes.NewReader(body))
	if out.ContentLength < 0 {
		out.ContentLength = int64(len(body))
	}
	return &out, nil
}

// recordableRequest describes req as a recording's request, with the query
// canonical and redacted, or explains why no recording could answer it.
func recordableRequest(req *http.Request) (recordedRequest, error) {
	rr := recordedRequest{Method: req.Method, Host: requestHost(req.URL), Path: req.URL.Path}
	if rr.Method == "" {
		rr.Method = http.MethodGet
	}
	if rr.Method != strings.ToUpper(rr.Method) {
		return rr, fmt.Errorf("cannot record: method %q is not upper-case", rr.Method)
	}
	if rr.Host == "" || strings.ContainsAny(rr.Host, "/@") {
		return rr, fmt.Errorf("cannot record: host %q is not a bare host name", rr.Host)
	}
	if !strings.HasPrefix(rr.Path, "/") || !utf8.ValidString(rr.Path) {
		return rr, errors.New("cannot record: the path must start with / and be valid UTF-8")
	}
	for _, seg := range strings.Split(rr.Path, "/")[1:] {
		if seg == "" || strings.ContainsAny(seg, "{}") {
			return rr, errors.New("cannot record: a recorded path may have no empty segment and no { or }")
		}
	}
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return rr, fmt.Errorf("cannot record: the query does not parse: %w", err)
	}
	for k, vs := range q {
		if len(vs) != 1 {
			return rr, fmt.Errorf("cannot record: query parameter %q appears %d times", k, len(vs))
		}
		if strings.ContainsAny(vs[0], "{}") {
			return rr, fmt.Errorf("cannot record: query parameter %q has a { or } in its value", k)
		}
	}
	redactValues(q)
	rr.Query = q.Encode()
	return rr, nil
}

// sensitiveParam reports whether a query parameter carries a credential or
// a pre-signature, whose value recordings hold as REDACTED.
func sensitiveParam(name string) bool {
	switch strings.ToLower(name) {
	case "x-amz-credential", "x-amz-signature", "x-amz-security-token",
		"signature", "awsaccesskeyid", "key", "api_key", "access_token", "token":
		return true
	}
	return false
}

// redactValues replaces every value of the sensitive parameters of q.
func redactValues(q url.Values) {
	for k, vs := range q {
		if sensitiveParam(k) {
			for i := range vs {
				vs[i] = redacted
			}
		}
	}
}

// redactQuery returns raw canonical (sorted by key, as FixtureTransport
// compares queries) with the values of sensitive parameters redacted.
func redactQuery(raw string) (string, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "", err
	}
	redactValues(q)
	return q.Encode(), nil
}

// redactLocation returns a Location URL without userinfo and with its
// query canonical and redacted like a recorded request's.
func redactLocation(loc string) (string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", errors.New("the Location header is not a URL")
	}
	u.User = nil
	if u.RawQuery != "" {
		if u.RawQuery, err = redactQuery(u.RawQuery); err != nil {
			return "", errors.New("the Location header's query does not parse")
		}
	}
	u.ForceQuery = false
	return u.String(), nil
}

// recordableHeaders returns the allowlisted headers of h, one value each,
// with a Location redacted; nil when there are none.
func recordableHeaders(h http.Header) (map[string]string, error) {
	var out map[string]string
	for _, k := range recordedHeaders {
		vs := h.Values(k)
		if len(vs) == 0 {
			continue
		}
		v := vs[0]
		if k == "Location" {
			var err error
			if v, err = redactLocation(v); err != nil {
				return nil, err
			}
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[k] = v
	}
	return out, nil
}

// save writes the recording f with body and, when hasLength, a
// Content-Length equal to the body FixtureTransport will serve from it. It
// names the files, writes them atomically and checks that the recording
// loads.
func (r *Recorder) save(f *recordingFile, body []byte, hasLength bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()

	name := r.assignName(f.Request)
	stem := strings.TrimSuffix(name, ".json")
	var bodyName string
	isPDF := bytes.HasPrefix(body, []byte("%PDF-"))
	switch {
	case len(body) == 0:
	case f.Response.Status >= 300 && f.Response.Status < 400:
		// A redirect's body only repeats its Location (unredacted, as
		// Go's http.Redirect writes it); clients never read it.
		body = nil
	case json.Valid(body):
		f.Response.Body = json.RawMessage(body)
	case !isPDF && utf8.Valid(body) && bytes.IndexByte(body, 0) < 0:
		s := string(body)
		f.Response.BodyText = &s
	default:
		bodyName = stem + ".bin"
		if isPDF { // documents are files of their own, even when they are ASCII
			bodyName = stem + ".pdf"
		}
		f.Response.BodyFile = path.Base(bodyName)
	}

	data, err := encodeRecording(f)
	if err != nil {
		return err
	}
	if hasLength {
		n := len(body)
		if f.Response.Body != nil {
			// The file indents the JSON body with the rest of it, and
			// FixtureTransport serves the body as it is written there.
			var served recordingFile
			if err := json.Unmarshal(data, &served); err != nil {
				return fmt.Errorf("encoding %s: %w", name, err)
			}
			n = len(served.Response.Body)
		}
		if f.Response.Headers == nil {
			f.Response.Headers = make(map[string]string)
		}
		f.Response.Headers["Content-Length"] = strconv.Itoa(n)
		if data, err = encodeRecording(f); err != nil {
			return err
		}
	}

	if bodyName != "" {
		if err := writeFileAtomic(filepath.Join(r.dir, filepath.FromSlash(bodyName)), body); err != nil {
			return fmt.Errorf("writing %s: %w", bodyName, err)
		}
		r.files[bodyName] = true
	}
	if err := writeFileAtomic(filepath.Join(r.dir, filepath.FromSlash(name)), data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	r.files[name] = true
	if _, err := loadRecording(os.DirFS(r.dir), name); err != nil {
		return fmt.Errorf("wrote a recording that does not load: %w", err)
	}
	return nil
}

// encodeRecording is f as a recording file: indented by two spaces, HTML
// characters unescaped.
func encodeRecording(f *recordingFile) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("encoding the recording: %w", err)
	}
	return buf.Bytes(), nil
}

// assignName returns the slash-separated recording file name for rr,
// unique in this session ignoring case (for case-insensitive file systems).
// r.mu must be held.
func (r *Recorder) assignName(rr recordedRequest) string {
	key := recordingKey(rr.Method, rr.Host, rr.Path, rr.Query)
	name := recordingName(rr)
	if other, ok := r.names[strings.ToLower(name)]; ok && other != key {
		name = strings.TrimSuffix(name, ".json") + "-" + shortHash(key) + ".json"
	}
	r.names[strings.ToLower(name)] = key
	return name
}

// maxStem caps the length of the path-derived part of a recording name.
const maxStem = 120

// recordingName is the slash-separated file name, relative to the
// recordings directory, of the recording of rr: see Recorder.
func recordingName(rr recordedRequest) string {
	stem := safeName(strings.ReplaceAll(strings.Trim(rr.Path, "/"), "/", "-"))
	if stem == "" {
		stem = "root"
	}
	if len(stem) > maxStem {
		stem = stem[:maxStem] + "-" + shortHash(rr.Path)
	}
	if reservedName(stem) {
		stem = "_" + stem
	}
	if rr.Method != http.MethodGet {
		stem += "-" + strings.ToLower(safeName(rr.Method))
	}
	if rr.Query != "" {
		stem += "-" + shortHash(rr.Query)
	}
	return hostDir(rr.Host) + "/" + stem + ".json"
}

// hostDir is the directory of a host's recordings.
func hostDir(host string) string {
	switch {
	case host == "api.company-information.service.gov.uk":
		return "companies-house"
	case host == "services.cro.ie":
		return "cro"
	case strings.HasSuffix(host, ".company-information.service.gov.uk"),
		strings.HasSuffix(host, ".amazonaws.com"):
		return "companies-house/documents"
	}
	dir := safeName(strings.ReplaceAll(host, ":", "_"))
	if reservedName(dir) {
		dir = "_" + dir
	}
	return dir
}

// safeName replaces every byte of s outside [A-Za-z0-9._-] with _, and a
// leading dot too (no hidden files, no "..").
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		case c == '.' && i > 0:
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// reservedName reports whether a file name is reserved on Windows (CON,
// NUL, COM1 and so on, with any extension).
func reservedName(name string) bool {
	base, _, _ := strings.Cut(strings.ToLower(name), ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) &&
		base[3] >= '1' && base[3] <= '9'
}

// shortHash is the first 8 hex digits of the SHA-256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// writeFileAtomic writes data to name in one piece (atomicfile.WriteFile),
// so that a reader never sees half a file. The file gets mode 0644,
// missing directories 0755.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(name, data, 0o644)
}
