// Package web is the HTTP plumbing the JSON API and the applicant form
// share on one echo instance: the table from domain errors to HTTP
// statuses and the JSON error answer, the headers every answer carries,
// HEAD on every GET route, panic recovery and JSON writing.
package web

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// StatusOf is the one table from domain error kinds to HTTP status codes.
func StatusOf(k onboarding.Kind) int {
	switch k {
	case onboarding.KindInvalid:
		return http.StatusBadRequest
	case onboarding.KindUnauthorized:
		return http.StatusUnauthorized
	case onboarding.KindForbidden:
		return http.StatusForbidden
	case onboarding.KindNotFound:
		return http.StatusNotFound
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

// Error is an error of the HTTP layer itself, which the domain never
// returns: a route or method that does not exist, a body over the limit, a
// client over its rate. It is answered like a domain error, with its own
// status.
type Error struct {
	Status    int
	Message   string
	Retryable bool // the client may send the same request again later
}

// Error returns the message the client reads.
func (e *Error) Error() string { return e.Message }

// The HTTP layer's errors, with the messages of the API's error table
// (docs/api.md).
var (
	ErrBodyTooLarge     = &Error{Status: http.StatusRequestEntityTooLarge, Message: "Request body too large"}
	ErrRateLimited      = &Error{Status: http.StatusTooManyRequests, Message: "Rate limit exceeded", Retryable: true}
	ErrRouteNotFound    = &Error{Status: http.StatusNotFound, Message: "Not found"}
	ErrMethodNotAllowed = &Error{Status: http.StatusMethodNotAllowed, Message: "Method not allowed"}
	ErrInternal         = &Error{Status: http.StatusInternalServerError, Message: "Internal server error"}
	// ErrClientClosed is the answer to a request whose client hung up
	// before it was answered: nobody reads it, but the request's log line
	// and metrics carry its status.
	ErrClientClosed = &Error{Status: StatusClientClosedRequest, Message: "Client closed request"}
)

// StatusClientClosedRequest is the status of a request whose client hung
// up before its answer: nginx's 499 "client closed request". It is not a
// server error, and is logged at info level.
const StatusClientClosedRequest = 499

// ClientGone reports whether err, returned while serving r, says no more
// than that the client hung up: the answer could not be written to the
// connection (HangUp), or r's context ended (net/http cancels it when the
// connection closes) and err would be a server error (5xx), as a commit
// abandoned on the ended context is. A 4xx stays: it is about the request
// (a body cut short by a client that closed its side is a 400).
func ClientGone(r *http.Request, err error) bool {
	if err == nil {
		return false
	}
	if HangUp(err) || errors.Is(err, ErrClientClosed) {
		return true
	}
	return r.Context().Err() != nil && FailureOf(err).Status >= http.StatusInternalServerError
}

// HangUp reports whether err is that of a write to a connection the client
// closed (broken pipe), reset, or stopped reading from until the write
// deadline passed.
func HangUp(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, os.ErrDeadlineExceeded)
}

// ErrorBody is the JSON body of every API error (docs/api.md).
type ErrorBody struct {
	Error         string            `json:"error"`
	Retryable     bool              `json:"retryable,omitempty"`
	Details       map[string]string `json:"details,omitempty"`
	SuggestedName string            `json:"suggested_name,omitempty"`
	Required      []string          `json:"required,omitempty"`
	Missing       []string          `json:"missing,omitempty"`
	Example       any               `json:"example,omitempty"`
}

// Failure is how the server answers an error: its status, the error body,
// and the domain error when there is one.
type Failure struct {
	Status int
	Body   ErrorBody
	Cause  *onboarding.Error // nil for an error of the HTTP layer
}

// Unexpected reports whether the failure is one the client cannot act on
// (500 Internal server error): its cause belongs in the log only.
func (f Failure) Unexpected() bool { return f.Status == http.StatusInternalServerError }

// FailureOf turns any error a handler or middleware returns into its
// answer: domain errors by the kind table, the HTTP layer's by their own
// status, and anything unexpected as 500 Internal server error (the caller
// logs the original).
func FailureOf(err error) Failure {
	if e := onboarding.AsError(err); e != nil {
		return Failure{Status: StatusOf(e.Kind), Cause: e,
			Body: ErrorBody{Error: e.Message, Retryable: e.Retryable, Details: e.Details, SuggestedName: e.SuggestedName,
				Required: e.Required, Missing: e.Missing, Example: e.Example}}
	}
	he := ErrInternal
	var tooBig *http.MaxBytesError
	var echoErr *echo.HTTPError
	switch {
	case errors.As(err, &he):
	case errors.As(err, &tooBig):
		he = ErrBodyTooLarge
	case errors.As(err, &echoErr):
		switch echoErr.Code {
		case http.StatusNotFound:
			he = ErrRouteNotFound
		case http.StatusMethodNotAllowed:
			he = ErrMethodNotAllowed
		case http.StatusRequestEntityTooLarge:
			he = ErrBodyTooLarge
		}
	}
	return Failure{Status: he.Status, Body: ErrorBody{Error: he.Message, Retryable: he.Retryable}}
}

// ErrorHandler is echo's HTTPErrorHandler: every error a handler or
// middleware returns (the form renders its own as pages) becomes a JSON
// error answer here, and unexpected ones are logged on log.
func ErrorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if ClientGone(c.Request(), err) {
			log.Debug("client closed request", "method", c.Request().Method, "route", LoggedRoute(c), "err", LoggedError(c, err),
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
			err = ErrClientClosed
		}
		f := FailureOf(err)
		// An error is never stored nor sniffed, whatever the handler set
		// before it failed (an asset's caching, say).
		NoStore(c.Response().Header())
		if f.Unexpected() {
			log.Error("request failed", "method", c.Request().Method, "route", LoggedRoute(c), "err", LoggedError(c, err),
				"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		}
		if f.Status == http.StatusUnauthorized {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="onboard"`)
		}
		if f.Status == http.StatusMethodNotAllowed {
			h := c.Response().Header()
			h.Set("Allow", AllowHead(h.Get("Allow")))
		}
		if f.Cause != nil && f.Cause.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.Cause.RetryAfter.Seconds()))))
		}
		if err := WriteJSON(c, f.Status, f.Body); err != nil && !HangUp(err) {
			log.Warn("write error response", "err", err)
		}
	}
}

// AllowHead adds HEAD after GET to the Allow header echo gives a 405
// ("OPTIONS, GET, PATCH"): every GET route answers HEAD (HeadAsGet), which
// echo's router does not know.
func AllowHead(allow string) string {
	methods := strings.Split(allow, ", ")
	if !slices.Contains(methods, http.MethodGet) || slices.Contains(methods, http.MethodHead) {
		return allow
	}
	i := slices.Index(methods, http.MethodGet)
	return strings.Join(slices.Insert(methods, i+1, http.MethodHead), ", ")
}

// ErrorAnswer is the status and error message the API answers err with:
// the admin socket answers its errors the same way.
func ErrorAnswer(err error) (status int, message string) {
	f := FailureOf(err)
	return f.Status, f.Body.Error
}
