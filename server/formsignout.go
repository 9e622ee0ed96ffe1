package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Signing out: the header's "Sign out" ends the participant's sessions on
// every device and leaves the browser on a page that says how to come
// back.

// registerSignOutRoutes registers the sign-out post and the page after it.
func (s *Server) registerSignOutRoutes(open, in []echo.MiddlewareFunc) {
	s.e.POST("/a/:slug/sign-out", s.signOut, in...)
	s.e.GET("/a/:slug/signed-out", s.signedOutPage, open...)
}

func (s *Server) signOut(c echo.Context) error {
	v := visitorOf(c)
	if err := s.svc.SignOut(c.Request().Context(), v); err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: formBase(v), MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie || c.Request().TLS != nil})
	return c.Redirect(http.StatusSeeOther, formBase(v)+"/signed-out")
}

// signedOutPage says the applicant has signed out; a visitor still signed
// in (another tab signed in again) goes to the form.
func (s *Server) signedOutPage(c echo.Context) error {
	v := visitorOf(c)
	if v.SignedIn {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	l := newLayout(v, "You have signed out")
	return s.render(c, http.StatusOK, "signedout", &l)
}
