package form

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The people stage: its page lists the people, related companies and
// ownership of the application; each person and related company has a
// page of its own (ownership rows have theirs in formownership.go).

// registerPeopleRoutes registers the pages of people and related
// companies; the people stage's own page is a stage page (stagePage).
func (s *Server) registerPeopleRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/people/:id", s.personPage, in...)
	s.e.POST("/a/:slug/people/:id", s.personSave, in...)
	s.e.POST("/a/:slug/people/:id/remove", s.removeRecord(s.svc.RemovePerson), in...)
	s.e.GET("/a/:slug/entities/:id", s.entityPage, in...)
	s.e.POST("/a/:slug/entities/:id", s.entitySave, in...)
	s.e.POST("/a/:slug/entities/:id/remove", s.removeRecord(s.svc.RemoveEntity), in...)
}

// peoplePage is the page of the people stage.
func (s *Server) peoplePage(c echo.Context, v *onboarding.Visitor) error {
	p := &peopleView{layout: newLayout(v, "People and owners"), Writable: v.Writable(), Next: nextStage(v, onboarding.StagePeople)}
	p.Notice = notice(c)
	d := &v.App.Data
	for i := range d.People {
		pp := &d.People[i]
		card := personCard{ID: pp.ID, Name: onboarding.PersonName(pp), Roles: roleList(pp.Roles), FromRegistry: pp.Source == onboarding.SourceRegistry}
		card.Needed = detailsNeeded(pp, v.Form().MissingDetails(pp))
		p.People = append(p.People, card)
	}
	for _, e := range d.Entities {
		p.Entities = append(p.Entities, entityCard{ID: e.ID, Name: e.Name, Type: entityTypeLabels[e.Type], Country: e.Country, FromRegistry: e.Source == onboarding.SourceRegistry})
	}
	for _, o := range d.Ownership {
		p.Ownership = append(p.Ownership, ownershipCard{ID: o.ID, Text: ownershipText(v.App, o), FromRegistry: o.PercentageBand != ""})
	}
	p.CanOwn = len(d.People)+len(d.Entities) > 0
	return s.render(c, http.StatusOK, "people", p)
}

func (s *Server) personPage(c echo.Context) error {
	return s.renderPerson(c, visitorOf(c), http.StatusOK, c.Param("id"), nil, nil)
}

// renderPerson draws the page of person id ("new" to add one): the stored
// values, or after a failed save the posted ones (in, with what the page
// first showed) and their errors.
func (s *Server) renderPerson(c echo.Context, v *onboarding.Visitor, status int, id string, in *onboarding.PersonInput, errs *formErrors) error {
	if !v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	var person *onboarding.Person
	if id != "new" {
		if person = v.App.Data.Person(id); person == nil {
			return onboarding.ErrPersonNotFound
		}
	}
	p := &personView{layout: newLayout(v, "Add a person"), IsNew: person == nil, Action: formBase(v) + "/people/" + id, RolesError: errs.at("roles")}
	p.Errors = errs.items()
	if person != nil {
		p.Title = onboarding.PersonName(person)
		p.PersonName = p.Title
		p.FromRegistry = person.Source == onboarding.SourceRegistry
	}
	var roles []onboarding.PersonRole
	switch {
	case in != nil:
		roles, p.RolesShown = in.Roles, in.Shown["roles"]
	case person != nil:
		roles = person.Roles
		p.RolesShown = onboarding.ValueFingerprint(onboarding.RolesValue(roles))
	}
	for _, r := range onboarding.PersonRoles() {
		p.Roles = append(p.Roles, roleChoice{Value: r, Label: roleLabels[r].full, Checked: slices.Contains(roles, r)})
	}
	p.Fields = personControls(v, person, in, errs)
	return s.render(c, status, "person", p)
}

