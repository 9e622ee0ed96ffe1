package server

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/server/web"
)

// handleError is echo's HTTPErrorHandler: the only place errors become responses.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	f := web.FailureOf(err)
	// An error is never stored nor sniffed, whatever the handler set
	// before it failed (an asset's caching, say).
	noStore(c.Response().Header())
	if f.Unexpected() {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	if f.Status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="onboard"`)
	}
	if f.Status == http.StatusMethodNotAllowed {
		h := c.Response().Header()
		h.Set("Allow", allowHead(h.Get("Allow")))
	}
	if f.Cause != nil && f.Cause.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.Cause.RetryAfter.Seconds()))))
	}
	if err := writeJSON(c, f.Status, f.Body); err != nil {
		s.log.Warn("write error response", "err", err)
	}
}

// allowHead adds HEAD after GET to the Allow header echo gives a 405
// ("OPTIONS, GET, PATCH"): every GET route answers HEAD (headAsGet), which
// echo's router does not know.
func allowHead(allow string) string {
	methods := strings.Split(allow, ", ")
	if !slices.Contains(methods, http.MethodGet) || slices.Contains(methods, http.MethodHead) {
		return allow
	}
	i := slices.Index(methods, http.MethodGet)
	return strings.Join(slices.Insert(methods, i+1, http.MethodHead), ", ")
}
