package web

import (
	"strings"

	"github.com/labstack/echo/v4"
)

// Log lines name a request by its route pattern ("/a/:slug/verify"),
// never by its path: the applicant and RFI link slugs in a path are
// credentials.

// UnmatchedRoute is the route a log line names for a request no route
// matched.
const UnmatchedRoute = "unmatched"

// LoggedRoute is the route pattern of the request c serves, as a log line
// names it: echo's pattern of the route (or of the part of the route tree)
// it matched, which holds no request data, or UnmatchedRoute.
func LoggedRoute(c echo.Context) string {
	if p := c.Path(); p != "" {
		return p
	}
	return UnmatchedRoute
}

// LoggedError is err's text as a log line shows it: with the request's
// link slug, should the text quote it (a panic's value, say), replaced by
// ":slug".
func LoggedError(c echo.Context, err error) string {
	msg := err.Error()
	if slug := c.Param("slug"); slug != "" {
		msg = strings.ReplaceAll(msg, slug, ":slug")
	}
	return msg
}

// LoggedPath is the path of a request no route matched, as its log line
// shows it: a segment after an "a" or "r" segment (/a/{slug}/…,
// /r/{slug}/…, however mangled in transit: a doubled slash, capitals, a
// prefix) is replaced by ":slug", since it may be a link's slug.
func LoggedPath(path string) string {
	segs := strings.Split(path, "/")
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s
		if prev := segs[max(i-1, 0)]; i > 0 && (strings.EqualFold(prev, "a") || strings.EqualFold(prev, "r")) {
			out[i] = ":slug"
		}
	}
	return strings.Join(out, "/")
}
