package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// HeadAsGet answers HEAD on every GET route (RFC 9110 §9.3.2), which echo
// v4 does not route by itself: it runs before routing, routes a HEAD
// request as GET (unless a HEAD route of its own matches it), and sends
// the GET's status and headers with no body (a Content-Length of the
// body's size, unless the handler set one). The request is HEAD again
// before the server finishes the answer, and the request log and metrics
// still say HEAD. An OPTIONS answer's Allow names HEAD beside GET, as a
// 405's does (AllowHead).
//
// e is the instance whose router finds the route; ownHead reports whether
// a route pattern has a HEAD route of its own.
func HeadAsGet(e *echo.Echo, ownHead func(pattern string) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return headAsGet(e, ownHead, next)
	}
}

func headAsGet(e *echo.Echo, ownHead func(pattern string) bool, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method == http.MethodOptions {
			res := c.Response()
			res.Before(func() {
				if allow := res.Header().Get("Allow"); allow != "" {
					res.Header().Set("Allow", AllowHead(allow))
				}
			})
		}
		if r.Method != http.MethodHead {
			return next(c)
		}
		e.Router().Find(http.MethodHead, echo.GetPath(r), c) // echo finds the route again after
		if !ownHead(c.Path()) {
			c.Set(ctxHead, true)
			r.Method = http.MethodGet // echo routes by this very request
		}
		hw := &headWriter{w: c.Response().Writer}
		c.Response().Writer = hw
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		r.Method = http.MethodHead
		hw.sendHeader()
		return nil
	}
}

// ctxHead is the echo context key that marks a HEAD request HeadAsGet
// routes as GET.
const ctxHead = "onboard.head"

// RequestMethod is the method the client sent: HEAD for a HEAD request
// HeadAsGet routes as GET.
func RequestMethod(c echo.Context) string {
	if head, _ := c.Get(ctxHead).(bool); head {
		return http.MethodHead
	}
	return c.Request().Method
}

// headWriter is the response writer of a HEAD request: it holds the status
// until the handler is done, to send the Content-Length of the body it
// counts and discards.
type headWriter struct {
	w      http.ResponseWriter
	status int
	size   int
	sent   bool
}

// Header returns the headers to send.
func (h *headWriter) Header() http.Header { return h.w.Header() }

// WriteHeader keeps the status until sendHeader.
func (h *headWriter) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

// Write counts and discards the body.
func (h *headWriter) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	h.size += len(b)
	return len(b), nil
}

// Flush sends the headers now (a streaming handler's), without the
// Content-Length it cannot know yet.
func (h *headWriter) Flush() {
	h.send(false)
	_ = http.NewResponseController(h.w).Flush()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (h *headWriter) Unwrap() http.ResponseWriter { return h.w }

// sendHeader sends the status and headers once the handler is done.
func (h *headWriter) sendHeader() { h.send(true) }

func (h *headWriter) send(done bool) {
	if h.sent || h.status == 0 {
		return
	}
	h.sent = true
	hd := h.w.Header()
	if done && hd.Get("Content-Length") == "" && hd.Get("Transfer-Encoding") == "" && bodyAllowed(h.status) {
		hd.Set("Content-Length", strconv.Itoa(h.size))
	}
	h.w.WriteHeader(h.status)
}

// bodyAllowed reports whether an answer with status has a body whose
// length a HEAD answer gives.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
