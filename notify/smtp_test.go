package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testUser = "mailer"
	testPass = "s3cret/p@ss" // in URLs: s3cret%2Fp%40ss
)

// testMessage is the message the SMTP tests send.
func testMessage() Email {
	return Email{
		To: "ada@example.org", ToName: "Ada Lovelace",
		Subject: "Your invitation",
		Text:    "Hello Ada,\n\nContinue at https://onboard.example/i/abc\n.\nEnd.\n",
		Link:    "https://onboard.example/i/abc",
	}
}

// newTestSMTP returns a transport for rawURL that trusts pool.
func newTestSMTP(t *testing.T, rawURL string, pool *x509.CertPool, timeout time.Duration) *SMTP {
	t.Helper()
	s, err := NewSMTP(rawURL, "Onboarding <no-reply@example.com>", SMTPOptions{
		Timeout:   timeout,
		TLSConfig: &tls.Config{RootCAs: pool},
		Now:       testNow,
	})
	if err != nil {
		t.Fatalf("NewSMTP: %v", err)
	}
	return s
}

// credURL is an smtp URL with the test credentials for addr.
func credURL(scheme, addr string) string {
	return scheme + "://" + testUser + ":s3cret%2Fp%40ss@" + addr
}

// checkDelivered asserts that ss carries testMessage, decoded.
func checkDelivered(t *testing.T, ss session) {
	t.Helper()
	if ss.From != "no-reply@example.com" {
		t.Errorf("MAIL FROM = %q", ss.From)
	}
	if diff := cmp.Diff([]string{"ada@example.org"}, ss.Rcpt); diff != "" {
		t.Errorf("RCPT TO (-want +got):\n%s", diff)
	}
	h, body := parseMessage(t, ss.Data)
	got := map[string]string{}
	for _, k := range []string{"From", "To", "Subject", "Date", "Mime-Version", "Content-Type"} {
		got[k] = h.Get(k)
	}
	want := map[string]string{
		"From":         `"Onboarding" <no-reply@example.com>`,
		"To":           `"Ada Lovelace" <ada@example.org>`,
		"Subject":      "Your invitation",
		"Date":         "Thu, 02 Jan 2025 03:04:05 +0100",
		"Mime-Version": "1.0",
		"Content-Type": "text/plain; charset=UTF-8",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(h.Get("Message-ID"), "@example.com>") {
		t.Errorf("Message-ID = %q", h.Get("Message-ID"))
	}
	if diff := cmp.Diff(crlf(testMessage().Text), body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestSMTPSend(t *testing.T) {
	cert, pool := testCert(t)
	tests := []struct {
		name     string
		cfg      serverConfig
		scheme   string
		auth     bool
		loopback bool // what the transport believes of the server's address
		wantCmds []string
		wantTLS  bool
	}{
		{
			name:     "STARTTLS and AUTH",
			cfg:      serverConfig{startTLS: true, auth: true},
			scheme:   "smtp",
			auth:     true,
			loopback: true,
			wantCmds: []string{"EHLO", "STARTTLS", "EHLO", "AUTH", "MAIL", "RCPT", "DATA", "QUIT"},
			wantTLS:  true,
		},
		{
			name:     "STARTTLS required and offered off loopback",
			cfg:      serverConfig{startTLS: true, auth: true},
			scheme:   "smtp",
			auth:     true,
			loopback: false,
			wantCmds: []string{"EHLO", "STARTTLS", "EHLO", "AUTH", "MAIL", "RCPT", "DATA", "QUIT"},
			wantTLS:  true,
		},
		{
			name:     "implicit TLS and AUTH",
			cfg:      serverConfig{implicitTLS: true, auth: true},
			scheme:   "smtps",
			auth:     true,
			loopback: false,
			wantCmds: []string{"EHLO", "AUTH", "MAIL", "RCPT", "DATA", "QUIT"},
			wantTLS:  true,
		},
		{
			name:     "plain text on loopback without STARTTLS",
			cfg:      serverConfig{},
			scheme:   "smtp",
			loopback: true,
			wantCmds: []string{"EHLO", "MAIL", "RCPT", "DATA", "QUIT"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.cert, tt.cfg.user, tt.cfg.pass = cert, testUser, testPass
			srv := newTestServer(t, tt.cfg)
			u := tt.scheme + "://" + srv.addr
			if tt.auth {
				u = credURL(tt.scheme, srv.addr)
			}
			s := newTestSMTP(t, u, pool, 5*time.Second)
			s.isLoopback = func(net.Addr) bool { return tt.loopback }
			if err := s.sendEmail(context.Background(), testMessage()); err != nil {
				t.Fatalf("Send: %v", err)
			}
			ss := srv.session(t)
			if diff := cmp.Diff(tt.wantCmds, ss.Commands); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if ss.TLS != tt.wantTLS {
				t.Errorf("TLS = %v, want %v", ss.TLS, tt.wantTLS)
			}
			if tt.auth {
				if ss.AuthUser != testUser || ss.AuthPass != testPass {
					t.Errorf("AUTH got %q/%q, want %q/%q", ss.AuthUser, ss.AuthPass, testUser, testPass)
				}
				if !ss.AuthOverTLS {
					t.Error("credentials were sent before TLS")
				}
				plainAuth := base64.StdEncoding.EncodeToString([]byte("\x00" + testUser + "\x00" + testPass))
				if strings.Contains(ss.Plain, plainAuth) || strings.Contains(ss.Plain, testPass) {
					t.Errorf("password crossed in clear text:\n%s", ss.Plain)
				}
			}
			checkDelivered(t, ss)
		})
	}
}

func TestSMTPRefusesPlainTextOffLoopback(t *testing.T) {
	cert, pool := testCert(t)
	srv := newTestServer(t, serverConfig{cert: cert, auth: true, user: testUser, pass: testPass})
	s := newTestSMTP(t, credURL("smtp", srv.addr), pool, 5*time.Second)
	s.isLoopback = func(net.Addr) bool { return false }
	err := s.sendEmail(context.Background(), testMessage())
	if err == nil || !strings.Contains(err.Error(), "STARTTLS: server does not offer STARTTLS") {
		t.Fatalf("Send error = %v, want a refusal naming STARTTLS", err)
	}
	ss := srv.session(t)
	if diff := cmp.Diff([]string{"EHLO"}, ss.Commands); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if ss.AuthUser != "" || strings.Contains(ss.Plain, "AUTH") {
		t.Errorf("credentials were sent without TLS:\n%s", ss.Plain)
	}
}

func TestSMTPRefusesUntrustedCertificate(t *testing.T) {
	cert, _ := testCert(t)
	_, otherPool := testCert(t)
	srv := newTestServer(t, serverConfig{cert: cert, startTLS: true, auth: true, user: testUser, pass: testPass})
	s := newTestSMTP(t, credURL("smtp", srv.addr), otherPool, 5*time.Second)
	err := s.sendEmail(context.Background(), testMessage())
	var uae x509.UnknownAuthorityError
	if !errors.As(err, &uae) || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("Send error = %v, want an unknown-authority error naming STARTTLS", err)
	}
	if ss := srv.session(t); ss.AuthUser != "" {
		t.Errorf("credentials sent to an untrusted server")
	}
}

func TestSMTPRejections(t *testing.T) {
	cert, pool := testCert(t)
	tests := []struct {
		step     string // the server's step to refuse
		reply    string
		pass     string // password in the URL, percent-encoded
		wantStep string
		wantCode int
	}{
		{step: "connect", reply: "554 5.3.2 no service for you", wantStep: "connect", wantCode: 554},
		{step: "STARTTLS", reply: "454 4.7.0 TLS not available", wantStep: "STARTTLS", wantCode: 454},
		{step: "AUTH", reply: "535 5.7.8 authentication failed", wantStep: "AUTH", wantCode: 535},
		{step: "none", pass: "wrong%2Fpass", wantStep: "AUTH", wantCode: 535},
		{step: "MAIL", reply: "550 5.7.1 sender rejected", wantStep: "MAIL FROM", wantCode: 550},
		{step: "RCPT", reply: "550 5.1.1 no such user", wantStep: "RCPT TO", wantCode: 550},
		{step: "DATA", reply: "554 5.3.0 no data today", wantStep: "DATA", wantCode: 554},
		{step: "DATA-END", reply: "552 5.3.4 message too big", wantStep: "DATA", wantCode: 552},
	}
	for _, tt := range tests {
		t.Run(tt.step+"/"+tt.wantStep, func(t *testing.T) {
			srv := newTestServer(t, serverConfig{
				cert: cert, startTLS: true, auth: true, user: testUser, pass: testPass,
				reject: map[string]string{tt.step: tt.reply},
			})
			pass := tt.pass
			if pass == "" {
				pass = "s3cret%2Fp%40ss"
			}
			s := newTestSMTP(t, "smtp://"+testUser+":"+pass+"@"+srv.addr, pool, 5*time.Second)
			err := s.sendEmail(context.Background(), testMessage())
			if err == nil {
				t.Fatal("Send succeeded")
			}
			var te *textproto.Error
			if !errors.As(err, &te) || te.Code != tt.wantCode {
				t.Errorf("Send error = %v, want server code %d", err, tt.wantCode)
			}
			want := "notify: smtp " + srv.addr + ": " + tt.wantStep + ": " + strconv.Itoa(tt.wantCode) + " "
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Send error = %q, want prefix %q", err, want)
			}
			if _, text, _ := strings.Cut(tt.reply, " "); !strings.Contains(err.Error(), text) {
				t.Errorf("Send error = %q, want the server's text %q", err, text)
			}
			for _, secret := range []string{testPass, "s3cret", "wrong/pass", "wrong"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q reveals the password", err)
				}
			}
			srv.session(t)
		})
	}
}

