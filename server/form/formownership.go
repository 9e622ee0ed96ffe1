package form

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// Ownership statements of the people stage: who owns how much of the
// company or of a related company.

// registerOwnershipRoutes registers the pages of ownership statements.
func (s *Server) registerOwnershipRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/ownership/:id", s.ownershipPage, in...)
	s.e.POST("/a/:slug/ownership/:id", s.ownershipSave, in...)
	s.e.POST("/a/:slug/ownership/:id/remove", s.removeRecord(s.svc.RemoveOwnership), in...)
}

func (s *Server) ownershipPage(c echo.Context) error {
	return s.renderOwnership(c, visitorOf(c), http.StatusOK, c.Param("id"), nil, nil)
}

// renderOwnership draws the page of ownership row id ("new" to add one):
// the stored statement, or after a failed save the posted one and its
// errors.
func (s *Server) renderOwnership(c echo.Context, v *onboarding.Visitor, status int, id string, in *onboarding.OwnershipInput, errs *formErrors) error {
	if !v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	p := &ownershipView{layout: newLayout(v, "Add ownership"), IsNew: id == "new", Action: formBase(v) + "/ownership/" + id}
	if !p.IsNew {
		o := v.App.Data.OwnershipRow(id)
		if o == nil {
			return onboarding.ErrOwnershipNotFound
		}
		if o.PercentageBand != "" {
			return onboarding.ErrRegistryRecord
		}
		p.Title = "Change ownership"
		if in == nil {
			in = ownershipInputOf(o)
		}
	}
	if in == nil {
		in = &onboarding.OwnershipInput{Owned: string(onboarding.OwnedTarget), IsDirect: true}
	}
	p.Errors = errs.items()
	values := map[string]string{"owner": in.Owner, "owned": in.Owned, "percentage": in.Percentage}
	for _, f := range ownershipForm(v.App) {
		fv := newFieldView(f, f.ID, toJSON(values[f.ID]), errs.at(f.ID))
		fv.PartErrors = errs.parts(f.ID)
		p.Fields = append(p.Fields, fv)
	}
	p.Direct, p.Nominee = in.IsDirect, in.IsNominee
	return s.render(c, status, "ownership", p)
}

// ownershipInputOf is the input that states o again.
func ownershipInputOf(o *onboarding.Ownership) *onboarding.OwnershipInput {
	owned := string(onboarding.OwnedTarget)
	if o.OwnedType == onboarding.OwnedEntity {
		owned = "entity:" + o.OwnedID
	}
	return &onboarding.OwnershipInput{Owner: string(o.OwnerType) + ":" + o.OwnerID, Owned: owned,
		Percentage: onboarding.FormatPercent(o.Percentage), IsDirect: o.IsDirect, IsNominee: o.IsNominee}
}

func (s *Server) ownershipSave(c echo.Context) error {
	v := visitorOf(c)
	return saveRecord(c, recordPage[onboarding.OwnershipInput]{
		controls: labels(ownershipForm(v.App)),
		bind: func(form url.Values) onboarding.OwnershipInput {
			return onboarding.OwnershipInput{Owner: form.Get("owner"), Owned: form.Get("owned"), Percentage: form.Get("percentage"),
				IsDirect: form.Get("is_direct") != "false", IsNominee: form.Get("is_nominee") == "true"}
		},
		save:   s.svc.SaveOwnership,
		render: s.renderOwnership,
		adjust: func(err error, errs *formErrors) {
			// A total over 100% is wrong as a whole: its one message is
			// meant for the percentage and the summary alike.
			if total, ok := errors.AsType[*onboarding.OwnershipTotalError](err); ok {
				errs.byControl["percentage"] = total.Error()
				errs.summary = []errorItem{{Anchor: "percentage", Message: total.Error()}}
			}
		},
		notice: "ownership",
	})
}

// ownershipForm are the controls of an ownership statement.
func ownershipForm(app *onboarding.Application) []*onboarding.Field {
	var owners, owned []onboarding.Option
	for i := range app.Data.People {
		pp := &app.Data.People[i]
		owners = append(owners, onboarding.Option{Value: "person:" + pp.ID, Label: onboarding.PersonName(pp)})
	}
	owned = append(owned, onboarding.Option{Value: string(onboarding.OwnedTarget), Label: partyName(app, onboarding.OwnedTarget, "") + " (your company)"})
	for _, e := range app.Data.Entities {
		owners = append(owners, onboarding.Option{Value: "entity:" + e.ID, Label: e.Name})
		owned = append(owned, onboarding.Option{Value: "entity:" + e.ID, Label: e.Name})
	}
	return []*onboarding.Field{
		{ID: "owner", Label: "Who owns the shares", Type: onboarding.TypeSelect, Required: true, Options: owners},
		{ID: "owned", Label: "Which company they own", Type: onboarding.TypeSelect, Required: true, Options: owned},
		{ID: "percentage", Label: "Share of the company they own (%)", Type: onboarding.TypePercentage, Required: true, Description: "A number from 0 to 100."},
	}
}

// partyName names an owner or owned party for the applicant.
func partyName(app *onboarding.Application, kind onboarding.PartyType, id string) string {
	switch kind {
	case onboarding.OwnerPerson:
		if p := app.Data.Person(id); p != nil {
			return onboarding.PersonName(p)
		}
	case onboarding.OwnerEntity:
		if e := app.Data.Entity(id); e != nil {
			return e.Name
		}
	case onboarding.OwnedTarget:
		if n := app.CompanyName(); n != "" {
			return n
		}
		return "your company"
	}
	return "someone no longer listed"
}

// ownershipText states ownership row o in a sentence.
func ownershipText(app *onboarding.Application, o onboarding.Ownership) string {
	pct := onboarding.FormatPercent(o.Percentage) + "%"
	if o.PercentageBand != "" {
		pct = "between " + strings.Replace(o.PercentageBand, "-", "% and ", 1) + "%"
	}
	how := "directly"
	if !o.IsDirect {
		how = "indirectly"
	}
	text := fmt.Sprintf("%s owns %s of %s, %s", partyName(app, o.OwnerType, o.OwnerID), pct, partyName(app, o.OwnedType, o.OwnedID), how)
	if o.IsNominee {
		text += ", through a nominee"
	}
	return text
}

// ownershipView is the data of an ownership statement's page.
type ownershipView struct {
	layout
	Action          string // where the form posts
	IsNew           bool
	Fields          []fieldView
	Direct, Nominee bool
}

// ownershipCard is one ownership row on the people page.
type ownershipCard struct {
	ID, Text     string
	FromRegistry bool
}
