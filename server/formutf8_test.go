package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"onboard/server/form"
)

// A form post that cannot be read (text that is not UTF-8, a broken
// %-escape, more than 10,000 parameters, a body cut short) answers 400
// with a page saying so, not "page expired", and stores nothing.
func TestFormPostUnreadable(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	a.get("/s/business")
	csrf := url.QueryEscape(a.csrf)
	many := strings.Repeat("&x=1", 10_001)
	for name, body := range map[string]string{
		"a value not UTF-8":            "csrf=" + csrf + "&action=save&business_description=Shoes+%ff%fe+and+socks",
		"a name not UTF-8":             "csrf=" + csrf + "&action=save&business_description=Shoes&%c3=1",
		"a broken escape":              "csrf=" + csrf + "&action=save&business_description=Shoes+%zz",
		"over 10,000 parameters":       "csrf=" + csrf + "&action=save&business_description=Shoes" + many,
		"a body cut short (simulated)": "",
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("POST", a.base+"/s/business", strings.NewReader(body))
			if body == "" {
				r = httptest.NewRequest("POST", a.base+"/s/business", &failingReader{strings.NewReader("csrf=" + csrf + "&business_desc"), io.ErrUnexpectedEOF})
			}
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			csrfBefore := a.csrf
			w := a.send(r)
			a.csrf = csrfBefore
			wantPage(t, w, http.StatusBadRequest, form.ErrPostUnreadable.Message)
			if v := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)["business_description"]; v != nil {
				t.Errorf("business_description = %q after a refused save", v)
			}
		})
	}
	// A post of the same form in UTF-8 is saved.
	wantRedirect(t, a.post("/s/business", url.Values{"business_description": {"Shoes é and socks"}, "action": {"save"}}), a.base+"?done=saved")
}
