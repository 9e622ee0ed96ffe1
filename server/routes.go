package server

import (
	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/openapi"
	"onboard/server/web"
)

// routes registers every route of the API in one place, then the Pages'.
// Every GET route answers HEAD too (web.HeadAsGet, unless it has a HEAD
// route of its own), and every answer carries web.BaseHeaders.
func (s *Server) routes() {
	s.e.Pre(web.HeadAsGet(s.e, func(pattern string) bool { return s.headRoutes[pattern] }))
	s.e.Use(s.foreground, web.RequestID, s.requestLog, web.BaseHeaders, web.RecoverPanic)

	s.e.GET("/healthz", s.health)
	s.e.GET("/readyz", s.ready)
	if s.metricsHandler != nil && s.metricsLn == nil {
		s.e.GET("/metrics", echo.WrapHandler(s.metricsHandler))
	}
	// Signed blob downloads: the link itself is the credential.
	s.e.GET("/files/:id", s.download, s.limitDownloads)
	s.e.HEAD("/files/:id", s.download, s.limitDownloads) // ServeContent answers HEAD without reading the file
	// The API's contract (docs/api.md): no key, cacheable.
	s.e.GET(openapi.Path, echo.WrapHandler(openapi.Handler()))

	// Middleware is attached per route, not to the group: echo v4 answers
	// every unmatched path of a group that has middleware with 404, which
	// would hide 405 Method not allowed.
	api := s.e.Group("/api/external")
	route := func(method, path string, h echo.HandlerFunc, scope onboarding.Scope) {
		mw := []echo.MiddlewareFunc{s.authenticate(scope)}
		if s.writes != nil && method != "GET" {
			mw = append(mw, s.writable)
		}
		if method == "POST" {
			mw = append(mw, s.idempotent)
		}
		api.Add(method, path, h, mw...)
	}
	route("POST", "/applications", s.createApplication, onboarding.ScopeApplicationsCreate)
	route("GET", "/applications", s.listApplications, onboarding.ScopeApplicationsRead)
	route("GET", "/applications/:id", s.getApplication, onboarding.ScopeApplicationsRead)
	route("PATCH", "/applications/:id", s.updateApplication, onboarding.ScopeApplicationsWrite)
	route("GET", "/applications/:id/fields", s.fieldCatalog, onboarding.ScopeApplicationsRead)
	route("GET", "/applications/:id/documents/:docId", s.getDocument, onboarding.ScopeApplicationsRead)
	route("POST", "/applications/:id/pre-auth", s.refreshPreAuth, onboarding.ScopeApplicationsCreate)
	route("POST", "/applications/:id/decision", s.recordDecision, onboarding.ScopeApplicationsWrite)
	route("POST", "/applications/:id/invite", s.resendInvite, onboarding.ScopeApplicationsCreate)
	route("GET", "/applications/:id/activity", s.listActivity, onboarding.ScopeApplicationsRead)
	route("POST", "/rfi-requests", s.createRFIRequest, onboarding.ScopeRFICreate)
	route("GET", "/rfi-requests", s.listRFIRequests, onboarding.ScopeRFIRead)
	route("GET", "/rfi-requests/:id", s.getRFIRequest, onboarding.ScopeRFIRead)
	route("GET", "/rfi-requests/:id/documents/:docId", s.getRFIDocument, onboarding.ScopeRFIRead)
	route("GET", "/events", s.listEvents, onboarding.ScopeEventsRead)
	route("GET", "/events/:id", s.getEvent, onboarding.ScopeEventsRead)
	s.testHelperRoutes(route)

	if s.pages != nil {
		s.pages.Register(s.e)
	}
}
