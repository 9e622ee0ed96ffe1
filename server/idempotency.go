package server

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// headerIdempotencyKey is the request header of DESIGN §5.9.
const headerIdempotencyKey = "Idempotency-Key"

// idempotent makes a POST that carries an Idempotency-Key safe to retry: the
// same key and body within 24 hours replays the first response with
// Idempotent-Replayed: true. Keys belong to the API key that sent them.
func (s *Server) idempotent(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key := c.Request().Header.Get(headerIdempotencyKey)
		if key == "" {
			return next(c)
		}
		body, err := s.readBody(c)
		if err != nil {
			return err
		}
		c.Request().Body = io.NopCloser(bytes.NewReader(body))
		h := sha256.New()
		h.Write([]byte(c.Request().Method + " " + c.Request().URL.Path + "\n"))
		h.Write(body)
		token, _ := c.Get(ctxToken).(string)
		saved, finish, err := s.svc.BeginIdempotent(c.Request().Context(), apiKey(c), token, key, h.Sum(nil))
		if err != nil {
			return err
		}
		if saved != nil {
			c.Response().Header().Set("Idempotent-Replayed", "true")
			return writeRawJSON(c, saved.Status, saved.Body)
		}
		rec := &teeWriter{ResponseWriter: c.Response().Writer}
		c.Response().Writer = rec
		status := 0 // save nothing unless the handler returns normally
		defer func() { finish(status, rec.body.Bytes()) }()
		if err := next(c); err != nil {
			return err
		}
		status = c.Response().Status
		return nil
	}
}

// teeWriter keeps a copy of what a handler writes.
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}
