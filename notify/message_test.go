package notify

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testNow is the fixed clock of the tests.
func testNow() time.Time {
	return time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
}

// parseMessage parses raw as an RFC 5322 message and returns its headers and
// its decoded quoted-printable body.
func parseMessage(t *testing.T, raw []byte) (mail.Header, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("mail.ReadMessage: %v\n%s", err, raw)
	}
	if got := msg.Header.Get("Content-Transfer-Encoding"); got != "quoted-printable" {
		t.Fatalf("Content-Transfer-Encoding = %q", got)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("decoding body: %v", err)
	}
	return msg.Header, string(body)
}

// crlf converts a test's \n line endings to the wire's CRLF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestFormatMessageGolden(t *testing.T) {
	from := &mail.Address{Name: "Onboarding", Address: "no-reply@example.com"}
	to := &mail.Address{Name: "Ada Lovelace", Address: "ada@example.org"}
	text := "Hello Ada,\n\nContinue at https://onboard.example/a/b?code=x=y\n" +
		"Trailing space \n" + strings.Repeat("long ", 20) + "line\n"
	got := string(formatMessage(from, to, "Your invitation", text, testNow(), "<abc@example.com>"))
	want := crlf(`From: "Onboarding" <no-reply@example.com>
To: "Ada Lovelace" <ada@example.org>
Subject: Your invitation
Date: Thu, 02 Jan 2025 03:04:05 +0100
Message-ID: <abc@example.com>
MIME-Version: 1.0
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: quoted-printable

Hello Ada,

Continue at https://onboard.example/a/b?code=3Dx=3Dy
Trailing space=20
long long long long long long long long long long long long long long long =
long long long long long line
`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("formatMessage (-want +got):\n%s", diff)
	}
}

func TestComposeHeadersAndBody(t *testing.T) {
	from, err := parseFrom("Onboarding <no-reply@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	m := Email{
		To: "ada@example.org", ToName: "Ada", Subject: "Hi",
		Text: "line one\r\nline two", Link: "https://x.example/l",
	}
	to, raw, err := compose(from, m, testNow())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&mail.Address{Name: "Ada", Address: "ada@example.org"}, to); diff != "" {
		t.Errorf("recipient (-want +got):\n%s", diff)
	}
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) ||
		bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\r")) {
		t.Errorf("message has a bare CR or LF:\n%q", raw)
	}
	h, body := parseMessage(t, raw)
	if diff := cmp.Diff("line one\r\nline two\r\n", body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if id := h.Get("Message-ID"); !regexp.MustCompile(`^<[0-9a-f]{32}@example\.com>$`).MatchString(id) {
		t.Errorf("Message-ID = %q, want random hex @example.com", id)
	}
	date, err := h.Date()
	if err != nil || !date.Equal(testNow()) {
		t.Errorf("Date = %v, %v; want %v", date, err, testNow())
	}
	_, raw2, err := compose(from, m, testNow())
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := parseMessage(t, raw2)
	if h.Get("Message-ID") == h2.Get("Message-ID") {
		t.Errorf("two messages share Message-ID %s", h.Get("Message-ID"))
	}
}

