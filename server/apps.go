package server

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// createApplication handles POST /api/external/applications.
func (s *Server) createApplication(c echo.Context) error {
	var res *onboarding.CreateResult
	var err error
	if r := replayOf(c); r != nil {
		res, err = s.svc.ReplayCreate(c.Request().Context(), apiKey(c), r.outcome, r.code)
	} else {
		res, err = s.create(c)
	}
	if err != nil {
		return err
	}
	out := createApplicationResponse{
		ApplicationID: res.Application.ID,
		Link:          res.Link,
		PreAuthCode:   res.PreAuthCode,
		Warning:       res.Warning,
	}
	for _, p := range res.Application.Participants {
		out.Participants = append(out.Participants, createdParticipant{ID: p.ID, LinkSlug: p.LinkSlug, Email: p.Email, Role: p.Role})
	}
	return web.WriteJSON(c, http.StatusCreated, out)
}

// create reads the body of create application and creates it.
func (s *Server) create(c echo.Context) (*onboarding.CreateResult, error) {
	var req createApplicationRequest
	if err := s.bindJSON(c, &req); err != nil {
		return nil, err
	}
	in := onboarding.CreateRequest{
		Country: req.Country, ConfigID: req.ConfigID, PreAuth: req.PreAuth,
		CompanyNumber: req.CompanyNumber, CompanyName: req.CompanyName,
		Idempotency: idempotency(c),
	}
	if req.PrimaryContact != nil {
		in.PrimaryContact = &onboarding.ContactInput{Email: req.PrimaryContact.Email, Name: req.PrimaryContact.Name}
	}
	return s.svc.CreateApplication(c.Request().Context(), apiKey(c), in)
}

// refreshPreAuth handles POST /api/external/applications/:id/pre-auth.
func (s *Server) refreshPreAuth(c echo.Context) error {
	var res *onboarding.PreAuthResult
	var err error
	if r := replayOf(c); r != nil {
		res, err = s.svc.ReplayPreAuth(c.Request().Context(), apiKey(c), r.outcome, r.code)
	} else {
		res, err = s.svc.RefreshPreAuth(c.Request().Context(), apiKey(c), c.Param("id"), idempotency(c))
	}
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusCreated, preAuthResponse{
		PreAuthCode:     res.Code,
		Link:            res.Link,
		ExpiresAt:       onboarding.Timestamp(res.ExpiresAt),
		ParticipantID:   res.ParticipantID,
		AlreadyVerified: res.AlreadyVerified,
	})
}

// listApplications handles GET /api/external/applications.
func (s *Server) listApplications(c echo.Context) error {
	k := apiKey(c)
	status, req, err := parseListQuery(c, "status", onboarding.ParseStatus)
	if err != nil {
		return err
	}
	page, err := s.svc.ListApplications(c.Request().Context(), k, status, req)
	if err != nil {
		return err
	}
	out := listResponse{Applications: make([]applicationSummary, len(page.Items)), listPage: newListPage(page.HasMore, page.NextCursor)}
	for i, app := range page.Items {
		out.Applications[i] = s.renderSummary(app)
	}
	return web.WriteJSON(c, http.StatusOK, out)
}

// getApplication handles GET /api/external/applications/:id.
func (s *Server) getApplication(c echo.Context) error {
	buf := s.answers.get()
	defer s.answers.put(buf)
	b, err := s.views.applicationJSON(c.Request().Context(), s.svc, apiKey(c), c.Param("id"), *buf)
	if err != nil {
		return err
	}
	*buf = b // grown, when the application needed more
	return web.WriteRawJSON(c, http.StatusOK, b)
}

// getDocument handles GET /api/external/applications/:id/documents/:docId.
func (s *Server) getDocument(c echo.Context) error {
	doc, err := s.svc.GetDocument(c.Request().Context(), apiKey(c), c.Param("id"), c.Param("docId"))
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, documentLinkResponse{URL: doc.URL, FileName: doc.FileName, FileType: doc.FileType})
}