func TestSMTPSilentServerTimesOut(t *testing.T) {
	_, pool := testCert(t)
	tests := []struct {
		name    string
		scheme  string
		timeout time.Duration
		cancel  time.Duration // cancel the caller's context after this; 0 = never
		want    error
	}{
		{"smtp deadline", "smtp", 300 * time.Millisecond, 0, context.DeadlineExceeded},
		{"smtps deadline", "smtps", 300 * time.Millisecond, 0, context.DeadlineExceeded},
		{"caller cancels", "smtp", 10 * time.Second, 200 * time.Millisecond, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, serverConfig{silent: true})
			s := newTestSMTP(t, tt.scheme+"://"+srv.addr, pool, tt.timeout)
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				time.AfterFunc(tt.cancel, cancel)
			}
			start := time.Now()
			err := s.sendEmail(ctx, testMessage())
			elapsed := time.Since(start)
			if !errors.Is(err, tt.want) {
				t.Errorf("Send error = %v, want %v", err, tt.want)
			}
			if elapsed > 2*time.Second {
				t.Errorf("Send took %v against a silent server", elapsed)
			}
			if err != nil && !strings.Contains(err.Error(), srv.addr) {
				t.Errorf("error %q does not name the server", err)
			}
		})
	}
}

func TestSMTPRefusesHeaderInjectionBeforeConnecting(t *testing.T) {
	// Nothing listens: a refusal must come from composing, not dialing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := newTestSMTP(t, "smtp://"+addr, nil, time.Second)
	m := testMessage()
	m.Subject = "Hi\r\nBcc: eve@example.org"
	err = s.sendEmail(context.Background(), m)
	if err == nil || !strings.Contains(err.Error(), "subject contains a line break") {
		t.Fatalf("Send error = %v, want a header injection refusal", err)
	}
}

