package form

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The link itself, with the overview of the form's stages, and the page
// of each stage of company fields (the people and documents stages have
// pages of their own).

// registerStageRoutes registers the link itself and the stage pages.
func (s *Server) registerStageRoutes(open, in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug", s.formHome, open...)
	s.e.GET("/a/:slug/s/:stage", s.stagePage, in...)
	s.e.POST("/a/:slug/s/:stage", s.stageSave, in...)
}

// formHome is the link itself: the verification page before sign-in, the
// company search while the company is still to be chosen, else the
// overview of the form's stages.
func (s *Server) formHome(c echo.Context) error {
	v := visitorOf(c)
	if !v.SignedIn {
		return s.renderVerify(c, http.StatusOK, formGuest{v}, "")
	}
	if v.NeedsCompany() && v.Writable() {
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/company")
	}
	title := "Company onboarding"
	if name := v.App.CompanyName(); name != "" {
		title = "Onboarding for " + name
	}
	if !v.Writable() {
		title = "Application sent"
	}
	p := &overviewView{layout: newLayout(v, title), Tasks: tasks(v), Submitted: !v.Writable(), IsPrimary: v.Primary(),
		Reference: onboarding.Reference(v.App.ID), Chosen: chosenCompany(v)}
	if !p.Submitted {
		p.Notice = notice(c) // once sent, the confirmation panel says it all
	}
	if v.App.SubmittedAt != nil {
		p.SubmittedAt = v.App.SubmittedAt.Format("2 January 2006")
	}
	return s.render(c, http.StatusOK, "overview", p)
}

// tasks are the lines of the overview: one per stage, with how much of
// it is still to do.
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
		if st.ID != onboarding.StagePeople && st.ID != onboarding.StageDocuments && len(stageControls(st)) == 0 {
			continue // the declarations: made in the last task
		}
		out = append(out, taskView{ID: st.ID, Title: st.Title, Href: base + "/s/" + st.ID, State: taskState(v, st.ID, todo[st.ID])})
		out[len(out)-1].Class = stateClass[out[len(out)-1].State]
	}
	return append(out, sendTask(v))
}

// taskState is a section's status in GOV.UK's words: "Completed" only
// when the applicant has been through it and it lacks nothing (todo
// counts what it lacks), "In progress" when they have been through it but
// something is missing, "Not yet started" before that, whatever the
// partner or the registry filled in.
func taskState(v *onboarding.Visitor, stage string, todo int) string {
	switch {
	case !v.Writable(), v.Visited(stage) && todo == 0:
		return "Completed"
	case v.Visited(stage):
		return "In progress"
	}
	return "Not yet started"
}

// stateClass is the tag colour of each task state.
var stateClass = map[string]string{"Completed": "ok", "In progress": "warn", "Not yet started": "plain"}

// sendTask is the overview's last line: checking the answers and sending
// them with the declarations. Only the primary contact sends; their
// colleagues see who will, as a line that is not a link.
func sendTask(v *onboarding.Visitor) taskView {
	t := taskView{ID: "send", Title: "Check your answers and send", Href: formBase(v) + "/review", State: "Not yet started", Class: "plain"}
	switch {
	case !v.Writable():
		t.State, t.Class = "Sent", "ok"
	case !v.Primary():
		t.Title, t.Href = "Declarations and sending", ""
		t.State = primaryContact(v) + ", the primary contact, will make the declarations and send the application"
	}
	return t
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

func (s *Server) stagePage(c echo.Context) error {
	v := visitorOf(c)
	switch id := c.Param("stage"); id {
	case onboarding.StagePeople, onboarding.StageDocuments:
		// Seeing these pages is going through them: they need no save.
		if err := s.svc.MarkVisited(c.Request().Context(), v, id); err != nil {
			return err
		}
		if id == onboarding.StagePeople {
			return s.peoplePage(c, v)
		}
		return s.documentsPage(c, v, http.StatusOK, "", "")
	default:
		st, ok := v.Form().Stage(id)
		if !ok {
			return onboarding.ErrStageNotFound
		}
		if !v.Writable() || len(stageControls(st)) == 0 {
			return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
		}
		p := &stageView{layout: newLayout(v, st.Title), Stage: st, Fields: stageFields(v, st, nil, nil, nil)}
		p.Notice = notice(c)
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
	fields := stageControls(st)
	if len(fields) == 0 {
		// The declarations' old page: they are made on the review page.
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/review")
	}
	values := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		values[f.ID] = bindField(f, f.ID, form)
	}
	shown := shownValues(form)
	err := s.svc.SaveStage(c.Request().Context(), v, st.ID, values, shown)
	if errs := fieldErrors(err, withPosted(labels(fields), values)); errs != nil {
		p := &stageView{layout: newLayout(v, st.Title), Stage: st, Fields: stageFields(v, st, values, shown, errs)}
		p.Errors = errs.items()
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

// stageControls are the fields of stage st that its page shows: not
// documents or people's details, which have pages of their own, nor
// declarations, which are made at the end of the review page.
func stageControls(st onboarding.Stage) []*onboarding.Field {
	var out []*onboarding.Field
	for _, f := range st.Fields {
		if f.Type != onboarding.TypeDocument && !f.PersonScoped && !f.Confirmation {
			out = append(out, f)
		}
	}
	return out
}

// stageFields draws the fields of a stage with their stored values, or
// the posted ones and their errors after a failed save (which still say
// what the page first showed).
func stageFields(v *onboarding.Visitor, st onboarding.Stage, posted map[string]json.RawMessage, shown map[string]string, errs *formErrors) []fieldView {
	var out []fieldView
	for _, f := range stageControls(st) {
		raw := v.App.Data.Fields[f.ID]
		fp := onboarding.ValueFingerprint(raw)
		if posted != nil {
			raw, fp = posted[f.ID], shown[f.ID]
		}
		fv := newFieldView(f, f.ID, raw, errs.at(f.ID))
		fv.PartErrors = errs.parts(f.ID)
		fv.Shown = fp
		fv.Confirm = f.Confirmation
		fv.ReadOnly = v.CompanyFieldLocked(v.App, f) || !v.Writable()
		out = append(out, fv)
	}
	return out
}

// overviewView is the overview's data.
type overviewView struct {
	layout
	Tasks       []taskView
	SubmittedAt string
	Submitted   bool
	IsPrimary   bool
	// Reference is the application's reference for the applicant.
	Reference string
	// Chosen is the company the applicant chose and may still change.
	Chosen *chosenView
}

// taskView is one line of the overview.
type taskView struct{ ID, Title, Href, State, Class string }

// stageView is the data of a stage's page.
type stageView struct {
	layout
	Stage  onboarding.Stage
	Fields []fieldView
}
