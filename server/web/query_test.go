package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseQuery: what url.ParseQuery reads whole, ParseQuery reads the
// same; what url.ParseQuery reads only in part, ParseQuery refuses.
func TestParseQuery(t *testing.T) {
	for _, raw := range []string{
		"", "status=sent", "status=sent&limit=10", "a=1&&b=2&", "q=caf%C3%A9+bar", "limit", "limit=", "=x",
		"x=%2B%26%3D", "type=application.created&type=application.sent",
	} {
		got, err := ParseQuery(raw)
		want, werr := url.ParseQuery(raw)
		if err != nil || werr != nil {
			t.Errorf("ParseQuery(%q) = %v (url.ParseQuery: %v), want no error", raw, err, werr)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParseQuery(%q) (-url.ParseQuery +got):\n%s", raw, diff)
		}
	}
	for raw, want := range map[string]string{
		"status=submitted%zz":          `Invalid query string: invalid %-escape "%zz"`,
		"status=sent&x=%zz":            `Invalid query string: invalid %-escape "%zz"`,
		"%zz=1":                        `Invalid query string: invalid %-escape "%zz"`,
		"cursor=abc%":                  `Invalid query string: invalid %-escape "%"`,
		"cursor=abc%4":                 `Invalid query string: invalid %-escape "%4"`,
		"status=sent;limit=1":          `Invalid query string: ";" is not a separator (use "&")`,
		"status=%ff":                   "Invalid query string: text must be UTF-8",
		"%c3=1":                        "Invalid query string: text must be UTF-8",
		strings.Repeat("a=1&", 101):    "Invalid query string: more than 100 parameters",
		strings.Repeat("&", 500) + "a": "", // empty parameters do not count
	} {
		_, err := ParseQuery(raw)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ParseQuery(%.40q) = %q, want %q", raw, got, want)
		}
	}
}

func TestSingleParam(t *testing.T) {
	q := url.Values{"a": {"1"}, "e": {""}, "d": {"1", "2"}}
	for _, tt := range []struct {
		name, value string
		given       bool
		err         string
	}{
		{"a", "1", true, ""},
		{"e", "", true, ""},
		{"absent", "", false, ""},
		{"d", "", false, `Invalid query string: duplicate parameter "d"`},
	} {
		v, given, err := SingleParam(q, tt.name)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if v != tt.value || given != tt.given || got != tt.err {
			t.Errorf("SingleParam(%q) = %q, %v, %q; want %q, %v, %q", tt.name, v, given, got, tt.value, tt.given, tt.err)
		}
	}
}
