package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The form's handlers: bind, call one Service method, render.

// formHome is the link itself: the verification page before sign-in, the
// company search while the company is still to be chosen, else the
// overview of the form's sections.
func (s *Server) formHome(c echo.Context) error {
	v := visitorOf(c)
	if !v.SignedIn {
		return s.renderVerify(c, http.StatusOK, v, "")
	}
	if v.NeedsCompany() && v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/company")
	}
	p := s.newPage(v, "Overview")
	p.Notice = notice(c)
	p.Tasks = tasks(v)
	if v.App.SubmittedAt != nil {
		p.SubmittedAt = v.App.SubmittedAt.Format("2 January 2006")
	}
	return s.render(c, http.StatusOK, "overview", p)
}

func (s *Server) renderVerify(c echo.Context, status int, v *onboarding.Visitor, codeErr string) error {
	p := s.newPage(v, "Confirm it is you")
	p.Notice = notice(c)
	part := v.Participant
	now := s.now()
	p.CodeSent = len(part.VerifyCodeHash) > 0 && now.Before(part.VerifyCodeExpires) && part.VerifyAttempts < onboarding.VerifyCodeAttempts
	p.MaskedEmail = maskEmail(part.Email)
	p.CodeError = codeErr
	if codeErr != "" {
		p.Errors = []errorItem{{Anchor: "code", Message: codeErr}}
		if !p.CodeSent {
			p.Errors[0].Anchor = "send-code"
		}
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
	c.SetCookie(s.sessionCookieOf(c, v))
	return redirectWith(c, formBase(v), "verified")
}

// sessionCookieOf is the cookie that carries v's session.
func (s *Server) sessionCookieOf(c echo.Context, v *onboarding.Visitor) *http.Cookie {
	return &http.Cookie{
		Name: sessionCookie, Value: v.Session, Path: formBase(v),
		MaxAge: int(onboarding.SessionTTL.Seconds()), HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie || c.Request().TLS != nil,
	}
}

// taskView is one line of the overview.
type taskView struct{ ID, Title, Href, State, Class string }

func tasks(v *onboarding.Visitor) []taskView {
	todo := map[string]int{}
	for _, m := range v.Missing() {
		todo[m.Stage]++
	}
	base := formBase(v)
	var out []taskView
	if v.NeedsCompany() {
		out = append(out, taskView{ID: "find-company", Title: "Find your company", Href: base + "/company", State: "To do", Class: "warn"})
	}
	for _, st := range v.Form().Stages() {
		t := taskView{ID: st.ID, Title: st.Title, Href: base + "/s/" + st.ID, State: "Completed", Class: "ok"}
		if n := todo[st.ID]; n > 0 {
			t.State, t.Class = fmt.Sprintf("%d to do", n), "warn"
		}
		if st.ID == onboarding.StageConfirmation && !v.Primary() {
			t.State, t.Class = "Primary contact only", "plain"
		}
		out = append(out, t)
	}
	return out
}

// nextStage is where "continue" goes after stage id.
func nextStage(v *onboarding.Visitor, id string) string {
	stages := v.Form().Stages()
	for i, st := range stages {
		if st.ID == id && i+1 < len(stages) {
			return formBase(v) + "/s/" + stages[i+1].ID
		}
	}
	return formBase(v) + "/review"
}

// stageFields draws the fields of a stage with their stored values, or
// the posted ones and their errors after a failed save (which still say
// what the page first showed).
func stageFields(v *onboarding.Visitor, st onboarding.Stage, posted map[string]json.RawMessage, shown, errs map[string]string) []fieldView {
	var out []fieldView
	for _, f := range st.Fields {
		if f.Type == onboarding.TypeDocument || f.PersonScoped {
			continue
		}
		raw := v.App.Data.Fields[f.ID]
		fp := onboarding.ValueFingerprint(raw)
		if posted != nil {
			raw, fp = posted[f.ID], shown[f.ID]
		}
		fv := newFieldView(f, f.ID, raw, errs[f.ID])
		fv.Shown = fp
		fv.Confirm = f.Confirmation
		fv.ReadOnly = v.CompanyFieldLocked(v.App, f) || !v.Writable()
		out = append(out, fv)
	}
	return out
}

func (s *Server) stagePage(c echo.Context) error {
	v := visitorOf(c)
	switch id := c.Param("stage"); id {
	case onboarding.StagePeople:
		return s.peoplePage(c, v)
	case onboarding.StageDocuments:
		return s.documentsPage(c, v, http.StatusOK, "", "")
	default:
		st, ok := v.Form().Stage(id)
		if !ok {
			return onboarding.ErrStageNotFound
		}
		if !v.Writable() {
			return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
		}
		p := s.newPage(v, st.Title)
		p.Notice = notice(c)
		p.Stage = st
		p.Fields = stageFields(v, st, nil, nil, nil)
		return s.render(c, http.StatusOK, "stage", p)
	}
}

func (s *Server) stageSave(c echo.Context) error {
	v := visitorOf(c)
	st, ok := v.Form().Stage(c.Param("stage"))
	if !ok {
		return onboarding.ErrStageNotFound
	}
	form := c.Request().PostForm
	values := make(map[string]json.RawMessage, len(st.Fields))
	var controls []labelled
	for _, f := range st.Fields {
		if f.Type == onboarding.TypeDocument || f.PersonScoped {
			continue
		}
		values[f.ID] = bindField(f, f.ID, form)
		controls = append(controls, labelled{f.ID, f.Label})
	}
	shown := shownValues(form)
	err := s.svc.SaveStage(c.Request().Context(), v, st.ID, values, shown)
	if msgs, items, ok := fieldErrors(err, controls); ok {
		p := s.newPage(v, st.Title)
		p.Stage = st
		p.Errors = items
		p.Fields = stageFields(v, st, values, shown, msgs)
		return s.render(c, http.StatusBadRequest, "stage", p)
	}
	if err != nil {
		return err
	}
	if form.Get("action") == "save" {
		return redirectWith(c, formBase(v), "saved")
	}
	return c.Redirect(http.StatusSeeOther, nextStage(v, st.ID))
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

func (s *Server) companySearch(c echo.Context) error {
	v := visitorOf(c)
	if !v.NeedsCompany() {
		return c.Redirect(http.StatusSeeOther, formBase(v))
	}
	p := s.newPage(v, "Find your company")
	p.RegistryName = registryName(v.App.Country)
	p.Query = c.QueryParam("q")
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
		p := s.newPage(v, "Find your company")
		p.RegistryName = registryName(v.App.Country)
		p.Errors = []errorItem{{Anchor: "q", Message: e.Message}}
		return s.render(c, statusOf(e.Kind), "company", p)
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v), "company")
}

