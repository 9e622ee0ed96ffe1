package onboarding

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"
)

func TestValidEmail(t *testing.T) {
	for s, want := range map[string]bool{
		"jane@example.com":             true,
		"jane.smith+kyb@example.co.uk": true,
		"j@e.io":                       true,
		"jane@example":                 false,
		"jane@.example.com":            false,
		"jane@example.com.":            false,
		"@example.com":                 false,
		"jane":                         false,
		"Jane <jane@example.com>":      false,
		"jane@exa mple.com":            false,
		"jane@@example.com":            false,
		strings.Repeat("a", 250) + "@example.com": false,
	} {
		if got := validEmail(s); got != want {
			t.Errorf("validEmail(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCursor(t *testing.T) {
	seq := ulid.Make()
	for _, st := range []Status{"", StatusSent} {
		c := encodeCursor(seq, string(st))
		got, err := decodeCursor(c, string(st))
		if err != nil || got != seq {
			t.Errorf("decodeCursor(encodeCursor(%s, %q)) = %s, %v", seq, st, got, err)
		}
		other := StatusCreated
		if st == StatusCreated {
			other = ""
		}
		if _, err := decodeCursor(c, string(other)); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("cursor for %q accepted with filter %q", st, other)
		}
	}
	for _, bad := range []string{"", "!!!", "AAAA", encodeCursor(ulid.ULID{}, "")} {
		if _, err := decodeCursor(bad, ""); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("decodeCursor(%q) = %v, want ErrInvalidCursor", bad, err)
		}
	}
}

func TestParseScopes(t *testing.T) {
	got, all, err := parseScopes(nil)
	if err != nil || !all || len(got) != len(AllScopes()) {
		t.Errorf("parseScopes(nil) = %v, %v, %v; want all", got, all, err)
	}
	got, all, err = parseScopes([]string{"applications:read,applications:write", "applications:read"})
	if diff := cmp.Diff([]Scope{ScopeApplicationsRead, ScopeApplicationsWrite}, got); diff != "" || all || err != nil {
		t.Errorf("parseScopes(comma list) (-want +got):\n%s %v %v", diff, all, err)
	}
	_, _, err = parseScopes([]string{"admin"})
	if want := "unknown scope 'admin' (valid scopes: applications:create, applications:read, applications:write, rfi:create, events:read, rfi:read)"; err == nil || err.Error() != want {
		t.Errorf("parseScopes(admin) = %v, want %q", err, want)
	}
}

func TestRandomStringIsUniformAndAlphanumeric(t *testing.T) {
	counts := map[byte]int{}
	const n = 62 * 2000
	s, err := randomString(rand.Reader, n, alphanumeric)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	if len(counts) != 62 {
		t.Fatalf("%d distinct characters, want 62", len(counts))
	}
	for c, k := range counts {
		if k < 1600 || k > 2400 { // expected 2000, sd ≈ 44
			t.Errorf("character %q drawn %d times of %d; the draw is biased", c, k, n)
		}
	}
	if _, err := randomString(bytes.NewReader(nil), 4, alphanumeric); err == nil {
		t.Errorf("randomString with an empty reader succeeded")
	}
}

func TestErrMissingScopes(t *testing.T) {
	if got, want := ErrMissingScopes(ScopeApplicationsRead, ScopeRFICreate).Error(), "API key missing required scopes: applications:read, rfi:create"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStatusRules(t *testing.T) {
	for _, st := range Statuses() {
		p, err := ParseStatus(string(st))
		if err != nil || p != st {
			t.Errorf("ParseStatus(%s) = %s, %v", st, p, err)
		}
	}
	writable := map[Status]bool{StatusCreated: true, StatusSent: true, StatusInProgress: true}
	terminal := map[Status]bool{StatusApproved: true, StatusRejected: true}
	for _, st := range Statuses() {
		if st.Writable() != writable[st] || st.Terminal() != terminal[st] {
			t.Errorf("%s: Writable %v Terminal %v", st, st.Writable(), st.Terminal())
		}
	}
}

func TestCleanFileName(t *testing.T) {
	for _, tt := range []struct{ name, fileType, want string }{
		{`C:\scans\cert.pdf`, "application/pdf", "cert.pdf"},
		{"../../etc/passwd", "", "passwd"},
		{"a\x00b.pdf", "", "ab.pdf"},
		{"invoice\u202efdp.exe", "", "invoicefdp.exe"},
		{"\u2066report\u2069.pdf", "", "report.pdf"},
		{"caf\xe9.pdf", "", "caf.pdf"},
		{"..", "image/png", "document.png"},
		{"", "image/heic", "document.heic"},
		{"straße 😀.pdf", "", "straße 😀.pdf"},
	} {
		if got := cleanFileName(tt.name, tt.fileType); got != tt.want {
			t.Errorf("cleanFileName(%q, %q) = %q, want %q", tt.name, tt.fileType, got, tt.want)
		}
	}
}
