package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// statusOf is the one table from domain error kinds to HTTP status codes.
var statusOf = map[onboarding.Kind]int{
	onboarding.KindInternal:      http.StatusInternalServerError,
	onboarding.KindInvalid:       http.StatusBadRequest,
	onboarding.KindUnauthorized:  http.StatusUnauthorized,
	onboarding.KindForbidden:     http.StatusForbidden,
	onboarding.KindNotFound:      http.StatusNotFound,
	onboarding.KindConflict:      http.StatusConflict,
	onboarding.KindUnprocessable: http.StatusUnprocessableEntity,
	onboarding.KindTooLarge:      http.StatusRequestEntityTooLarge,
	onboarding.KindRateLimited:   http.StatusTooManyRequests,
	onboarding.KindUpstream:      http.StatusBadGateway,
	onboarding.KindUnavailable:   http.StatusServiceUnavailable,
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
			return errMethodNotAllowed
		case http.StatusRequestEntityTooLarge:
			return onboarding.ErrBodyTooLarge
		}
	}
	return onboarding.ErrInternal
}

var errMethodNotAllowed = &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Method not allowed"}

// statusFor returns the HTTP status of a domain error.
func statusFor(e *onboarding.Error) int {
	if e == errMethodNotAllowed {
		return http.StatusMethodNotAllowed
	}
	if st, ok := statusOf[e.Kind]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// handleError is echo's HTTPErrorHandler: the only place errors become responses.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e := toDomain(err)
	status := statusFor(e)
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
