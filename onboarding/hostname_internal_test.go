package onboarding

import "testing"

func TestHostName(t *testing.T) {
	tests := map[string]string{
		"onboard.example":          "onboard.example",
		"Onboard.Example.":         "onboard.example",
		"onboard.example.:443":     "onboard.example",
		"onboard.example:8080":     "onboard.example",
		"onboard.example..":        "onboard.example.", // one dot only: the name stays wrong
		" onboard.example ":        "onboard.example",
		"[::1]:8080":               "[::1]",
		"[::1]":                    "[::1]",
		"":                         "",
		"127.0.0.1:80":             "127.0.0.1",
		"xn--bcher-kva.example.:1": "xn--bcher-kva.example",
	}
	for in, want := range tests {
		if got := hostName(in); got != want {
			t.Errorf("hostName(%q) = %q, want %q", in, got, want)
		}
	}
}
