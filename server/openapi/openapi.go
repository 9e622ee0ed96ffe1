// Package openapi holds onboard's API contract: the OpenAPI 3.1 document of
// the whole external API (openapi.json, written by hand and embedded in the
// binary), and the handler that serves it. The server's tests validate every
// response they produce against it, so it cannot drift from the server.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Path is where the server serves the document.
const Path = "/api/external/openapi.json"

// cacheControl lets any cache keep the document and makes it revalidate
// (a 304 with the ETag) before each use: a new server version may change it.
const cacheControl = "public, no-cache"

//go:embed openapi.json
var source []byte

// Document returns the embedded document as written (indented JSON).
func Document() []byte { return bytes.Clone(source) }

// Handler serves the document, compacted, with a strong ETag and
// Cache-Control, answering 304 to an If-None-Match that names it. It panics
// if the embedded document is not JSON, which the package's test rules out.
func Handler() http.Handler {
	var b bytes.Buffer
	if err := json.Compact(&b, source); err != nil {
		panic(fmt.Sprintf("openapi: embedded document: %v", err))
	}
	sum := sha256.Sum256(b.Bytes())
	return &handler{body: b.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// handler serves one immutable document.
type handler struct {
	body []byte
	etag string
}

// ServeHTTP answers GET with the document, or 304 when the client's copy is current.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("ETag", h.etag)
	hd.Set("Cache-Control", cacheControl)
	hd.Set("X-Content-Type-Options", "nosniff")
	if matches(r.Header.Get("If-None-Match"), h.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", fmt.Sprint(len(h.body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(h.body)
}

// matches reports whether an If-None-Match header names etag (RFC 9110
// §13.1.2: weak comparison, a list, or "*").
func matches(header, etag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == etag {
			return true
		}
	}
	return false
}