func TestComposeNonASCII(t *testing.T) {
	from, err := parseFrom("Équipe d’accueil <no-reply@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		toName  string
		subject string
	}{
		{"short", "Zoë Ångström", "Vérifiez votre adresse"},
		{"long subject folds", "Zoë", strings.Repeat("Bienvenue chez Société Générale Ürsprung — ", 4) + "fin"},
		{"long name folds", strings.Repeat("Zoë Ångström-Łukasiewicz ", 5) + "Jr", "ok"},
		{"long ASCII subject folds", "Ada", strings.Repeat("please verify your email address ", 6) + "now"},
		{"ASCII specials in name", `Ada "the Countess" Lovelace, Esq.`, "Re: [x] 100% done"},
		{"empty name", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Email{To: "zoe@example.org", ToName: tt.toName, Subject: tt.subject, Text: "Grüße 👋\n"}
			_, raw, err := compose(from, m, testNow())
			if err != nil {
				t.Fatal(err)
			}
			head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
			for _, line := range strings.Split(string(head), "\r\n") {
				if len(line) > 78 && strings.Contains(line, "=?") {
					t.Errorf("header line of %d bytes not folded: %q", len(line), line)
				}
				for _, r := range line {
					if r > 0x7e || r < 0x20 && r != '\t' {
						t.Fatalf("non-ASCII or control character %q in header line %q", r, line)
					}
				}
			}
			h, body := parseMessage(t, raw)
			var dec mime.WordDecoder
			subject, err := dec.DecodeHeader(h.Get("Subject"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.subject, subject); diff != "" {
				t.Errorf("Subject (-want +got):\n%s", diff)
			}
			to, err := h.AddressList("To")
			if err != nil {
				t.Fatalf("To %q: %v", h.Get("To"), err)
			}
			want := []*mail.Address{{Name: tt.toName, Address: "zoe@example.org"}}
			if diff := cmp.Diff(want, to); diff != "" {
				t.Errorf("To (-want +got):\n%s", diff)
			}
			fromList, err := h.AddressList("From")
			if err != nil || len(fromList) != 1 || fromList[0].Name != "Équipe d’accueil" {
				t.Errorf("From = %v, %v", fromList, err)
			}
			if diff := cmp.Diff("Grüße 👋\r\n", body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComposeRefusesHeaderInjection(t *testing.T) {
	from, err := parseFrom("no-reply@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ok := Email{To: "ada@example.org", ToName: "Ada", Subject: "Hi", Text: "body\nwith lines\r\n"}
	tests := []struct {
		name string
		edit func(*Email)
		want string
	}{
		{"LF in To", func(m *Email) { m.To = "ada@example.org\nBcc: eve@example.org" }, "recipient address contains a line break"},
		{"CR in To", func(m *Email) { m.To = "ada@example.org\r" }, "recipient address contains a line break"},
		{"CRLF in ToName", func(m *Email) { m.ToName = "Ada\r\nBcc: eve@example.org" }, "recipient name contains a line break"},
		{"LF in Subject", func(m *Email) { m.Subject = "Hi\nBcc: eve@example.org" }, "subject contains a line break"},
		{"CR in Subject", func(m *Email) { m.Subject = "Hi\rthere" }, "subject contains a line break"},
		{"NUL in Subject", func(m *Email) { m.Subject = "Hi\x00" }, "subject contains a line break or NUL"},
		{"two recipients", func(m *Email) { m.To = "ada@example.org, eve@example.org" }, "is not valid"},
		{"name in To", func(m *Email) { m.To = "Eve <eve@example.org>" }, "must be an address only"},
		{"not an address", func(m *Email) { m.To = "ada" }, "is not valid"},
		{"right-to-left override in To", func(m *Email) { m.To = "ada\u202e@example.org" }, `recipient address "ada\u202e@example.org" contains a format`},
		{"zero-width space in To", func(m *Email) { m.To = "ada@exa\u200bmple.org" }, "contains a format, separator or private-use character"},
		{"no-break space in To", func(m *Email) { m.To = "ada\u00a0@example.org" }, "contains a format, separator or private-use character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ok
			tt.edit(&m)
			_, _, err := compose(from, m, testNow())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("compose error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, _, err := compose(from, ok, testNow()); err != nil {
		t.Errorf("valid message refused: %v", err)
	}
}

func TestParseFrom(t *testing.T) {
	tests := []struct {
		from    string
		want    *mail.Address
		wantErr string
	}{
		{from: "no-reply@example.com", want: &mail.Address{Address: "no-reply@example.com"}},
		{from: "Onboarding <no-reply@example.com>", want: &mail.Address{Name: "Onboarding", Address: "no-reply@example.com"}},
		{from: "", wantErr: "empty"},
		{from: "   ", wantErr: "empty"},
		{from: "no-reply", wantErr: "not valid"},
		{from: "a@example.com, b@example.com", wantErr: "not valid"},
		{from: "a@example.com\r\nBcc: b@example.com", wantErr: "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			got, err := parseFrom(tt.from)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFrom(%q) error = %v, want %q", tt.from, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseFrom (-want +got):\n%s", diff)
			}
		})
	}
}
