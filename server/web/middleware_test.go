package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"onboard/server/web"
)

// TestBaseHeaders checks the headers of a successful answer: never
// sniffed, and not stored unless the handler says otherwise.
func TestBaseHeaders(t *testing.T) {
	te := newEcho(t)
	te.GET("/data", func(c echo.Context) error { return c.String(http.StatusOK, "data") })
	te.GET("/asset", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		return c.String(http.StatusOK, "asset")
	})
	tests := []struct{ path, cache string }{
		{"/data", "no-store"},
		{"/asset", "public, max-age=3600"},
	}
	for _, tt := range tests {
		w := te.send("GET", tt.path, nil, nil)
		got := map[string]any{"status": w.Code, "nosniff": w.Header().Get("X-Content-Type-Options"), "cache": w.Header().Get("Cache-Control")}
		want := map[string]any{"status": http.StatusOK, "nosniff": "nosniff", "cache": tt.cache}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestNoStore(t *testing.T) {
	h := http.Header{"Cache-Control": {"public, max-age=86400"}, "X-Frame-Options": {"DENY"}}
	web.NoStore(h)
	want := http.Header{"Cache-Control": {"no-store"}, "X-Content-Type-Options": {"nosniff"}, "X-Frame-Options": {"DENY"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

// TestRecoverPanic checks that a handler's panic is the 500 JSON answer
// with no details, its cause logged, and that http.ErrAbortHandler goes
// on up to the HTTP server.
func TestRecoverPanic(t *testing.T) {
	te := newEcho(t)
	te.GET("/bug", func(echo.Context) error { panic("boom") })
	te.GET("/abort", func(echo.Context) error { panic(http.ErrAbortHandler) })
	w := te.send("GET", "/bug", http.Header{"X-Request-Id": {"bug-1"}}, nil)
	got := map[string]any{"status": w.Code, "body": w.Body.String(), "type": w.Header().Get("Content-Type"),
		"nosniff": w.Header().Get("X-Content-Type-Options"), "cache": w.Header().Get("Cache-Control")}
	want := map[string]any{"status": http.StatusInternalServerError, "body": `{"error":"Internal server error"}`, "type": "application/json",
		"nosniff": "nosniff", "cache": "no-store"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a panic's answer (-want +got):\n%s", diff)
	}
	for _, s := range []string{`msg="request failed"`, `err="panic: boom"`, "request_id=bug-1"} {
		if !strings.Contains(te.log.String(), s) {
			t.Errorf("the log lacks %s:\n%s", s, te.log.String())
		}
	}
	func() {
		defer func() {
			if r := recover(); r != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler", r)
			}
		}()
		te.send("GET", "/abort", nil, nil)
	}()
}

// TestRequestID checks the X-Request-Id of responses: a sane id the client
// sent is echoed, any other is replaced by a generated one.
func TestRequestID(t *testing.T) {
	te := newEcho(t)
	te.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	longest := strings.Repeat("a", web.MaxRequestID)
	tests := []struct {
		name, sent string
		echoed     bool
	}{
		{"none", "", false},
		{"uuid", "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13", true},
		{"base64 and colons", "trace:AbC+/9=.x_y", true},
		{"longest", longest, true},
		{"too long", longest + "a", false},
		{"space", "a b", false},
		{"semicolon", "a;b", false},
		{"markup", "<script>", false},
		{"non-ASCII", "réq", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.sent != "" {
				h.Set("X-Request-Id", tt.sent)
			}
			got := te.send("GET", "/healthz", h, nil).Header().Get("X-Request-Id")
			if tt.echoed {
				if got != tt.sent {
					t.Errorf("X-Request-Id = %q, want %q echoed", got, tt.sent)
				}
				return
			}
			if len(got) != 16 || strings.Trim(got, "0123456789abcdef") != "" {
				t.Errorf("X-Request-Id = %q, want 16 generated hex digits", got)
			}
		})
	}
	a := te.send("GET", "/healthz", nil, nil).Header().Get("X-Request-Id")
	b := te.send("GET", "/healthz", nil, nil).Header().Get("X-Request-Id")
	if a == b {
		t.Errorf("two generated ids are both %q", a)
	}
	if got := te.send("GET", "/nope", http.Header{"X-Request-Id": {"lost-1"}}, nil).Header().Get("X-Request-Id"); got != "lost-1" {
		t.Errorf("a 404's X-Request-Id = %q, want lost-1", got)
	}
}
