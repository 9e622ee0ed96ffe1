package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The verification pages: before signing in, the visitor asks for a code
// by e-mail and enters it.

// registerVerifyRoutes registers the verification posts; the page itself
// is the link (formHome).
func (s *Server) registerVerifyRoutes(open []echo.MiddlewareFunc) {
	s.e.POST("/a/:slug/verify/send", s.sendCode, open...)
	s.e.POST("/a/:slug/verify", s.verifyCode, open...)
}

func (s *Server) sendCode(c echo.Context) error {
	v := visitorOf(c)
	if v.SignedIn {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	if err := s.svc.SendVerificationCode(c.Request().Context(), v); err != nil {
		if e := onboarding.AsError(err); e != nil {
			return s.renderVerify(c, statusOf(e.Kind), v, e.Message)
		}
		return err
	}
	return redirectWith(c, formBase(v), "sent")
}

func (s *Server) verifyCode(c echo.Context) error {
	v := visitorOf(c)
	if v.SignedIn {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	if err := s.svc.VerifyCode(c.Request().Context(), v, c.Request().PostForm.Get("code")); err != nil {
		if e := onboarding.AsError(err); e != nil && e.Kind == onboarding.KindInvalid {
			return s.renderVerify(c, http.StatusBadRequest, v, e.Message)
		}
		return err
	}
	s.startSession(c, v)
	return redirectWith(c, formBase(v), "verified")
}

// renderVerify draws the verification page, with codeErr when the last
// attempt failed.
func (s *Server) renderVerify(c echo.Context, status int, v *onboarding.Visitor, codeErr string) error {
	p := &verifyView{layout: newLayout(v, "Confirm it is you")}
	p.Notice = notice(c)
	part := v.Participant
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