// People, entities and ownership.

type personCard struct {
	ID, Name, Roles, Todo string
	FromRegistry          bool
}

type entityCard struct {
	ID, Name, Type, Country string
	FromRegistry            bool
}

type ownershipCard struct {
	ID, Text     string
	FromRegistry bool
}

type roleChoice struct {
	Value   onboarding.PersonRole
	Label   string
	Checked bool
}

var roleLabels = map[onboarding.PersonRole]string{
	onboarding.PersonDirector:    "Director",
	onboarding.PersonUBO:         "Beneficial owner (owns or controls 25% or more)",
	onboarding.PersonShareholder: "Shareholder",
}

var shortRoleLabels = map[onboarding.PersonRole]string{
	onboarding.PersonDirector:    "Director",
	onboarding.PersonUBO:         "Beneficial owner",
	onboarding.PersonShareholder: "Shareholder",
}

var entityTypeLabels = map[onboarding.EntityType]string{
	onboarding.EntityHoldingCompany: "Holding company",
	onboarding.EntitySubsidiary:     "Subsidiary",
	onboarding.EntityParent:         "Parent company",
	onboarding.EntityOther:          "Other",
}

func (s *Server) peoplePage(c echo.Context, v *onboarding.Visitor) error {
	p := s.newPage(v, "People and owners")
	p.Notice = notice(c)
	d := &v.App.Data
	todo := map[string]int{}
	for i := range d.People {
		for _, f := range v.Form().Fields() {
			if f.PersonScoped && f.Required && f.Type != onboarding.TypeDocument && onboarding.PersonFieldValue(&d.People[i], f.ID) == nil {
				todo[d.People[i].ID]++
			}
		}
	}
	for i := range d.People {
		pp := &d.People[i]
		card := personCard{ID: pp.ID, Name: onboarding.PersonName(pp), Roles: roleList(pp.Roles), FromRegistry: pp.Source == onboarding.SourceRegistry}
		if n := todo[pp.ID]; n > 0 {
			card.Todo = fmt.Sprintf("%d to do", n)
		}
		p.People = append(p.People, card)
	}
	for _, e := range d.Entities {
		p.Entities = append(p.Entities, entityCard{ID: e.ID, Name: e.Name, Type: entityTypeLabels[e.Type], Country: e.Country, FromRegistry: e.Source == onboarding.SourceRegistry})
	}
	for _, o := range d.Ownership {
		p.Ownership = append(p.Ownership, ownershipCard{ID: o.ID, Text: ownershipText(v.App, o), FromRegistry: o.PercentageBand != ""})
	}
	p.CanOwn = len(d.People)+len(d.Entities) > 0
	p.Next = nextStage(v, onboarding.StagePeople)
	return s.render(c, http.StatusOK, "people", p)
}