func TestNewSMTP(t *testing.T) {
	type conn struct {
		Addr, Host, User, Pass string
		ImplicitTLS            bool
	}
	tests := []struct {
		url     string
		want    conn
		wantErr string
	}{
		{url: "smtp://mail.example.com", want: conn{Addr: "mail.example.com:587", Host: "mail.example.com"}},
		{url: "smtp://mail.example.com:25/", want: conn{Addr: "mail.example.com:25", Host: "mail.example.com"}},
		{url: "SMTP://mail.example.com:2525", want: conn{Addr: "mail.example.com:2525", Host: "mail.example.com"}},
		{url: "smtps://mail.example.com", want: conn{Addr: "mail.example.com:465", Host: "mail.example.com", ImplicitTLS: true}},
		{url: "smtp://u:secret@mail.example.com:587", want: conn{Addr: "mail.example.com:587", Host: "mail.example.com", User: "u", Pass: "secret"}},
		{url: "smtps://apikey%40x:se%2Fc%3Aret%40@mail.example.com", want: conn{Addr: "mail.example.com:465", Host: "mail.example.com", User: "apikey@x", Pass: "se/c:ret@", ImplicitTLS: true}},
		{url: "smtp://[::1]:25", want: conn{Addr: "[::1]:25", Host: "::1"}},
		{url: "smtp://127.0.0.1", want: conn{Addr: "127.0.0.1:587", Host: "127.0.0.1"}},

		{url: "", wantErr: "no scheme"},
		{url: "mail.example.com", wantErr: "no scheme"},
		{url: "http://mail.example.com", wantErr: `scheme "http" is not supported`},
		{url: "smtp:mail.example.com:587", wantErr: "must be of the form smtp://host:port"},
		{url: "smtp://", wantErr: "no host"},
		{url: "smtp://:587", wantErr: "no host"},
		{url: "smtp://u:secret@:587", wantErr: "no host"},
		{url: "smtp://mail.example.com:0", wantErr: `port "0"`},
		{url: "smtp://mail.example.com:70000", wantErr: `port "70000"`},
		{url: "smtp://mail.example.com:abc", wantErr: "not valid"},
		{url: "smtp://u:sec/ret@mail.example.com:587", wantErr: "must be percent-encoded"},
		{url: "smtp://u:sec#ret@mail.example.com", wantErr: "must be percent-encoded"},
		{url: "smtp://u:sec%zzret@mail.example.com", wantErr: "must be percent-encoded"},
		{url: "smtp://u:secret word@mail.example.com", wantErr: "must be percent-encoded"},
		{url: "smtp://u@mail.example.com", wantErr: "user but no password"},
		{url: "smtp://:secret@mail.example.com", wantErr: "password but no user"},
		{url: "smtp://mail.example.com/path", wantErr: "path, query or fragment"},
		{url: "smtp://mail.example.com?tls=off", wantErr: "path, query or fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			s, err := NewSMTP(tt.url, "no-reply@example.com", SMTPOptions{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewSMTP(%q) error = %v, want %q", tt.url, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "sec") {
					t.Errorf("error %q reveals (part of) the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewSMTP(%q): %v", tt.url, err)
			}
			got := conn{Addr: s.addr, Host: s.host, User: s.user, Pass: s.pass, ImplicitTLS: s.implicitTLS}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NewSMTP(%q) (-want +got):\n%s", tt.url, diff)
			}
			if s.Addr() != tt.want.Addr {
				t.Errorf("Addr() = %q", s.Addr())
			}
		})
	}
}

