package server

import (
	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// routes registers every route of the API in one place.
func (s *Server) routes() {
	s.e.Use(s.requestLog, s.recoverPanic)
	s.e.RouteNotFound("/*", func(echo.Context) error { return onboarding.ErrRouteNotFound })

	s.e.GET("/healthz", s.health)

	api := s.e.Group("/api/external", apiHeaders)
	create := s.authenticate(onboarding.ScopeApplicationsCreate)
	read := s.authenticate(onboarding.ScopeApplicationsRead)
	write := s.authenticate(onboarding.ScopeApplicationsWrite)

	api.POST("/applications", s.createApplication, create)
	api.GET("/applications", s.listApplications, read)
	api.GET("/applications/:id", s.getApplication, read)
	api.PATCH("/applications/:id", s.updateApplication, write)
	api.GET("/applications/:id/fields", s.fieldCatalog, read)
	api.POST("/applications/:id/pre-auth", s.refreshPreAuth, create)
}
