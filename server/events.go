package server

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
)

// eventsResponse is a page of list events: each item is the
// event's body exactly as its webhooks carry it.
type eventsResponse struct {
	Events     []json.RawMessage `json:"events"`
	HasMore    bool              `json:"has_more"`
	NextCursor *string           `json:"next_cursor"`
}

// listEvents handles GET /api/external/events.
func (s *Server) listEvents(c echo.Context) error {
	page, err := s.svc.ListEvents(c.Request().Context(), apiKey(c), c.QueryParam("type"), c.QueryParam("limit"), c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	out := eventsResponse{Events: make([]json.RawMessage, len(page.Events)), HasMore: page.HasMore}
	for i, e := range page.Events {
		out.Events[i] = e.Body
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return writeJSON(c, http.StatusOK, out)
}

// getEvent handles GET /api/external/events/:id.
func (s *Server) getEvent(c echo.Context) error {
	e, err := s.svc.GetEvent(c.Request().Context(), apiKey(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeRawJSON(c, http.StatusOK, e.Body)
}