func roleList(roles []onboarding.PersonRole) string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = shortRoleLabels[r]
	}
	return strings.Join(out, ", ")
}

// partyName names an owner or owned party for the applicant.
func partyName(app *onboarding.Application, kind onboarding.PartyType, id string) string {
	switch kind {
	case onboarding.OwnerPerson:
		for i := range app.Data.People {
			if app.Data.People[i].ID == id {
				return onboarding.PersonName(&app.Data.People[i])
			}
		}
	case onboarding.OwnerEntity:
		for _, e := range app.Data.Entities {
			if e.ID == id {
				return e.Name
			}
		}
	case onboarding.OwnedTarget:
		if n := app.CompanyName(); n != "" {
			return n
		}
		return "your company"
	}
	return "someone no longer listed"
}

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

// shownValues reads the fingerprints a page posts of the values it
// showed (shown.{field id}); nil when it posts none.
func shownValues(form url.Values) map[string]string {
	var shown map[string]string
	for k, vs := range form {
		if id, ok := strings.CutPrefix(k, "shown."); ok && len(vs) > 0 {
			if shown == nil {
				shown = make(map[string]string)
			}
			shown[id] = vs[0]
		}
	}
	return shown
}

func (s *Server) personPage(c echo.Context) error {
	v := visitorOf(c)
	return s.renderPerson(c, v, http.StatusOK, c.Param("id"), nil, nil, nil)
}

// renderPerson draws a person's page: the stored values, or after a failed
// save the posted ones (in, with what the page first showed) and errors.
func (s *Server) renderPerson(c echo.Context, v *onboarding.Visitor, status int, id string, in *onboarding.PersonInput, errs map[string]string, items []errorItem) error {
	if !v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	var person *onboarding.Person
	if id != "new" {
		for i := range v.App.Data.People {
			if v.App.Data.People[i].ID == id {
				person = &v.App.Data.People[i]
			}
		}
		if person == nil {
			return onboarding.ErrPersonNotFound
		}
	}
	p := s.newPage(v, "Add a person")
	p.IsNew = person == nil
	p.Action = formBase(v) + "/people/" + id
	p.Errors = items
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
		p.Roles = append(p.Roles, roleChoice{Value: r, Label: roleLabels[r], Checked: slices.Contains(roles, r)})
	}
	p.RolesError = errs["roles"]
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
		fv := newFieldView(f, f.ID, raw, errs[f.ID])
		fv.Shown = fp
		if f.ID == "person_full_name" {
			fv.Required = true
			fv.ReadOnly = p.FromRegistry
		}
		p.Fields = append(p.Fields, fv)
	}
	return s.render(c, status, "person", p)
}

