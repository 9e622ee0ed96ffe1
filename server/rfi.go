package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// RFI requests: create, read, list, and the
// download link of a provided document.

// rfiCreateRequest is the body of create RFI request.
type rfiCreateRequest struct {
	CompanyName    string `json:"company_name"`
	Country        string `json:"country"`
	CompanyNumber  string `json:"company_number"`
	PrimaryContact *struct {
		Name  string `json:"name"`
		Email string `json:"email"`
		Role  string `json:"role"`
	} `json:"primary_contact"`
	AgentID          string `json:"agent_id"`
	PreAuthenticated bool   `json:"pre_authenticated"`
}

// rfiCreateResponse is the answer of create RFI request (docs/api.md).
type rfiCreateResponse struct {
	Success          bool                            `json:"success"`
	RequestID        string                          `json:"request_id"`
	Link             string                          `json:"link"`
	ExpiresAt        string                          `json:"expires_at"`
	Status           onboarding.RFIStatus            `json:"status"`
	Participants     []onboarding.RFIParticipantView `json:"participants"`
	PreAuthCode      string                          `json:"pre_auth_code,omitempty"`
	PreAuthExpiresAt string                          `json:"pre_auth_expires_at,omitempty"`
	Warning          string                          `json:"warning,omitempty"`
}

// rfiListResponse is a page of list RFI requests.
type rfiListResponse struct {
	RFIRequests []onboarding.RFIRequestView `json:"rfi_requests"`
	listPage
}

// createRFIRequest handles POST /api/external/rfi-requests.
func (s *Server) createRFIRequest(c echo.Context) error {
	var res *onboarding.RFICreated
	var err error
	if rep := replayOf(c); rep != nil {
		res, err = s.svc.ReplayRFICreate(c.Request().Context(), apiKey(c), rep.outcome, rep.code)
	} else {
		res, err = s.createRFI(c)
	}
	if err != nil {
		return err
	}
	r := res.Request
	view := s.svc.RFIView(r, false)
	out := rfiCreateResponse{
		Success: true, RequestID: r.ID, Link: res.Link, ExpiresAt: view.ExpiresAt,
		Status: r.Status, Participants: view.Participants, Warning: res.Warning,
	}
	if res.PreAuthCode != "" {
		out.PreAuthCode = res.PreAuthCode
		out.PreAuthExpiresAt = onboarding.Timestamp(r.Primary().PreAuthExpires)
	}
	return web.WriteJSON(c, http.StatusCreated, out)
}

// createRFI reads the body of create RFI request and creates it.
func (s *Server) createRFI(c echo.Context) (*onboarding.RFICreated, error) {
	var req rfiCreateRequest
	if err := s.bindJSON(c, &req); err != nil {
		return nil, err
	}
	in := onboarding.RFICreateRequest{
		CompanyName: req.CompanyName, Country: req.Country, CompanyNumber: req.CompanyNumber,
		AgentID: req.AgentID, PreAuthenticated: req.PreAuthenticated,
		Idempotency: idempotency(c),
	}
	if pc := req.PrimaryContact; pc != nil {
		in.PrimaryContact = &onboarding.RFIContactInput{Name: pc.Name, Email: pc.Email, Role: pc.Role}
	}
	return s.svc.CreateRFIRequest(c.Request().Context(), apiKey(c), in)
}

// getRFIRequest handles GET /api/external/rfi-requests/:id.
func (s *Server) getRFIRequest(c echo.Context) error {
	r, err := s.svc.GetRFIRequest(c.Request().Context(), apiKey(c), c.Param("id"))
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, s.svc.RFIView(r, true))
}

// listRFIRequests handles GET /api/external/rfi-requests.
func (s *Server) listRFIRequests(c echo.Context) error {
	k := apiKey(c)
	status, req, err := parseListQuery(c, "status", onboarding.ParseRFIStatus)
	if err != nil {
		return err
	}
	page, err := s.svc.ListRFIRequests(c.Request().Context(), k, status, req)
	if err != nil {
		return err
	}
	out := rfiListResponse{RFIRequests: make([]onboarding.RFIRequestView, len(page.Items)), listPage: newListPage(page.HasMore, page.NextCursor)}
	for i, r := range page.Items {
		out.RFIRequests[i] = s.svc.RFIView(r, true)
	}
	return web.WriteJSON(c, http.StatusOK, out)
}

// getRFIDocument handles GET /api/external/rfi-requests/:id/documents/:docId.
func (s *Server) getRFIDocument(c echo.Context) error {
	d, err := s.svc.GetRFIDocument(c.Request().Context(), apiKey(c), c.Param("id"), c.Param("docId"))
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, documentLinkResponse{URL: d.URL, FileName: d.FileName, FileType: d.FileType})
}
