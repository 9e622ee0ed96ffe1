package form

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// Collaborators: the primary contact invites colleagues, each with a link
// of their own, and can take their access away.

// registerCollaboratorRoutes registers the collaborators page and its
// posts.
func (s *Server) registerCollaboratorRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/collaborators", s.collaboratorsPage, in...)
	s.e.POST("/a/:slug/collaborators", s.collaboratorInvite, in...)
	s.e.POST("/a/:slug/collaborators/:id/remove", s.collaboratorRemove, in...)
}

func (s *Server) collaboratorsPage(c echo.Context) error {
	return s.renderCollaborators(c, visitorOf(c), http.StatusOK, nil, nil, nil, "")
}

// renderCollaborators draws the collaborators page: the invitation form
// with posted values and errs, the summary items, and link when the
// applicant must share an invitation themselves.
func (s *Server) renderCollaborators(c echo.Context, v *onboarding.Visitor, status int, posted map[string]string, errs map[string]string, items []errorItem, link string) error {
	if !v.Primary() {
		return onboarding.ErrPrimaryOnly
	}
	p := &collaboratorsView{layout: newLayout(v, "Invite colleagues to help"), Participants: v.App.Participants, InviteLink: link, Writable: v.Writable()}
	p.Notice = notice(c)
	p.Errors = items
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
	if e := onboarding.AsError(err); e != nil && e.Kind == onboarding.KindRateLimited {
		return s.renderCollaborators(c, v, http.StatusTooManyRequests, map[string]string{"email": email, "name": name}, nil, []errorItem{{Message: e.Message}}, "")
	}
	if err != nil {
		return err
	}
	if !res.Sent {
		items := []errorItem{{Message: "The invitation is saved, but the email could not be sent. Share the link below with " + res.Participant.Email + " yourself."}}
		return s.renderCollaborators(c, v, http.StatusOK, nil, nil, items, res.Link)
	}
	return c.Redirect(http.StatusSeeOther, formBase(v)+"/collaborators?done=invited&id="+url.QueryEscape(res.Participant.ID))
}

func (s *Server) collaboratorRemove(c echo.Context) error {
	v := visitorOf(c)
	if err := s.svc.RemoveCollaborator(c.Request().Context(), v, c.Param("id")); err != nil {
		return err
	}
	return redirectWith(c, formBase(v)+"/collaborators", "removed")
}

// collaboratorForm are the controls of an invitation.
func collaboratorForm() []*onboarding.Field {
	return []*onboarding.Field{
		{ID: "email", Label: "Email address", Type: onboarding.TypeText, Required: true},
		{ID: "name", Label: "Name", Type: onboarding.TypeText},
	}
}

// collaboratorsView is the collaborators page's data.
type collaboratorsView struct {
	layout
	Participants []onboarding.Participant
	InviteLink   string // shown when the invitation email could not be sent
	Fields       []fieldView
	Writable     bool
}
