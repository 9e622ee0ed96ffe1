package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// statusOf is the one table from domain error kinds to HTTP status codes.
func statusOf(k onboarding.Kind) int {
	switch k {
	case onboarding.KindInvalid:
		return http.StatusBadRequest
	case onboarding.KindUnauthorized:
		return http.StatusUnauthorized
	case onboarding.KindForbidden:
		return http.StatusForbidden
	case onboarding.KindNotFound:
		return http.StatusNotFound
	case onboarding.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case onboarding.KindConflict:
		return http.StatusConflict
	case onboarding.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case onboarding.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case onboarding.KindRateLimited:
		return http.StatusTooManyRequests
	case onboarding.KindUpstream:
		return http.StatusBadGateway
	case onboarding.KindUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// errorBody is the JSON error of spec §7.
type errorBody struct {
	Error         string            `json:"error"`
	Retryable     bool              `json:"retryable,omitempty"`
	Details       map[string]string `json:"details,omitempty"`
	SuggestedName string            `json:"suggested_name,omitempty"`
}

// toDomain turns any error a handler or middleware returns into the domain
// error the client sees. Anything unexpected becomes ErrInternal; the caller
// logs the original.
func toDomain(err error) *onboarding.Error {
	if e := onboarding.AsError(err); e != nil {
		return e
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return onboarding.ErrBodyTooLarge
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return onboarding.ErrRouteNotFound
		case http.StatusMethodNotAllowed:
			return onboarding.ErrMethodNotAllowed
		case http.StatusRequestEntityTooLarge:
			return onboarding.ErrBodyTooLarge
		}
	}
	return onboarding.ErrInternal
}

// handleError is echo's HTTPErrorHandler: the only place errors become responses.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e := toDomain(err)
	status := statusOf(e.Kind)
	if status >= 500 && e.Kind == onboarding.KindInternal {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="onboard"`)
	}
	if err := writeJSON(c, status, errorBody{Error: e.Message, Retryable: e.Retryable, Details: e.Details, SuggestedName: e.SuggestedName}); err != nil {
		s.log.Warn("write error response", "err", err)
	}
}
