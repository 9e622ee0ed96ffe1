// Package webtest holds checks that the tests of server/web and of the
// routers built on it share. Only tests import it.
package webtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// HeadOverTheWire serves h through a real HTTP server, which frames the
// answer itself, and checks that HEAD of each path gets the GET's status,
// the whole length of the GET's body as Content-Length (even when it is
// larger than the server's buffer), and no chunked body.
func HeadOverTheWire(t *testing.T, h http.Handler, paths ...string) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	for _, path := range paths {
		get, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(get.Body)
		get.Body.Close()
		head, err := http.Head(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		head.Body.Close()
		got := []any{head.StatusCode, head.ContentLength, head.TransferEncoding}
		want := []any{get.StatusCode, int64(body.Len()), []string(nil)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("HEAD %s: status, Content-Length, Transfer-Encoding (-want +got):\n%s", path, diff)
		}
	}
}
