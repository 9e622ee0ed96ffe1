package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// activityResponse is a page of an application's activity log, oldest
// first.
type activityResponse struct {
	Entries    []onboarding.ActivityEntryView `json:"entries"`
	HasMore    bool                           `json:"has_more"`
	NextCursor *string                        `json:"next_cursor"`
}

// listActivity handles GET /api/external/applications/:id/activity.
func (s *Server) listActivity(c echo.Context) error {
	page, err := s.svc.ListActivity(c.Request().Context(), apiKey(c), c.Param("id"), c.QueryParam("limit"), c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	out := activityResponse{Entries: page.Entries, HasMore: page.HasMore}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return writeJSON(c, http.StatusOK, out)
}
