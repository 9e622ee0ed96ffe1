package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"onboard/blobs"
	"onboard/server/web"
)

// download serves a blob through a signed link (registry documents and
// uploads): the link's signature and expiry are the only credential. The
// answer is never cached, and its name and type are the ones the link was
// signed with. Range requests work (http.ServeContent).
func (s *Server) download(c echo.Context) error {
	// The link is read whole or not at all: a pair echo's parser would
	// drop is refused, not ignored.
	q, err := web.ParseQuery(c.QueryString())
	if err != nil {
		return err
	}
	f, d, err := s.svc.OpenDownload(http.MethodGet, c.Param("id"), q)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Type", d.ContentType)
	h.Set("Content-Disposition", blobs.ContentDisposition(d))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	http.ServeContent(&contentErrors{ResponseWriter: c.Response()}, c.Request(), "", info.ModTime(), f)
	return nil
}

// errRangeNotSatisfiable is the JSON answer to a Range request that no
// byte of the file satisfies.
var errRangeNotSatisfiable = web.ErrorBody{Error: "Requested range not satisfiable"}

// contentErrors answers the errors of http.ServeContent (a 416 for a Range
// past the file's end) as every other error: a JSON body, never cached,
// not a download. net/http writes them as text and drops Cache-Control
// (Go 1.23), but leaves the file's Content-Disposition; its Content-Range
// (bytes */size) stays.
type contentErrors struct {
	http.ResponseWriter
	failed bool
}

func (w *contentErrors) WriteHeader(code int) {
	if code < http.StatusBadRequest {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.failed = true
	h := w.Header()
	h.Del("Content-Disposition")
	web.NoStore(h)
	answer := errRangeNotSatisfiable
	if code != http.StatusRequestedRangeNotSatisfiable {
		answer = web.ErrorBody{Error: http.StatusText(code)}
	}
	body, _ := json.Marshal(answer)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(code)
	_, _ = w.ResponseWriter.Write(body)
}

// Write discards net/http's own text for an error.
func (w *contentErrors) Write(b []byte) (int, error) {
	if w.failed {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