// updateApplication handles PATCH /api/external/applications/:id.
func (s *Server) updateApplication(c echo.Context) error {
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	k := apiKey(c)
	updates, err := parsePatch(body)
	if err != nil {
		return err
	}
	ids, app, err := s.svc.UpdateFields(c.Request().Context(), k, c.Param("id"), updates)
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, updateResponse{Success: true, ApplicationID: app.ID, UpdatedFields: ids})
}

// fieldCatalog handles GET /api/external/applications/:id/fields.
func (s *Server) fieldCatalog(c echo.Context) error {
	app, form, err := s.svc.FieldCatalog(c.Request().Context(), apiKey(c), c.Param("id"))
	if err != nil {
		return err
	}
	catalog, err := s.renderCatalog(form)
	if err != nil {
		return err
	}
	id, err := json.Marshal(app.ID)
	if err != nil {
		return err
	}
	// The catalog is rendered once per form; write it around the id
	// without copying it into a new buffer.
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(http.StatusOK)
	for _, part := range [][]byte{[]byte(`{"application_id":`), id, []byte(`,"fields":`), catalog, []byte("}")} {
		if _, err := c.Response().Write(part); err != nil {
			return err
		}
	}
	return nil
}

// health handles GET /healthz: the process is up and serving.
func (s *Server) health(c echo.Context) error {
	return web.WriteRawJSON(c, http.StatusOK, []byte(`{"status":"ok"}`))
}

// bindJSON decodes a JSON object body into v. An empty body is an empty
// object; invalid JSON, a key given twice and wrongly typed members get
// clear 400s, and member names match v's json tags exactly (a differently
// cased member is ignored, as unknown members are): see web.DecodeJSON.
func (s *Server) bindJSON(c echo.Context, v any) error {
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	return web.DecodeJSON(body, v)
}

// decisionResponse is the answer of record decision.
type decisionResponse struct {
	Success         bool                    `json:"success"`
	DecisionID      string                  `json:"decision_id"`
	ApplicationID   string                  `json:"application_id"`
	Type            onboarding.DecisionType `json:"type"`
	Status          onboarding.Status       `json:"status"`
	RecordedAt      string                  `json:"recorded_at"`
	AlreadyRecorded bool                    `json:"already_recorded"`
}

// recordDecision handles POST /api/external/applications/:id/decision.
func (s *Server) recordDecision(c echo.Context) error {
	var rec *onboarding.DecisionRecord
	var err error
	if r := replayOf(c); r != nil {
		rec, err = s.svc.ReplayDecision(c.Request().Context(), apiKey(c), r.outcome)
	} else {
		rec, err = s.decide(c)
	}
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, decisionResponse{
		Success: true, DecisionID: rec.Decision.ID, ApplicationID: rec.Application.ID, Type: rec.Decision.Type,
		Status: rec.Application.Status, RecordedAt: onboarding.Timestamp(rec.Decision.RecordedAt), AlreadyRecorded: rec.AlreadyRecorded,
	})
}

// decide reads the body of record decision and records it.
func (s *Server) decide(c echo.Context) (*onboarding.DecisionRecord, error) {
	body, err := s.readBody(c)
	if err != nil {
		return nil, err
	}
	in, err := parseDecision(body, c.Param("id"))
	if err != nil {
		return nil, err
	}
	in.Idempotency = idempotency(c)
	return s.svc.RecordDecision(c.Request().Context(), apiKey(c), c.Param("id"), in)
}

// inviteResponse is the answer of resend invite.
type inviteResponse struct {
	Success       bool              `json:"success"`
	ApplicationID string            `json:"application_id"`
	Status        onboarding.Status `json:"status"`
	Warning       string            `json:"warning,omitempty"`
}

// resendInvite handles POST /api/external/applications/:id/invite.
func (s *Server) resendInvite(c echo.Context) error {
	var res *onboarding.ResendResult
	var err error
	if r := replayOf(c); r != nil {
		res, err = s.svc.ReplayResend(c.Request().Context(), apiKey(c), r.outcome)
	} else {
		res, err = s.svc.ResendInvite(c.Request().Context(), apiKey(c), c.Param("id"), idempotency(c))
	}
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, inviteResponse{
		Success: true, ApplicationID: res.Application.ID, Status: res.Application.Status, Warning: res.Warning,
	})
}
