package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
	"onboard/server/web/webtest"
)

func TestAllowHead(t *testing.T) {
	for allow, want := range map[string]string{"": "", "POST": "POST", "GET": "GET, HEAD", "OPTIONS, GET, HEAD": "OPTIONS, GET, HEAD", "GET, POST": "GET, HEAD, POST"} {
		if got := web.AllowHead(allow); got != want {
			t.Errorf("web.AllowHead(%q) = %q, want %q", allow, got, want)
		}
	}
}

// headRoutes is an echo instance with GET routes of every kind of answer
// a HEAD request meets, and a middleware that tells, in X-Method, the
// method the handler's middleware sees.
func headRoutes(t *testing.T) *testEcho {
	te := newEcho(t, "/own")
	te.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Set("X-Method", web.RequestMethod(c))
			return next(c)
		}
	})
	te.GET("/json", func(c echo.Context) error {
		return web.WriteJSON(c, http.StatusOK, map[string]any{"status": "ok", "items": []int{1, 2, 3}})
	})
	te.GET("/text", func(c echo.Context) error { return c.String(http.StatusCreated, "hello") })
	te.GET("/empty", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	te.GET("/unchanged", func(c echo.Context) error { return c.NoContent(http.StatusNotModified) })
	te.GET("/fail", failWith(onboarding.ErrApplicationNotFound))
	te.GET("/stream", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, "text/event-stream")
		c.Response().WriteHeader(http.StatusOK)
		_, _ = c.Response().Write([]byte("data: 1\n\n"))
		c.Response().Flush()
		_, err := c.Response().Write([]byte("data: 2\n\n"))
		return err
	})
	te.GET("/own", func(c echo.Context) error { return c.String(http.StatusOK, "the GET") })
	te.HEAD("/own", func(c echo.Context) error {
		c.Response().Header().Set("X-Own", "HEAD "+c.Request().Method)
		return c.NoContent(http.StatusOK)
	})
	te.POST("/post-only", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	return te
}

// TestHeadAnswersLikeGet sends GET then HEAD to each route: HEAD gets the
// GET's status and headers with no body and a Content-Length of the GET's
// body (none for an answer without a body, nor for one flushed before it
// was done), and the request is HEAD again once answered. A route with a
// HEAD route of its own answers HEAD with it.
func TestHeadAnswersLikeGet(t *testing.T) {
	te := headRoutes(t)
	tests := []struct {
		path          string
		status        int
		contentLength string // of the HEAD answer
		headers       bool   // HEAD's headers are GET's
	}{
		{"/json", http.StatusOK, "31", true},
		{"/text", http.StatusCreated, "5", true},
		{"/empty", http.StatusNoContent, "", true},
		{"/unchanged", http.StatusNotModified, "", true},
		{"/fail", http.StatusNotFound, "33", true},
		{"/stream", http.StatusOK, "", true},
		{"/nope", http.StatusNotFound, "21", true},
		{"/post-only", http.StatusMethodNotAllowed, "30", true},
		{"/own", http.StatusOK, "0", false},
	}
	comparable := func(h http.Header) http.Header {
		h = h.Clone()
		h.Del("X-Request-Id")
		h.Del("Content-Length")
		h.Del("X-Method")
		return h
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			get := te.send("GET", tt.path, nil, nil)
			r := httptest.NewRequest("HEAD", tt.path, nil)
			head := httptest.NewRecorder()
			te.ServeHTTP(head, r)
			got := []any{get.Code, head.Code, head.Body.String(), head.Header().Get("Content-Length"), r.Method}
			want := []any{tt.status, tt.status, "", tt.contentLength, "HEAD"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GET status, HEAD status, body, Content-Length, method after (-want +got):\n%s", diff)
			}
			if tt.headers {
				if diff := cmp.Diff(comparable(get.Header()), comparable(head.Header())); diff != "" {
					t.Errorf("HEAD headers (-GET +HEAD):\n%s", diff)
				}
			}
		})
	}
	t.Run("the handler's middleware sees HEAD", func(t *testing.T) {
		if got := te.send("HEAD", "/json", nil, nil).Header().Get("X-Method"); got != "HEAD" {
			t.Errorf("X-Method = %q, want HEAD", got)
		}
	})
	t.Run("a HEAD route of its own", func(t *testing.T) {
		w := te.send("HEAD", "/own", nil, nil)
		if got := w.Header().Get("X-Own"); got != "HEAD HEAD" {
			t.Errorf("X-Own = %q, want the HEAD route's HEAD HEAD", got)
		}
	})
	t.Run("a 405 names HEAD beside GET", func(t *testing.T) {
		w := te.send("HEAD", "/post-only", nil, nil)
		if got := w.Header().Get("Allow"); got != "OPTIONS, POST" {
			t.Errorf("Allow = %q, want OPTIONS, POST", got)
		}
		w = te.send("DELETE", "/json", nil, nil)
		if got := w.Header().Get("Allow"); w.Code != http.StatusMethodNotAllowed || got != "OPTIONS, GET, HEAD" {
			t.Errorf("DELETE /json = %d, Allow %q, want 405 and OPTIONS, GET, HEAD", w.Code, got)
		}
	})
}

// TestOptionsAllowNamesHead checks echo's OPTIONS answer: its Allow
// names HEAD beside GET, which every GET route answers.
func TestOptionsAllowNamesHead(t *testing.T) {
	te := headRoutes(t)
	for path, want := range map[string]string{
		"/json":      "OPTIONS, GET, HEAD",
		"/own":       "OPTIONS, GET, HEAD",
		"/post-only": "OPTIONS, POST",
	} {
		w := te.send("OPTIONS", path, nil, nil)
		if got := w.Header().Get("Allow"); w.Code != http.StatusNoContent || got != want {
			t.Errorf("OPTIONS %s = %d, Allow %q, want 204 and %s", path, w.Code, got, want)
		}
	}
}

// TestHeadOverTheWire checks HEAD through a real HTTP server, which
// frames the answer itself: an answer larger than the server's buffer
// still gets its whole length as Content-Length, and no chunked body.
func TestHeadOverTheWire(t *testing.T) {
	te := headRoutes(t)
	big := strings.Repeat("0123456789abcdef", 1024)
	te.GET("/big", func(c echo.Context) error { return c.String(http.StatusOK, big) })
	webtest.HeadOverTheWire(t, te, "/big", "/json", "/fail", "/nope")
}
