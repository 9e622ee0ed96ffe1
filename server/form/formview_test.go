package form

import (
	"net/url"
	"testing"

	"onboard/onboarding"
)

// TestBindWebAddress: a web address typed without its scheme is saved
// with https://; anything else is left for the field's check to judge.
func TestBindWebAddress(t *testing.T) {
	f, ok := onboarding.StandardForm().Field("website")
	if !ok {
		t.Fatal("the standard form has no website")
	}
	for _, tc := range []struct{ typed, want string }{
		{"northwind.example", `"https://northwind.example"`},
		{"www.northwind.example/about", `"https://www.northwind.example/about"`},
		{"http://northwind.example", `"http://northwind.example"`},
		{"northwind", `"northwind"`},
		{"jo@northwind.example", `"jo@northwind.example"`},
		{"not a url.example", `"not a url.example"`},
		{"", `""`},
	} {
		if got := string(bindField(f, "website", url.Values{"website": {tc.typed}})); got != tc.want {
			t.Errorf("%q binds as %s, want %s", tc.typed, got, tc.want)
		}
	}
}
