package form

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// The verification pages of every applicant link (the form's and RFI
// requests'): before signing in, the visitor asks for a code by email and
// enters it.

// registerVerifyRoutes registers the verification posts of the links
// under prefix; the page itself is the link.
func (s *Server) registerVerifyRoutes(prefix string, open []echo.MiddlewareFunc) {
	s.e.POST(prefix+"/verify/send", s.sendCode, open...)
	s.e.POST(prefix+"/verify", s.verifyCode, open...)
}

func (s *Server) sendCode(c echo.Context) error {
	g := guestOf(c)
	if g.signedIn() {
		return c.Redirect(http.StatusSeeOther, g.base())
	}
	if err := g.sendCode(c.Request().Context(), s.svc); err != nil {
		if e := onboarding.AsError(err); e != nil && e.Kind != onboarding.KindConflict {
			return s.renderVerify(c, web.StatusOf(e.Kind), g, e.Message)
		}
		return err
	}
	return redirectWith(c, g.base(), "sent")
}

func (s *Server) verifyCode(c echo.Context) error {
	g := guestOf(c)
	if g.signedIn() {
		return c.Redirect(http.StatusSeeOther, g.base())
	}
	if err := g.verifyCode(c.Request().Context(), s.svc, c.Request().PostForm.Get("code")); err != nil {
		if e := onboarding.AsError(err); e != nil && e.Kind == onboarding.KindInvalid {
			return s.renderVerify(c, http.StatusBadRequest, g, e.Message)
		}
		return err
	}
	s.startSession(c, g)
	return redirectWith(c, g.base(), "verified")
}

// renderVerify draws the verification page, with codeErr when the last
// attempt failed.
func (s *Server) renderVerify(c echo.Context, status int, g guest, codeErr string) error {
	p := &verifyView{layout: g.layout("Confirm it is you")}
	p.Notice = notice(c)
	part := g.participant()
	p.CodeSent = len(part.VerifyCodeHash) > 0 && s.now().Before(part.VerifyCodeExpires) && part.VerifyAttempts < onboarding.VerifyCodeAttempts
	p.MaskedEmail = maskEmail(part.Email)
	p.CodeError = codeErr
	if codeErr != "" {
		anchor := "code"
		if !p.CodeSent {
			anchor = "send-code"
		}
		p.Errors = []errorItem{{Anchor: anchor, Message: codeErr}}
	}
	return s.render(c, status, "verify", p)
}

// maskEmail shows enough of an address for its owner to recognise it.
func maskEmail(email string) string {
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" {
		return email
	}
	r := []rune(local)
	return string(r[0]) + "•••@" + domain
}

// verifyView is the verification page's data.
type verifyView struct {
	layout
	CodeSent    bool
	CodeError   string
	MaskedEmail string
}
