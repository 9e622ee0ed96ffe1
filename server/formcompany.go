package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The company search: with company selection, the applicant finds their
// company on the register before anything else.

// registerCompanyRoutes registers the company search.
func (s *Server) registerCompanyRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/company", s.companySearch, in...)
	s.e.POST("/a/:slug/company", s.companyChoose, in...)
}

func (s *Server) companySearch(c echo.Context) error {
	v := visitorOf(c)
	if !v.NeedsCompany() {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	p := &companyView{layout: newLayout(v, "Find your company"), RegistryName: registryName(v.App.Country), Query: c.QueryParam("q")}
	status := http.StatusOK
	if p.Query != "" {
		matches, err := s.svc.SearchForVisitor(c.Request().Context(), v, p.Query)
		if e := onboarding.AsError(err); e != nil && e.Kind != onboarding.KindInternal {
			p.Errors = []errorItem{{Anchor: "q", Message: e.Message}}
			status = statusOf(e.Kind)
		} else if err != nil {
			return err
		} else {
			p.Searched, p.Matches = true, matches
		}
	}
	return s.render(c, status, "company", p)
}

func (s *Server) companyChoose(c echo.Context) error {
	v := visitorOf(c)
	form := c.Request().PostForm
	err := s.svc.SelectCompany(c.Request().Context(), v, form.Get("number"), form.Get("name"))
	if e := onboarding.AsError(err); e != nil && (e.Kind == onboarding.KindInvalid || e.Kind == onboarding.KindUnavailable || e.Kind == onboarding.KindUpstream) {
		p := &companyView{layout: newLayout(v, "Find your company"), RegistryName: registryName(v.App.Country)}
		p.Errors = []errorItem{{Anchor: "q", Message: e.Message}}
		return s.render(c, statusOf(e.Kind), "company", p)
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v), "company")
}

// registryNames name each country's register for the company search.
var registryNames = map[string]string{
	"GB": "UK company register (Companies House)",
	"IE": "Irish company register (CRO)",
}

// registryName names the register the company search of country uses.
func registryName(country string) string {
	if n := registryNames[country]; n != "" {
		return n
	}
	return "company register"
}

// companyView is the company search's data.
type companyView struct {
	layout
	RegistryName string
	Query        string
	Searched     bool
	Matches      []onboarding.CompanyMatch
}
