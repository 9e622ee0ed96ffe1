package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// activityResponse is a page of an application's activity log, oldest
// first.
type activityResponse struct {
	Entries []onboarding.ActivityEntryView `json:"entries"`
	listPage
}

// listActivity handles GET /api/external/applications/:id/activity.
func (s *Server) listActivity(c echo.Context) error {
	k := apiKey(c)
	req, err := parseActivityQuery(c)
	if err != nil {
		return err
	}
	page, err := s.svc.ListActivity(c.Request().Context(), k, c.Param("id"), req)
	if err != nil {
		return err
	}
	out := activityResponse{Entries: page.Items, listPage: newListPage(page.HasMore, page.NextCursor)}
	return web.WriteJSON(c, http.StatusOK, out)
}