// personControls draws the person-scoped fields of person (nil when
// adding one), or of the posted input in after a failed save.
func personControls(v *onboarding.Visitor, person *onboarding.Person, in *onboarding.PersonInput, errs *formErrors) []fieldView {
	var out []fieldView
	for _, f := range personFields(v) {
		var raw json.RawMessage
		var fp string
		switch {
		case in != nil:
			raw, fp = in.Values[f.ID], in.Shown[f.ID]
		case person != nil:
			raw = onboarding.PersonFieldValue(person, f.ID)
			fp = onboarding.ValueFingerprint(raw)
		}
		fv := newFieldView(f, f.ID, raw, errs.at(f.ID))
		fv.PartErrors = errs.parts(f.ID)
		fv.Shown = fp
		if f.ID == onboarding.FieldPersonFullName {
			fv.Required = true
			fv.ReadOnly = person != nil && person.Locked(f.ID)
		}
		out = append(out, fv)
	}
	return out
}

func (s *Server) personSave(c echo.Context) error {
	v := visitorOf(c)
	fields := personFields(v)
	return saveRecord(c, recordPage[onboarding.PersonInput]{
		controls: append([]labelled{{ID: "roles", Label: "Roles:"}}, labels(fields)...),
		bind: func(form url.Values) onboarding.PersonInput {
			in := onboarding.PersonInput{Roles: personRoles(form["roles"]), Values: make(map[string]json.RawMessage, len(fields)), Shown: shownValues(form)}
			for _, f := range fields {
				in.Values[f.ID] = bindField(f, f.ID, form)
			}
			return in
		},
		posted: func(in onboarding.PersonInput) map[string]json.RawMessage { return in.Values },
		save:   s.svc.SavePerson,
		render: s.renderPerson,
		notice: "person",
	})
}

// personFields are the person-scoped fields of the form other than documents.
func personFields(v *onboarding.Visitor) []*onboarding.Field {
	var out []*onboarding.Field
	for i, f := range v.Form().Fields() {
		if f.PersonScoped && f.Type != onboarding.TypeDocument {
			out = append(out, &v.Form().Fields()[i])
		}
	}
	return out
}

// roleLabels name each person role: in full beside its checkbox, and
// short in lists.
var roleLabels = map[onboarding.PersonRole]struct{ full, short string }{
	onboarding.PersonDirector:    {"Director", "Director"},
	onboarding.PersonUBO:         {"Beneficial owner (owns or controls 25% or more)", "Beneficial owner"},
	onboarding.PersonShareholder: {"Shareholder", "Shareholder"},
}

// roleList names roles for a list.
func roleList(roles []onboarding.PersonRole) string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = roleLabels[r].short
	}
	return strings.Join(out, ", ")
}

// entityTypeLabels name each type of related company.
var entityTypeLabels = map[onboarding.EntityType]string{
	onboarding.EntityHoldingCompany: "Holding company",
	onboarding.EntitySubsidiary:     "Subsidiary",
	onboarding.EntityParent:         "Parent company",
	onboarding.EntityOther:          "Other",
}

// entityForm are the controls of a related company.
func entityForm() []*onboarding.Field {
	types := onboarding.EntityTypes()
	opts := make([]onboarding.Option, len(types))
	for i, t := range types {
		opts[i] = onboarding.Option{Value: string(t), Label: entityTypeLabels[t]}
	}
	return []*onboarding.Field{
		{ID: "name", Label: "Legal name", Type: onboarding.TypeText, Required: true, Description: "As it appears on its company register."},
		{ID: "type", Label: "Relationship to your company", Type: onboarding.TypeSelect, Required: true, Options: opts},
		{ID: "country", Label: "Country of registration", Type: onboarding.TypeText, Pattern: "^[A-Za-z]{2}$", PatternMessage: "must be a two-letter country code such as GB or IE", Description: "The country whose register it is on."},
	}
}

func (s *Server) entityPage(c echo.Context) error {
	return s.renderEntity(c, visitorOf(c), http.StatusOK, c.Param("id"), nil, nil)
}

