package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"onboard/server/web"
)

// TestWriteJSONEncodesAsEncodingJSON checks that WriteJSON sends the
// bytes encoding/json would (HTML escaping, sorted map keys, null for a
// nil slice, omitempty, times in RFC 3339, no trailing newline), with the
// status, Content-Type and Content-Length.
func TestWriteJSONEncodesAsEncodingJSON(t *testing.T) {
	type item struct {
		Name    string    `json:"name"`
		Note    string    `json:"note,omitempty"`
		Tags    []string  `json:"tags"`
		At      time.Time `json:"at"`
		Skipped int       `json:"-"`
	}
	values := map[string]any{
		"struct":  item{Name: "<a & b>", Tags: nil, At: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), Skipped: 1},
		"map":     map[string]any{"z": 1, "a": []any{true, nil, 1.5}, "m": "é\u2028"},
		"error":   web.ErrorBody{Error: "Invalid field values — x: y", Details: map[string]string{"x": "y"}},
		"nothing": nil,
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			te := newEcho(t)
			te.GET("/v", func(c echo.Context) error { return web.WriteJSON(c, http.StatusAccepted, v) })
			w := te.send("GET", "/v", nil, nil)
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{w.Code, w.Header().Get("Content-Type"), w.Header().Get("Content-Length"), w.Body.String()}
			if diff := cmp.Diff([]any{http.StatusAccepted, "application/json", strconv.Itoa(len(want)), string(want)}, got); diff != "" {
				t.Errorf("status, Content-Type, Content-Length, body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteJSONFailure checks that a value JSON cannot encode is the
// 500 answer, not half a body.
func TestWriteJSONFailure(t *testing.T) {
	te := newEcho(t)
	te.GET("/v", func(c echo.Context) error {
		return web.WriteJSON(c, http.StatusOK, map[string]any{"c": make(chan int)})
	})
	w := te.send("GET", "/v", nil, nil)
	if diff := cmp.Diff([]any{http.StatusInternalServerError, `{"error":"Internal server error"}`}, []any{w.Code, w.Body.String()}); diff != "" {
		t.Errorf("status, body (-want +got):\n%s", diff)
	}
}

// TestWriteRawJSONIsNotChunked checks over the wire that a JSON answer
// larger than net/http's chunking threshold still goes with its
// Content-Length.
func TestWriteRawJSONIsNotChunked(t *testing.T) {
	te := newEcho(t)
	body := []byte(`{"padding":"` + strings.Repeat("x", 8<<10) + `"}`)
	te.GET("/v", func(c echo.Context) error { return web.WriteRawJSON(c, http.StatusOK, body) })
	ts := httptest.NewServer(te)
	t.Cleanup(ts.Close)
	res, err := http.Get(ts.URL + "/v")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{int64(len(body)), []string(nil), string(body)}, []any{res.ContentLength, res.TransferEncoding, string(got)}); diff != "" {
		t.Errorf("Content-Length, Transfer-Encoding, body (-want +got):\n%s", diff)
	}
}
