package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/server/web"
)

// Probe is one check of GET /readyz (docs/operations.md): Check returns nil while
// what it watches (the store, a background job) is ready, and an error
// saying what is wrong otherwise.
type Probe struct {
	Name  string
	Check func(context.Context) error
}

// probeTimeout bounds each check of GET /readyz.
const probeTimeout = 2 * time.Second

// readiness is the body of GET /readyz: "ok" for each check that passed,
// what went wrong for each that failed, whose names Failed lists in order.
type readiness struct {
	Status string            `json:"status"` // "ok" or "unavailable"
	Failed []string          `json:"failed,omitempty"`
	Checks map[string]string `json:"checks"`
}

// ready answers GET /readyz: 200 when every check passes, 503 with the
// failed checks named otherwise.
func (s *Server) ready(c echo.Context) error {
	body := readiness{Status: "ok", Checks: make(map[string]string, len(s.probes))}
	for _, p := range s.probes {
		ctx, cancel := context.WithTimeout(c.Request().Context(), probeTimeout)
		err := p.Check(ctx)
		cancel()
		if err != nil {
			body.Checks[p.Name] = err.Error()
			body.Failed = append(body.Failed, p.Name)
			continue
		}
		body.Checks[p.Name] = "ok"
	}
	status := http.StatusOK
	if len(body.Failed) > 0 {
		body.Status, status = "unavailable", http.StatusServiceUnavailable
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return web.WriteJSON(c, status, body)
}
