package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// TestStatusOf checks the one table from domain error kinds to statuses,
// an unknown kind included.
func TestStatusOf(t *testing.T) {
	tests := []struct {
		kind onboarding.Kind
		want int
	}{
		{onboarding.KindInternal, http.StatusInternalServerError},
		{onboarding.KindInvalid, http.StatusBadRequest},
		{onboarding.KindUnauthorized, http.StatusUnauthorized},
		{onboarding.KindForbidden, http.StatusForbidden},
		{onboarding.KindNotFound, http.StatusNotFound},
		{onboarding.KindConflict, http.StatusConflict},
		{onboarding.KindUnprocessable, http.StatusUnprocessableEntity},
		{onboarding.KindTooLarge, http.StatusRequestEntityTooLarge},
		{onboarding.KindRateLimited, http.StatusTooManyRequests},
		{onboarding.KindUpstream, http.StatusBadGateway},
		{onboarding.KindUnavailable, http.StatusServiceUnavailable},
		{onboarding.Kind(99), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		if got := web.StatusOf(tt.kind); got != tt.want {
			t.Errorf("StatusOf(%d) = %d, want %d", tt.kind, got, tt.want)
		}
	}
}

func errBody(msg string) map[string]any { return map[string]any{"error": msg} }

// TestErrorHandlerAnswers sends a request to a handler that returns an
// error (after setting a cacheable Cache-Control, as an asset's handler
// does) and checks the JSON answer: the status of the error's kind, the
// body the API's tests expect for it, the headers of every error answer,
// and those of its status (WWW-Authenticate, Retry-After). Only the
// unexpected errors are logged, with their cause and request id.
func TestErrorHandlerAnswers(t *testing.T) {
	rateLimited := map[string]any{"error": "Rate limit exceeded", "retryable": true}
	bodyErr := `Invalid request body. Only "fields" can be updated via this endpoint.`
	onlyFields := `only "fields" can be updated; people, ownership and documents are managed by the applicant`
	rfiExample := map[string]any{
		"company_name": "Northwind Trading Ltd", "country": "GB", "company_number": "10000001",
		"primary_contact":   map[string]any{"name": "Jane Smith", "email": "jane@northwind.example", "role": "Director"},
		"pre_authenticated": false,
	}
	internal := errBody("Internal server error")
	tests := []struct {
		name   string
		err    error
		status int
		body   map[string]any
		header map[string]string // beyond the headers of every error answer
		domain bool              // the failure's cause is the domain error
	}{
		{"invalid", onboarding.ErrInvalidJSON, 400, errBody("Invalid JSON body"), nil, true},
		{"invalid with details", onboarding.ErrPatchBodyDetails(map[string]string{"people": onlyFields, "ownership": onlyFields}), 400,
			map[string]any{"error": bodyErr, "details": map[string]any{"people": onlyFields, "ownership": onlyFields}}, nil, true},
		{"invalid with a suggested name", onboarding.ErrCompanyNameMismatch("Northwind Ltd", "10000001", "NORTHWIND TRADING LIMITED"), 400, map[string]any{
			"error":          "Company name 'Northwind Ltd' does not match the registered name for 10000001. Did you mean 'NORTHWIND TRADING LIMITED'?",
			"suggested_name": "NORTHWIND TRADING LIMITED",
		}, nil, true},
		{"invalid with missing fields", &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Missing required fields",
			Required: []string{"company_name", "country", "primary_contact.name", "primary_contact.email"},
			Missing:  []string{"company_name", "primary_contact.email"}, Example: rfiExample}, 400,
			map[string]any{"error": "Missing required fields", "required": []any{"company_name", "country", "primary_contact.name", "primary_contact.email"},
				"missing": []any{"company_name", "primary_contact.email"}, "example": rfiExample}, nil, true},
		{"unauthorized", onboarding.ErrMissingAPIKey, 401, errBody("Missing API key"), map[string]string{"WWW-Authenticate": `Bearer realm="onboard"`}, true},
		{"unauthorized for scopes", onboarding.ErrMissingScopes(onboarding.ScopeApplicationsRead), 401, errBody("API key missing required scopes: applications:read"),
			map[string]string{"WWW-Authenticate": `Bearer realm="onboard"`}, true},
		{"forbidden", onboarding.ErrConfigForbidden, 403, errBody("Config not available for this organization"), nil, true},
		{"not found", onboarding.ErrApplicationNotFound, 404, errBody("Application not found"), nil, true},
		{"not found, wrapped", fmt.Errorf("read: %w", onboarding.ErrApplicationNotFound), 404, errBody("Application not found"), nil, true},
		{"conflict", onboarding.ErrTerminalPreAuth, 409, errBody("Application is in a terminal status and pre-auth is no longer applicable"), nil, true},
		{"too large", onboarding.ErrUploadTooLarge(64 << 10), 413, errBody("The file is larger than 64 KB. Upload a smaller file."), nil, true},
		{"unprocessable", &onboarding.Error{Kind: onboarding.KindUnprocessable, Message: "This Idempotency-Key was already used with a different request"}, 422,
			errBody("This Idempotency-Key was already used with a different request"), nil, true},
		{"rate limited", onboarding.ErrTooManyResends(24 * time.Hour), 429, rateLimited, map[string]string{"Retry-After": "86400"}, true},
		{"rate limited, a second and a half", onboarding.ErrTooManyResends(1500 * time.Millisecond), 429, rateLimited, map[string]string{"Retry-After": "2"}, true},
		{"upstream", onboarding.ErrRegistryFailed, 502, map[string]any{"error": "Registry validation failed", "retryable": true}, nil, true},
		{"unavailable", onboarding.ErrRegistryUnavailable("UK company registry"), 503,
			map[string]any{"error": "The UK company registry is temporarily unavailable; retry in a few minutes", "retryable": true}, nil, true},
		// The HTTP layer's own errors.
		{"client over its rate", web.ErrRateLimited, 429, rateLimited, nil, false},
		{"body over the limit", web.ErrBodyTooLarge, 413, errBody("Request body too large"), nil, false},
		{"body over http.MaxBytesReader", fmt.Errorf("read: %w", &http.MaxBytesError{Limit: 10}), 413, errBody("Request body too large"), nil, false},
		{"echo's 413", echo.ErrStatusRequestEntityTooLarge, 413, errBody("Request body too large"), nil, false},
		{"echo's 404", echo.ErrNotFound, 404, errBody("Not found"), nil, false},
		{"echo's 405", echo.ErrMethodNotAllowed, 405, errBody("Method not allowed"), nil, false},
		// Unexpected errors: 500 without details.
		{"internal", web.ErrInternal, 500, internal, nil, false},
		{"any other error", errors.New("disk on fire"), 500, internal, nil, false},
		{"another echo error", echo.ErrBadRequest, 500, internal, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newEcho(t)
			te.GET("/fail", func(c echo.Context) error {
				c.Response().Header().Set("Cache-Control", "public, max-age=3600")
				return tt.err
			})
			w := te.send("GET", "/fail", http.Header{"X-Request-Id": {"req-1"}}, nil)
			if w.Code != tt.status {
				t.Errorf("status = %d, want %d", w.Code, tt.status)
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			if diff := cmp.Diff(tt.body, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			want := map[string]string{
				"Content-Type": "application/json", "Content-Length": strconv.Itoa(w.Body.Len()),
				"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "X-Request-Id": "req-1",
				"WWW-Authenticate": "", "Retry-After": "", "Allow": "",
			}
			for k, v := range tt.header {
				want[k] = v
			}
			got := map[string]string{}
			for k := range want {
				got[k] = w.Header().Get(k)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			unexpected := tt.status == http.StatusInternalServerError
			logged := strings.Contains(te.log.String(), `msg="request failed"`)
			if logged != unexpected || unexpected && !strings.Contains(te.log.String(), "request_id=req-1") {
				t.Errorf("logged %v, want %v with the request id:\n%s", logged, unexpected, te.log.String())
			}
			f := web.FailureOf(tt.err)
			if f.Status != tt.status || f.Unexpected() != unexpected || (f.Cause != nil) != tt.domain {
				t.Errorf("FailureOf = status %d, unexpected %v, cause %v; want %d, %v, a cause %v", f.Status, f.Unexpected(), f.Cause, tt.status, unexpected, tt.domain)
			}
		})
	}
}

// TestErrorAnswersOfTheRouter checks the router's own errors: an unknown
// path is 404 and a wrong method 405 naming the route's methods, HEAD
// beside GET, with the exact bodies the API's tests expect.
func TestErrorAnswersOfTheRouter(t *testing.T) {
	te := newEcho(t)
	ok := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	te.GET("/applications/:id", ok)
	te.PATCH("/applications/:id", ok)
	te.POST("/applications/:id/decision", ok)
	tests := []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/nope", 404, `{"error":"Not found"}`, ""},
		{"DELETE", "/applications/x", 405, `{"error":"Method not allowed"}`, "OPTIONS, GET, HEAD, PATCH"},
		{"GET", "/applications/x/decision", 405, `{"error":"Method not allowed"}`, "OPTIONS, POST"},
	}
	for _, tt := range tests {
		w := te.send(tt.method, tt.path, nil, nil)
		got := []any{w.Code, w.Body.String(), w.Header().Get("Allow"), w.Header().Get("Content-Type"), w.Header().Get("Cache-Control")}
		want := []any{tt.status, tt.body, tt.allow, "application/json", "no-store"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s: status, body, Allow, Content-Type, Cache-Control (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
}

// TestErrorHandlerLeavesACommittedAnswer checks that an error returned
// after the answer started changes nothing of it and logs nothing.
func TestErrorHandlerLeavesACommittedAnswer(t *testing.T) {
	te := newEcho(t)
	te.GET("/partial", func(c echo.Context) error {
		if err := c.String(http.StatusOK, "partial"); err != nil {
			return err
		}
		return errors.New("broken pipe")
	})
	w := te.send("GET", "/partial", nil, nil)
	got := []any{w.Code, w.Body.String(), te.log.String()}
	if diff := cmp.Diff([]any{http.StatusOK, "partial", ""}, got); diff != "" {
		t.Errorf("status, body, log (-want +got):\n%s", diff)
	}
}

// TestErrorAnswer checks the status and message the admin socket answers
// an error with: the API's, from the same table.
func TestErrorAnswer(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"domain error", onboarding.ErrApplicationNotFound, 404, "Application not found"},
		{"wrapped", fmt.Errorf("read: %w", onboarding.ErrInvalidJSON), 400, "Invalid JSON body"},
		{"unexpected", errors.New("disk on fire"), 500, "Internal server error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, msg := web.ErrorAnswer(tt.err)
			if status != tt.status || msg != tt.msg {
				t.Errorf("ErrorAnswer(%v) = %d %q, want %d %q", tt.err, status, msg, tt.status, tt.msg)
			}
		})
	}
}
