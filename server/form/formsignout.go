package form

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Signing out: the header's "Sign out" ends the participant's sessions on
// every device, revokes their pre-auth code, and leaves the browser on a
// page that says how to come back. An application's link and an RFI
// request's work alike (guest).

// registerSignOutRoutes registers the sign-out post and the page after it
// under prefix, /a/:slug or /r/:slug.
func (s *Server) registerSignOutRoutes(prefix string, open, in []echo.MiddlewareFunc) {
	s.e.POST(prefix+"/sign-out", s.signOut, in...)
	s.e.GET(prefix+"/signed-out", s.signedOutPage, open...)
}

func (s *Server) signOut(c echo.Context) error {
	g := guestOf(c)
	if err := g.signOut(c.Request().Context(), s.svc); err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{Name: SessionCookie, Value: "", Path: g.base(), MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie || c.Request().TLS != nil})
	return c.Redirect(http.StatusSeeOther, g.base()+"/signed-out")
}

// signedOutPage says the applicant has signed out; a visitor still signed
// in (another tab signed in again) goes to the link's first page.
func (s *Server) signedOutPage(c echo.Context) error {
	g := guestOf(c)
	if g.signedIn() {
		return c.Redirect(http.StatusSeeOther, g.base())
	}
	l := g.layout("You have signed out")
	return s.render(c, http.StatusOK, "signedout", &l)
}
