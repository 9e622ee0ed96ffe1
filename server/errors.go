package server

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

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

// httpError is an error of the HTTP layer itself, which the domain never
// returns: a route or method that does not exist, a body over the limit, a
// client over its rate. It is answered like a domain error, with its own
// status.
type httpError struct {
	status    int
	message   string
	retryable bool
}

// Error returns the message the client reads.
func (e *httpError) Error() string { return e.message }

// The HTTP layer's errors, with the messages of spec §7 and DESIGN §5.3.
var (
	errBodyTooLarge     = &httpError{status: http.StatusRequestEntityTooLarge, message: "Request body too large"}
	errRateLimited      = &httpError{status: http.StatusTooManyRequests, message: "Rate limit exceeded", retryable: true}
	errRouteNotFound    = &httpError{status: http.StatusNotFound, message: "Not found"}
	errMethodNotAllowed = &httpError{status: http.StatusMethodNotAllowed, message: "Method not allowed"}
	// errFormTooLarge is the form's page for a post over maxFormPost: in
	// words an applicant can act on.
	errFormTooLarge = &httpError{status: http.StatusRequestEntityTooLarge,
		message: "What you sent is too large. Go back, make your answers shorter and try again."}
	// errFormUnreadable is the form's page for a post that cannot be read:
	// cut short, with more than 10,000 parameters (net/url's limit), a
	// broken %-escape, or text that is not UTF-8. Browsers send none of
	// these; a flaky connection can cut one short.
	errFormUnreadable = &httpError{status: http.StatusBadRequest,
		message: "What you sent could not be read. Go back and try again."}
	errInternal = &httpError{status: http.StatusInternalServerError, message: "Internal server error"}
)

// errorBody is the JSON error of spec §7.
type errorBody struct {
	Error         string            `json:"error"`
	Retryable     bool              `json:"retryable,omitempty"`
	Details       map[string]string `json:"details,omitempty"`
	SuggestedName string            `json:"suggested_name,omitempty"`
	Required      []string          `json:"required,omitempty"`
	Missing       []string          `json:"missing,omitempty"`
	Example       any               `json:"example,omitempty"`
}

// failure is how the server answers an error: its status, the error body,
// and the domain error when there is one.
type failure struct {
	status int
	body   errorBody
	cause  *onboarding.Error // nil for an error of the HTTP layer
}

// unexpected reports whether the failure is one the client cannot act on
// (500 Internal server error): its cause belongs in the log only.
func (f failure) unexpected() bool { return f.status == http.StatusInternalServerError }

// failureOf turns any error a handler or middleware returns into its
// answer: domain errors by the kind table, the HTTP layer's by their own
// status, and anything unexpected as 500 Internal server error (the caller
// logs the original).
func failureOf(err error) failure {
	if e := onboarding.AsError(err); e != nil {
		return failure{status: statusOf(e.Kind), cause: e,
			body: errorBody{Error: e.Message, Retryable: e.Retryable, Details: e.Details, SuggestedName: e.SuggestedName,
				Required: e.Required, Missing: e.Missing, Example: e.Example}}
	}
	he := errInternal
	var tooBig *http.MaxBytesError
	var echoErr *echo.HTTPError
	switch {
	case errors.As(err, &he):
	case errors.As(err, &tooBig):
		he = errBodyTooLarge
	case errors.As(err, &echoErr):
		switch echoErr.Code {
		case http.StatusNotFound:
			he = errRouteNotFound
		case http.StatusMethodNotAllowed:
			he = errMethodNotAllowed
		case http.StatusRequestEntityTooLarge:
			he = errBodyTooLarge
		}
	}
	return failure{status: he.status, body: errorBody{Error: he.message, Retryable: he.retryable}}
}

// handleError is echo's HTTPErrorHandler: the only place errors become responses.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	f := failureOf(err)
	// An error is never stored nor sniffed, whatever the handler set
	// before it failed (an asset's caching, say).
	noStore(c.Response().Header())
	if f.unexpected() {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	if f.status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="onboard"`)
	}
	if f.status == http.StatusMethodNotAllowed {
		h := c.Response().Header()
		h.Set("Allow", allowHead(h.Get("Allow")))
	}
	if f.cause != nil && f.cause.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.cause.RetryAfter.Seconds()))))
	}
	if err := writeJSON(c, f.status, f.body); err != nil {
		s.log.Warn("write error response", "err", err)
	}
}

// allowHead adds HEAD after GET to the Allow header echo gives a 405
// ("OPTIONS, GET, PATCH"): every GET route answers HEAD (headAsGet), which
// echo's router does not know.
func allowHead(allow string) string {
	methods := strings.Split(allow, ", ")
	if !slices.Contains(methods, http.MethodGet) || slices.Contains(methods, http.MethodHead) {
		return allow
	}
	i := slices.Index(methods, http.MethodGet)
	return strings.Join(slices.Insert(methods, i+1, http.MethodHead), ", ")
}