func TestNewSMTPOptions(t *testing.T) {
	if _, err := NewSMTP("smtp://mail.example.com", "not an address", SMTPOptions{}); err == nil || !strings.Contains(err.Error(), "from address") {
		t.Errorf("bad from: error = %v", err)
	}

	s, err := NewSMTP("smtp://mail.example.com", "Onboarding <no-reply@example.com>", SMTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := struct {
		Timeout    time.Duration
		ServerName string
		LocalName  string
		HasNow     bool
	}{s.timeout, s.tlsConfig.ServerName, s.localName, s.now != nil}
	want := got
	want.Timeout, want.ServerName, want.LocalName, want.HasNow = DefaultSMTPTimeout, "mail.example.com", "localhost", true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}

	mine := &tls.Config{MinVersion: tls.VersionTLS13}
	s, err = NewSMTP("smtps://mail.example.com", "no-reply@example.com", SMTPOptions{TLSConfig: mine, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s.tlsConfig.ServerName != "mail.example.com" || s.tlsConfig.MinVersion != tls.VersionTLS13 || s.timeout != time.Second {
		t.Errorf("options not applied: ServerName %q MinVersion %x timeout %v", s.tlsConfig.ServerName, s.tlsConfig.MinVersion, s.timeout)
	}
	if mine.ServerName != "" {
		t.Errorf("NewSMTP modified the caller's tls.Config")
	}
}
