package server

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// eventsResponse is a page of list events: each item is the
// event's body exactly as its webhooks carry it.
type eventsResponse struct {
	Events []json.RawMessage `json:"events"`
	listPage
}

// listEvents handles GET /api/external/events.
func (s *Server) listEvents(c echo.Context) error {
	k := apiKey(c)
	typ, req, err := parseListQuery(c, "type", onboarding.ParseEventType)
	if err != nil {
		return err
	}
	page, err := s.svc.ListEvents(c.Request().Context(), k, typ, req)
	if err != nil {
		return err
	}
	out := eventsResponse{Events: make([]json.RawMessage, len(page.Items)), listPage: newListPage(page.HasMore, page.NextCursor)}
	for i, e := range page.Items {
		out.Events[i] = e.Body
	}
	return web.WriteJSON(c, http.StatusOK, out)
}

// getEvent handles GET /api/external/events/:id.
func (s *Server) getEvent(c echo.Context) error {
	e, err := s.svc.GetEvent(c.Request().Context(), apiKey(c), c.Param("id"))
	if err != nil {
		return err
	}
	return web.WriteRawJSON(c, http.StatusOK, e.Body)
}