func (s *Server) personSave(c echo.Context) error {
	v := visitorOf(c)
	id := c.Param("id")
	form := c.Request().PostForm
	in := onboarding.PersonInput{Roles: personRoles(form["roles"]), Values: map[string]json.RawMessage{}, Shown: shownValues(form)}
	controls := []labelled{{"roles", "Roles:"}}
	for _, f := range personFields(v) {
		in.Values[f.ID] = bindField(f, f.ID, form)
		controls = append(controls, labelled{f.ID, f.Label})
	}
	pid := id
	if id == "new" {
		pid = ""
	}
	_, err := s.svc.SavePerson(c.Request().Context(), v, pid, in)
	if msgs, items, ok := fieldErrors(err, controls); ok {
		return s.renderPerson(c, v, http.StatusBadRequest, id, &in, msgs, items)
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/s/people", "person")
}

func (s *Server) personRemove(c echo.Context) error {
	v := visitorOf(c)
	if err := s.svc.RemovePerson(c.Request().Context(), v, c.Param("id")); err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/s/people", "removed")
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
		{ID: "country", Label: "Country of registration", Type: onboarding.TypeText, Pattern: "^[A-Za-z]{2}$", PatternMessage: "must be a two-letter country code such as GB or IE", Description: "Two-letter country code, for example GB or IE."},
	}
}

func (s *Server) entityPage(c echo.Context) error {
	v := visitorOf(c)
	return s.renderEntity(c, v, http.StatusOK, c.Param("id"), nil, nil, nil)
}

func (s *Server) renderEntity(c echo.Context, v *onboarding.Visitor, status int, id string, posted map[string]string, errs map[string]string, items []errorItem) error {
	if !v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	values := posted
	p := s.newPage(v, "Add a related company")
	p.IsNew = id == "new"
	if !p.IsNew {
		i := slices.IndexFunc(v.App.Data.Entities, func(e onboarding.Entity) bool { return e.ID == id })
		if i < 0 {
			return onboarding.ErrEntityNotFound
		}
		e := v.App.Data.Entities[i]
		if e.Source == onboarding.SourceRegistry {
			return onboarding.ErrRegistryRecord
		}
		p.Title, p.EntityName = e.Name, e.Name
		if values == nil {
			values = map[string]string{"name": e.Name, "type": string(e.Type), "country": e.Country}
		}
	}
	p.Action = formBase(v) + "/entities/" + id
	p.Errors = items
	for _, f := range entityForm() {
		p.Fields = append(p.Fields, newFieldView(f, f.ID, toJSON(values[f.ID]), errs[f.ID]))
	}
	return s.render(c, status, "entity", p)
}

