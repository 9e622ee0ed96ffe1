package form

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// The company search: with company selection, the applicant finds their
// company on the register before anything else.

// registerCompanyRoutes registers the company search.
func (s *Server) registerCompanyRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/company", s.companySearch, in...)
	s.e.GET("/a/:slug/company/confirm", s.companyConfirm, in...)
	s.e.POST("/a/:slug/company", s.companyChoose, in...)
	s.e.GET("/a/:slug/company/change", s.companyChangePage, in...)
	s.e.POST("/a/:slug/company/change", s.companyChange, in...)
}

// companyNumber matches a query that is a company number rather than a
// name: Companies House's 8 characters (10000001, SC123456) or a CRO
// number (digits).
var companyNumber = regexp.MustCompile(`^(?i:[a-z]{2}[0-9]{6}|[0-9]{4,8})$`)

func (s *Server) companySearch(c echo.Context) error {
	v := visitorOf(c)
	if !v.NeedsCompany() {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	p := &companyView{layout: newLayout(v, "Find your company"), RegistryName: registryName(v.App.Country), Query: c.QueryParam("q")}
	p.Notice = notice(c) // after a change of company
	status := http.StatusOK
	if number := strings.ReplaceAll(p.Query, " ", ""); companyNumber.MatchString(number) {
		// A number is looked up, and the company shown to confirm.
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/company/confirm?number="+url.QueryEscape(number))
	}
	if p.Query != "" {
		matches, err := s.svc.SearchForVisitor(c.Request().Context(), v, p.Query)
		if e := onboarding.AsError(err); e != nil && e.Kind != onboarding.KindInternal {
			p.Errors = []errorItem{{Anchor: "q", Message: e.Message}}
			status = web.StatusOf(e.Kind)
		} else if err != nil {
			return err
		} else {
			p.Searched, p.Matches = true, matches
		}
	}
	return s.render(c, status, "company", p)
}

// companyConfirm is "Is this your company?": the register's details of
// the company with the number in the query, looked up again (never taken
// from the page), with "Yes, this is my company" and a way back to the
// search.
func (s *Server) companyConfirm(c echo.Context) error {
	v := visitorOf(c)
	if !v.NeedsCompany() {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	q := c.QueryParam("q")
	co, err := s.svc.LookupForVisitor(c.Request().Context(), v, c.QueryParam("number"))
	if e := onboarding.AsError(err); e != nil && e.Kind != onboarding.KindInternal {
		p := &companyView{layout: newLayout(v, "Find your company"), RegistryName: registryName(v.App.Country), Query: q}
		p.Errors = []errorItem{{Anchor: "q", Message: e.Message}}
		return s.render(c, web.StatusOf(e.Kind), "company", p)
	}
	if err != nil {
		return err
	}
	p := &companyConfirmView{layout: newLayout(v, "Is this your company?"), Found: co, Query: q,
		Back: formBase(v) + "/company", TypeLabel: companyTypeLabel(v, co.Type), Incorporated: dateText(co.IncorporationDate)}
	if q != "" {
		p.Back += "?q=" + url.QueryEscape(q)
	}
	if a := co.RegisteredAddress; a != nil {
		p.Address = strings.Join(slices.DeleteFunc([]string{a.Line1, a.Line2, a.City, a.Region, a.Postcode, countryName(a.Country)}, func(s string) bool { return s == "" }), "\n")
	}
	return s.render(c, http.StatusOK, "companyconfirm", p)
}

// companyTypeLabel names company type value as the form's select does.
func companyTypeLabel(v *onboarding.Visitor, value string) string {
	if f, ok := v.Form().Field("company_type"); ok && value != "" {
		return optionLabel(f, value)
	}
	return value
}

// companyConfirmView is the data of "Is this your company?", and of
// "Change company?".
type companyConfirmView struct {
	layout
	// Found is the register's record of the company to confirm; for
	// "Change company?", the company chosen, as the application has it.
	Found                            onboarding.Company
	Query, Back                      string
	TypeLabel, Incorporated, Address string
	// Change marks "Change company?": the form undoes the choice.
	Change bool
}

func (s *Server) companyChoose(c echo.Context) error {
	v := visitorOf(c)
	form := c.Request().PostForm
	err := s.svc.SelectCompany(c.Request().Context(), v, form.Get("number"), form.Get("name"))
	if e := onboarding.AsError(err); e != nil && (e.Kind == onboarding.KindInvalid || e.Kind == onboarding.KindUnavailable || e.Kind == onboarding.KindUpstream) {
		p := &companyView{layout: newLayout(v, "Find your company"), RegistryName: registryName(v.App.Country)}
		p.Errors = []errorItem{{Anchor: "q", Message: e.Message}}
		return s.render(c, web.StatusOf(e.Kind), "company", p)
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

// companyChangePage is "Change company?": the company the applicant
// chose, what changing it removes, "Yes, change company" and a way to keep
// it. Without a company the applicant may change, it is the overview.
func (s *Server) companyChangePage(c echo.Context) error {
	v := visitorOf(c)
	chosen := chosenCompany(v)
	if chosen == nil {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	p := &companyConfirmView{layout: newLayout(v, "Change company?"), Change: true, Back: formBase(v),
		Found: onboarding.Company{Name: chosen.Name, Number: chosen.Number}}
	fields := v.App.Data.Fields
	if f, ok := v.Form().Field("company_type"); ok {
		p.TypeLabel = valueText(f, fields["company_type"])
	}
	if f, ok := v.Form().Field("incorporation_date"); ok {
		p.Incorporated = valueText(f, fields["incorporation_date"])
	}
	if f, ok := v.Form().Field("registered_address"); ok {
		p.Address = valueText(f, fields["registered_address"])
	}
	return s.render(c, http.StatusOK, "companyconfirm", p)
}

// companyChange undoes the applicant's choice of company and takes them
// back to the search. A choice already undone (a second click, another
// tab) leads to the search too.
func (s *Server) companyChange(c echo.Context) error {
	v := visitorOf(c)
	err := s.svc.ChangeCompany(c.Request().Context(), v)
	if errors.Is(err, onboarding.ErrCompanyNotChosen) {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/company")
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/company", "changed")
}

// chosenView is the company the applicant chose on the register, as the
// overview shows it with "Change company".
type chosenView struct{ Name, Number string }

// chosenCompany is the company the visitor chose and may still change,
// or nil.
func chosenCompany(v *onboarding.Visitor) *chosenView {
	if !v.CanChangeCompany() {
		return nil
	}
	var number string
	_ = json.Unmarshal(v.App.Data.Fields["company_number"], &number)
	if number == "" {
		number = v.App.RegistryNumber
	}
	return &chosenView{Name: v.App.CompanyName(), Number: number}
}
