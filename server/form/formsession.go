package form

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// The session's timeout warning: a signed-in page carries the seconds its
// session has left (layout.SessionSeconds), session.js warns before they
// run out, and "Stay signed in" posts here.

// registerSessionRoutes registers the keep-alive of the links under
// prefix.
func (s *Server) registerSessionRoutes(prefix string, in []echo.MiddlewareFunc) {
	s.e.POST(prefix+"/session", s.staySignedIn, in...)
}

// staySignedIn renews the visitor's session to a full timeout and answers
// with the seconds it now has, as text.
func (s *Server) staySignedIn(c echo.Context) error {
	if s.sessionSeconds(c) < int(s.sessionTimeout.Seconds())-1 { // not renewed by this visit already
		held, _ := s.heldSession(c)
		s.renewSession(c, guestOf(c), held)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.String(http.StatusOK, strconv.Itoa(s.sessionSeconds(c)))
}