func (s *Server) entitySave(c echo.Context) error {
	v := visitorOf(c)
	id := c.Param("id")
	form := c.Request().PostForm
	in := onboarding.EntityInput{Name: form.Get("name"), Type: onboarding.EntityType(form.Get("type")), Country: form.Get("country")}
	eid := id
	if id == "new" {
		eid = ""
	}
	_, err := s.svc.SaveEntity(c.Request().Context(), v, eid, in)
	var controls []labelled
	for _, f := range entityForm() {
		controls = append(controls, labelled{f.ID, f.Label})
	}
	if msgs, items, ok := fieldErrors(err, controls); ok {
		return s.renderEntity(c, v, http.StatusBadRequest, id, map[string]string{"name": in.Name, "type": string(in.Type), "country": in.Country}, msgs, items)
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/s/people", "entity")
}

func (s *Server) entityRemove(c echo.Context) error {
	v := visitorOf(c)
	if err := s.svc.RemoveEntity(c.Request().Context(), v, c.Param("id")); err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/s/people", "removed")
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

func (s *Server) ownershipPage(c echo.Context) error {
	v := visitorOf(c)
	return s.renderOwnership(c, v, http.StatusOK, c.Param("id"), nil, nil, nil)
}

func (s *Server) renderOwnership(c echo.Context, v *onboarding.Visitor, status int, id string, posted *onboarding.OwnershipInput, errs map[string]string, items []errorItem) error {
	if !v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	in := posted
	p := s.newPage(v, "Add ownership")
	p.IsNew = id == "new"
	if !p.IsNew {
		i := slices.IndexFunc(v.App.Data.Ownership, func(o onboarding.Ownership) bool { return o.ID == id })
		if i < 0 {
			return onboarding.ErrOwnershipNotFound
		}
		o := v.App.Data.Ownership[i]
		if o.PercentageBand != "" {
			return onboarding.ErrRegistryRecord
		}
		p.Title = "Change ownership"
		if in == nil {
			owned := string(onboarding.OwnedTarget)
			if o.OwnedType == onboarding.OwnedEntity {
				owned = "entity:" + o.OwnedID
			}
			in = &onboarding.OwnershipInput{Owner: string(o.OwnerType) + ":" + o.OwnerID, Owned: owned,
				Percentage: onboarding.FormatPercent(o.Percentage), IsDirect: o.IsDirect, IsNominee: o.IsNominee}
		}
	}
	if in == nil {
		in = &onboarding.OwnershipInput{Owned: string(onboarding.OwnedTarget), IsDirect: true}
	}
	p.Action = formBase(v) + "/ownership/" + id
	p.Errors = items
	values := map[string]string{"owner": in.Owner, "owned": in.Owned, "percentage": in.Percentage}
	for _, f := range ownershipForm(v.App) {
		p.Fields = append(p.Fields, newFieldView(f, f.ID, toJSON(values[f.ID]), errs[f.ID]))
	}
	p.Direct, p.Nominee = in.IsDirect, in.IsNominee
	return s.render(c, status, "ownership", p)
}

func (s *Server) ownershipSave(c echo.Context) error {
	v := visitorOf(c)
	id := c.Param("id")
	form := c.Request().PostForm
	in := onboarding.OwnershipInput{Owner: form.Get("owner"), Owned: form.Get("owned"), Percentage: form.Get("percentage"),
		IsDirect: form.Get("is_direct") != "false", IsNominee: form.Get("is_nominee") == "true"}
	oid := id
	if id == "new" {
		oid = ""
	}
	_, err := s.svc.SaveOwnership(c.Request().Context(), v, oid, in)
	var controls []labelled
	for _, f := range ownershipForm(v.App) {
		controls = append(controls, labelled{f.ID, f.Label})
	}
	if msgs, items, ok := fieldErrors(err, controls); ok {
		if total, ok := errors.AsType[*onboarding.OwnershipTotalError](err); ok {
			msgs["percentage"], items = total.Error(), []errorItem{{Anchor: "percentage", Message: total.Error()}}
		}
		return s.renderOwnership(c, v, http.StatusBadRequest, id, &in, msgs, items)
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/s/people", "ownership")
}

func (s *Server) ownershipRemove(c echo.Context) error {
	v := visitorOf(c)
	if err := s.svc.RemoveOwnership(c.Request().Context(), v, c.Param("id")); err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/s/people", "removed")
}

// Documents.

// docSlot is one document the applicant can upload: a company document
// field, or a person-scoped field for one person.
type docSlot struct {
	Key, FieldID, PersonID string
	Label, Description     string
	Whose                  string
	Required               bool
	Doc                    *onboarding.Document
	ViewHref               string
	Error                  string
}

func (s *Server) docSlots(v *onboarding.Visitor) []docSlot {
	var out []docSlot
	d := &v.App.Data
	for i := range v.Form().Fields() {
		f := &v.Form().Fields()[i]
		if f.Type != onboarding.TypeDocument {
			continue
		}
		add := func(personID, whose string, required bool, docs map[string]onboarding.Document) {
			slot := docSlot{Key: docKey(f.ID, personID), FieldID: f.ID, PersonID: personID, Label: f.Label, Description: f.Description, Whose: whose, Required: required}
			if doc, ok := docs[f.ID]; ok {
				slot.Doc = &doc
				if doc.Status != onboarding.DocumentRejected {
					slot.ViewHref = s.svc.DocumentDownloadPath(&doc)
				}
			}
			out = append(out, slot)
		}
		if !f.PersonScoped {
			add("", "", f.Required, d.Documents)
			continue
		}
		for j := range d.People {
			pp := &d.People[j]
			add(pp.ID, onboarding.PersonName(pp), onboarding.PersonNeedsDocument(f, pp), pp.Documents)
		}
	}
	return out
}

func (s *Server) documentsPage(c echo.Context, v *onboarding.Visitor, status int, errKey, errMsg string) error {
	p := s.newPage(v, "Documents")
	p.Notice = notice(c)
	p.NoticeWarn = c.QueryParam("done") == "rejected"
	p.Slots = s.docSlots(v)
	for i := range p.Slots {
		if p.Slots[i].Key == errKey {
			p.Slots[i].Error = errMsg
			p.Errors = []errorItem{{Anchor: "file-" + errKey, Message: p.Slots[i].Label + ": " + errMsg}}
		}
	}
	if p.Errors == nil && errMsg != "" {
		p.Errors = []errorItem{{Message: errMsg}}
	}
	p.MaxUploadBytes = s.svc.MaxUploadBytes()
	p.MaxUpload = onboarding.SizeText(p.MaxUploadBytes)
	p.MaxUploadMessage = onboarding.ErrUploadTooLarge(p.MaxUploadBytes).Message
	p.Next = nextStage(v, onboarding.StageDocuments)
	return s.render(c, status, "documents", p)
}

// uploadDocument streams a multipart upload into the blob store: the small
// parts (csrf, field, person) come first, as the page's form orders them,
// and the file part is read straight into storage without buffering.
func (s *Server) uploadDocument(c echo.Context) error {
	v := visitorOf(c)
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.svc.MaxUploadBytes()+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return s.documentsPage(c, v, http.StatusBadRequest, "", onboarding.ErrNoFileChosen.Message)
	}
	small := map[string]string{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.uploadFailed(c, v, "", err)
		}
		name := part.FormName()
		if name != "file" {
			b, err := io.ReadAll(io.LimitReader(part, 1024))
			if err != nil {
				return s.uploadFailed(c, v, "", err)
			}
			small[name] = string(b)
			continue
		}
		if !s.svc.CheckCSRF(v, small["csrf"]) {
			return onboarding.ErrCSRF
		}
		key := docKey(small["field"], small["person"])
		if part.FileName() == "" {
			return s.documentsPage(c, v, http.StatusBadRequest, key, onboarding.ErrNoFileChosen.Message)
		}
		doc, err := s.svc.UploadDocument(r.Context(), v, onboarding.Upload{
			FieldID: small["field"], PersonID: small["person"], FileName: part.FileName(),
			Type: part.Header.Get("Content-Type"), Body: part,
		})
		if err != nil {
			return s.uploadFailed(c, v, key, err)
		}
		done := "uploaded"
		if doc.Status == onboarding.DocumentRejected {
			done = "rejected"
		}
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/s/documents?done="+done+"#doc-"+key)
	}
	if !s.svc.CheckCSRF(v, small["csrf"]) {
		return onboarding.ErrCSRF
	}
	return s.documentsPage(c, v, http.StatusBadRequest, "", onboarding.ErrNoFileChosen.Message)
}

// removeDocument takes away the applicant's upload for one document.
func (s *Server) removeDocument(c echo.Context) error {
	v := visitorOf(c)
	form := c.Request().PostForm
	field, person := form.Get("field"), form.Get("person")
	err := s.svc.RemoveDocument(c.Request().Context(), v, field, person)
	if e := onboarding.AsError(err); e != nil && e.Kind == onboarding.KindInvalid {
		return s.documentsPage(c, v, http.StatusBadRequest, docKey(field, person), e.Message)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, formBase(v)+"/s/documents?done=doc-removed#doc-"+docKey(field, person))
}

// docKey names one document slot on the documents page.
func docKey(field, person string) string {
	if person != "" {
		return field + "-" + person
	}
	return field
}

// uploadFailed shows the documents page with the error at the upload it
// concerns. The rest of an oversized body is read (up to the request
// limit) so that the browser gets the page rather than a reset connection.
func (s *Server) uploadFailed(c echo.Context, v *onboarding.Visitor, key string, err error) error {
	f := failureOf(err)
	switch f.status {
	case http.StatusInternalServerError, http.StatusForbidden, http.StatusConflict:
		return err
	case http.StatusRequestEntityTooLarge:
		f.body.Error = onboarding.ErrUploadTooLarge(s.svc.MaxUploadBytes()).Message
		_, _ = io.Copy(io.Discard, c.Request().Body)
	}
	return s.documentsPage(c, v, f.status, key, f.body.Error)
}

// Collaborators.

func collaboratorForm() []*onboarding.Field {
	return []*onboarding.Field{
		{ID: "email", Label: "E-mail address", Type: onboarding.TypeText, Required: true},
		{ID: "name", Label: "Name", Type: onboarding.TypeText},
	}
}

func (s *Server) collaboratorsPage(c echo.Context) error {
	return s.renderCollaborators(c, visitorOf(c), http.StatusOK, nil, nil, nil, "")
}

func (s *Server) renderCollaborators(c echo.Context, v *onboarding.Visitor, status int, posted map[string]string, errs map[string]string, items []errorItem, link string) error {
	if !v.Primary() {
		return onboarding.ErrPrimaryOnly
	}
	p := s.newPage(v, "Invite colleagues")
	p.Notice = notice(c)
	p.Errors = items
	p.Participants = v.App.Participants
	p.InviteLink = link
	for _, f := range collaboratorForm() {
		p.Fields = append(p.Fields, newFieldView(f, f.ID, toJSON(posted[f.ID]), errs[f.ID]))
	}
	return s.render(c, status, "collaborators", p)
}

func (s *Server) collaboratorInvite(c echo.Context) error {
	v := visitorOf(c)
	form := c.Request().PostForm
	email, name := form.Get("email"), form.Get("name")
	res, err := s.svc.InviteCollaborator(c.Request().Context(), v, email, name)
	if e := onboarding.AsError(err); e != nil && e.Kind == onboarding.KindInvalid {
		errs := map[string]string{"email": e.Message}
		return s.renderCollaborators(c, v, http.StatusBadRequest, map[string]string{"email": email, "name": name}, errs, []errorItem{{Anchor: "email", Message: e.Message}}, "")
	}
	if err != nil {
		return err
	}
	if !res.Sent {
		items := []errorItem{{Message: "The invitation is saved, but the e-mail could not be sent. Share the link below with " + res.Participant.Email + " yourself."}}
		return s.renderCollaborators(c, v, http.StatusOK, nil, nil, items, res.Link)
	}
	return redirectWith(c, formBase(v)+"/collaborators", "invited")
}

func (s *Server) collaboratorRemove(c echo.Context) error {
	v := visitorOf(c)
	if err := s.svc.RemoveCollaborator(c.Request().Context(), v, c.Param("id")); err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/collaborators", "removed")
}

// Review and submission.

type missingView struct{ Href, Message string }

type summarySection struct {
	Title, Href string
	Rows        []summaryRow
}

type summaryRow struct{ Label, Value string }

func (s *Server) reviewPage(c echo.Context) error {
	v := visitorOf(c)
	return s.renderReview(c, v, http.StatusOK, nil)
}

func (s *Server) renderReview(c echo.Context, v *onboarding.Visitor, status int, items []errorItem) error {
	p := s.newPage(v, "Review and submit")
	p.Notice = notice(c)
	p.Errors = items
	base := formBase(v)
	for _, m := range v.Missing() {
		href := base + "/s/" + m.Stage
		if m.Stage == "company" && v.NeedsCompany() {
			href = base + "/company"
		}
		if m.FieldID != "" && m.Stage != onboarding.StageDocuments && m.Stage != onboarding.StagePeople {
			href += "#" + m.FieldID
		}
		p.Missing = append(p.Missing, missingView{Href: href, Message: m.Message})
	}
	d := &v.App.Data
	for _, st := range v.Form().Stages() {
		sec := summarySection{Title: st.Title, Href: base + "/s/" + st.ID}
		switch st.ID {
		case onboarding.StagePeople:
			for i := range d.People {
				pp := &d.People[i]
				var parts []string
				parts = append(parts, roleList(pp.Roles))
				for _, f := range personFields(v) {
					if f.ID == "person_full_name" {
						continue
					}
					if t := valueText(f, onboarding.PersonFieldValue(pp, f.ID)); t != "" {
						parts = append(parts, f.Label+": "+t)
					}
				}
				sec.Rows = append(sec.Rows, summaryRow{Label: onboarding.PersonName(pp), Value: strings.Join(parts, "\n")})
			}
			for _, e := range d.Entities {
				sec.Rows = append(sec.Rows, summaryRow{Label: e.Name, Value: entityTypeLabels[e.Type]})
			}
			for _, o := range d.Ownership {
				sec.Rows = append(sec.Rows, summaryRow{Label: "Ownership", Value: ownershipText(v.App, o)})
			}
		case onboarding.StageDocuments:
			for _, slot := range s.docSlots(v) {
				label := slot.Label
				if slot.Whose != "" {
					label += " for " + slot.Whose
				}
				val := ""
				if slot.Doc != nil {
					switch slot.Doc.Status {
					case onboarding.DocumentRejected:
						val = slot.Doc.FileName + " (not accepted)"
					case onboarding.DocumentSkipped:
						val = "Not needed"
					default:
						val = slot.Doc.FileName
					}
				}
				sec.Rows = append(sec.Rows, summaryRow{Label: label, Value: val})
			}
		default:
			for _, f := range st.Fields {
				sec.Rows = append(sec.Rows, summaryRow{Label: f.Label, Value: valueText(f, d.Fields[f.ID])})
			}
		}
		p.Sections = append(p.Sections, sec)
	}
	return s.render(c, status, "review", p)
}

// valueText writes a stored value for people to read.
func valueText(f *onboarding.Field, raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	label := func(v string) string {
		for _, o := range f.Options {
			if o.Value == v {
				return o.Label
			}
		}
		return v
	}
	switch f.Type {
	case onboarding.TypeSelect:
		return label(scalarText(raw))
	case onboarding.TypeMultiSelect:
		var vals []string
		_ = json.Unmarshal(raw, &vals)
		for i := range vals {
			vals[i] = label(vals[i])
		}
		return strings.Join(vals, ", ")
	case onboarding.TypeBoolean:
		if string(raw) == "true" {
			return "Yes"
		}
		return "No"
	case onboarding.TypePercentage:
		return scalarText(raw) + "%"
	case onboarding.TypeCurrency:
		var cur struct {
			Amount   json.Number `json:"amount"`
			Currency string      `json:"currency"`
		}
		_ = json.Unmarshal(raw, &cur)
		return cur.Currency + " " + cur.Amount.String()
	case onboarding.TypeAddress:
		var a map[string]string
		_ = json.Unmarshal(raw, &a)
		var lines []string
		for _, k := range addressParts {
			if a[k] != "" {
				lines = append(lines, a[k])
			}
		}
		return strings.Join(lines, "\n")
	}
	return scalarText(raw)
}

func (s *Server) submit(c echo.Context) error {
	v := visitorOf(c)
	err := s.svc.Submit(c.Request().Context(), v)
	if e := onboarding.AsError(err); e != nil && len(e.Items) > 0 {
		return s.renderReview(c, v, http.StatusBadRequest, []errorItem{{Anchor: "missing", Message: e.Message}})
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v), "submitted")
}

// personRoles reads the roles a person form posted.
func personRoles(posted []string) []onboarding.PersonRole {
	roles := make([]onboarding.PersonRole, len(posted))
	for i, r := range posted {
		roles[i] = onboarding.PersonRole(r)
	}
	return roles
}
