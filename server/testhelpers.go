package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// testHelperRoutes registers the sandbox test helpers (docs/sandbox.md) with
// route, the API's route registration (key, scope, Idempotency-Key on
// POST). In production it registers nothing, so every path under
// /api/external/test-helpers/ answers 404 Not found, as any unknown path.
func (s *Server) testHelperRoutes(route func(method, path string, h echo.HandlerFunc, scope onboarding.Scope)) {
	if !s.sandbox {
		return
	}
	route("POST", "/test-helpers/applications/:id/submit", s.submitForTest, onboarding.ScopeApplicationsWrite)
	route("POST", "/test-helpers/rfi-requests/:id/complete", s.completeRFIForTest, onboarding.ScopeRFICreate)
	route("POST", "/test-helpers/rfi-requests/:id/expire", s.expireRFIForTest, onboarding.ScopeRFICreate)
}

// completeRFIForTest handles POST
// /api/external/test-helpers/rfi-requests/:id/complete: it answers the
// completed request as get RFI request does.
func (s *Server) completeRFIForTest(c echo.Context) error {
	var r *onboarding.RFIRequest
	var err error
	if rep := replayOf(c); rep != nil {
		r, err = s.svc.ReplayRFIRequest(c.Request().Context(), apiKey(c), rep.outcome)
	} else {
		r, err = s.svc.CompleteRFIForTest(c.Request().Context(), apiKey(c), c.Param("id"), idempotency(c))
	}
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, s.svc.RFIView(r, true))
}

// expireRFIForTest handles POST
// /api/external/test-helpers/rfi-requests/:id/expire.
func (s *Server) expireRFIForTest(c echo.Context) error {
	var r *onboarding.RFIRequest
	var err error
	if rep := replayOf(c); rep != nil {
		r, err = s.svc.ReplayRFIRequest(c.Request().Context(), apiKey(c), rep.outcome)
	} else {
		r, err = s.svc.ExpireRFIForTest(c.Request().Context(), apiKey(c), c.Param("id"), idempotency(c))
	}
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, s.svc.RFIView(r, true))
}

// submitForTest handles POST
// /api/external/test-helpers/applications/:id/submit: it answers the
// submitted application as get-application does.
func (s *Server) submitForTest(c echo.Context) error {
	var app *onboarding.Application
	var err error
	if rep := replayOf(c); rep != nil {
		app, err = s.svc.ReplayApplication(c.Request().Context(), apiKey(c), rep.outcome)
	} else {
		app, err = s.svc.SubmitForTest(c.Request().Context(), apiKey(c), c.Param("id"), idempotency(c))
	}
	if err != nil {
		return err
	}
	view, err := s.svc.View(app, onboarding.ViewOptions{Links: true})
	if err != nil {
		return err
	}
	return web.WriteJSON(c, http.StatusOK, view)
}