// renderEntity draws the page of related company id ("new" to add one):
// the stored values, or after a failed save the posted ones and their
// errors.
func (s *Server) renderEntity(c echo.Context, v *onboarding.Visitor, status int, id string, in *onboarding.EntityInput, errs *formErrors) error {
	if !v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	p := &entityView{layout: newLayout(v, "Add a related company"), IsNew: id == "new", Action: formBase(v) + "/entities/" + id}
	var shown onboarding.EntityInput
	if in != nil {
		shown = *in
	}
	if !p.IsNew {
		e := v.App.Data.Entity(id)
		if e == nil {
			return onboarding.ErrEntityNotFound
		}
		if e.Source == onboarding.SourceRegistry {
			return onboarding.ErrRegistryRecord
		}
		p.Title, p.EntityName = e.Name, e.Name
		if in == nil {
			shown = onboarding.EntityInput{Name: e.Name, Type: e.Type, Country: e.Country}
		}
	}
	p.Errors = errs.items()
	values := map[string]string{"name": shown.Name, "type": string(shown.Type), "country": shown.Country}
	for _, f := range entityForm() {
		fv := newFieldView(f, f.ID, toJSON(values[f.ID]), errs.at(f.ID))
		fv.PartErrors = errs.parts(f.ID)
		p.Fields = append(p.Fields, fv)
	}
	return s.render(c, status, "entity", p)
}

func (s *Server) entitySave(c echo.Context) error {
	return saveRecord(c, recordPage[onboarding.EntityInput]{
		controls: labels(entityForm()),
		bind: func(form url.Values) onboarding.EntityInput {
			return onboarding.EntityInput{Name: form.Get("name"), Type: onboarding.EntityType(form.Get("type")), Country: form.Get("country")}
		},
		save:   s.svc.SaveEntity,
		render: s.renderEntity,
		notice: "entity",
	})
}

// peopleView is the people stage's data.
type peopleView struct {
	layout
	People    []personCard
	Entities  []entityCard
	Ownership []ownershipCard
	CanOwn    bool
	Writable  bool
	Next      string // where Continue goes
}

// personCard is one person on the people page.
type personCard struct {
	ID, Name, Roles string
	FromRegistry    bool
	// Needed says which details the form still needs about the person
	// ("Add Samuel Lee's date of birth and home address"), or is "".
	Needed string
}

// detailsNeeded asks for person p's missing details in a sentence, or
// returns "" when none is missing.
func detailsNeeded(p *onboarding.Person, missing []onboarding.MissingDetail) string {
	if len(missing) == 0 {
		return ""
	}
	labels := make([]string, len(missing))
	for i, d := range missing {
		labels[i] = d.Label()
	}
	whose := "this person's"
	if p.FullName != "" {
		whose = p.FullName + "'s"
	}
	return "Add " + whose + " " + listText(labels)
}

// listText joins items as a sentence does: "a", "a and b", "a, b and c".
func listText(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// entityCard is one related company on the people page.
type entityCard struct {
	ID, Name, Type, Country string
	FromRegistry            bool
}

// personView is the data of a person's page.
type personView struct {
	layout
	Action       string // where the form posts
	IsNew        bool
	PersonName   string
	FromRegistry bool
	Roles        []roleChoice
	RolesShown   string // the fingerprint of the roles the page first showed
	RolesError   string
	Fields       []fieldView
}

// roleChoice is one role's checkbox on a person's page.
type roleChoice struct {
	Value   onboarding.PersonRole
	Label   string
	Checked bool
}

// entityView is the data of a related company's page.
type entityView struct {
	layout
	Action     string // where the form posts
	IsNew      bool
	EntityName string
	Fields     []fieldView
}

// personRoles reads the roles a person form posted.
func personRoles(posted []string) []onboarding.PersonRole {
	roles := make([]onboarding.PersonRole, len(posted))
	for i, r := range posted {
		roles[i] = onboarding.PersonRole(r)
	}
	return roles
}
