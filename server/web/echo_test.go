package web_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"onboard/server/web"
)

// testEcho is an echo instance with the package's plumbing in the order
// the server puts it (HEAD before routing, then request id, base headers
// and panic recovery, with the JSON error handler), and the log the error
// handler writes.
type testEcho struct {
	*echo.Echo
	log bytes.Buffer
}

// newEcho returns a testEcho whose routes with a HEAD route of their own
// are ownHead.
func newEcho(t *testing.T, ownHead ...string) *testEcho {
	t.Helper()
	te := &testEcho{Echo: echo.New()}
	te.HideBanner, te.HidePort = true, true
	te.HTTPErrorHandler = web.ErrorHandler(slog.New(slog.NewTextHandler(&te.log, nil)))
	own := map[string]bool{}
	for _, p := range ownHead {
		own[p] = true
	}
	te.Pre(web.HeadAsGet(te.Echo, func(pattern string) bool { return own[pattern] }))
	te.Use(web.RequestID, web.BaseHeaders, web.RecoverPanic)
	return te
}

// send serves one request and returns its recorded answer.
func (te *testEcho) send(method, path string, header http.Header, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, body)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	te.ServeHTTP(w, r)
	return w
}

// failWith is a handler that returns err.
func failWith(err error) echo.HandlerFunc {
	return func(echo.Context) error { return err }
}
