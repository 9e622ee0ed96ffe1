package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"onboard/onboarding"
)

// DefaultSMTPTimeout bounds one whole SMTP conversation when
// SMTPOptions.Timeout is zero.
const DefaultSMTPTimeout = 10 * time.Second

// SMTPOptions tunes an SMTP transport; the zero value is ready to use.
type SMTPOptions struct {
	// Timeout bounds the whole conversation, from dial to QUIT
	// (default DefaultSMTPTimeout).
	Timeout time.Duration
	// TLSConfig is used for STARTTLS and implicit TLS. When nil, the server
	// certificate is verified against the system roots for the URL's host;
	// when set without ServerName, the URL's host is filled in.
	TLSConfig *tls.Config
	// LocalName is the host name sent with EHLO (default "localhost").
	LocalName string
	// Now is the clock for the Date header (default time.Now).
	Now func() time.Time
}

// SMTP sends mail through an SMTP relay. It implements onboarding.Mailer and
// is safe for concurrent use: each Send is one short conversation.
type SMTP struct {
	implicitTLS bool   // smtps://
	host        string // for TLS verification and PLAIN auth
	addr        string // host:port to dial
	user, pass  string
	from        *mail.Address
	timeout     time.Duration
	tlsConfig   *tls.Config
	localName   string
	now         func() time.Time
	// isLoopback decides whether a server may be spoken to without TLS;
	// tests replace it to exercise the non-loopback rule.
	isLoopback func(net.Addr) bool
}

var _ onboarding.Mailer = (*SMTP)(nil)

// NewSMTP returns a transport for rawURL, either smtp://[user:pass@]host[:port]
// (STARTTLS, port 587 by default) or smtps://[user:pass@]host[:port] (implicit
// TLS, port 465 by default), sending as from, which may carry a display name.
// User and password are percent-decoded; no error it returns contains the
// password.
func NewSMTP(rawURL, from string, opts SMTPOptions) (*SMTP, error) {
	s := &SMTP{
		timeout:    opts.Timeout,
		localName:  opts.LocalName,
		now:        opts.Now,
		isLoopback: isLoopbackAddr,
	}
	if err := s.parseURL(rawURL); err != nil {
		return nil, err
	}
	addr, err := parseFrom(from)
	if err != nil {
		return nil, err
	}
	s.from = addr
	if s.timeout <= 0 {
		s.timeout = DefaultSMTPTimeout
	}
	if s.localName == "" {
		s.localName = "localhost"
	}
	if s.now == nil {
		s.now = time.Now
	}
	if opts.TLSConfig != nil {
		s.tlsConfig = opts.TLSConfig.Clone()
	} else {
		s.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if s.tlsConfig.ServerName == "" {
		s.tlsConfig.ServerName = s.host
	}
	return s, nil
}

// parseURL fills the connection fields of s from rawURL.
func (s *SMTP) parseURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse quotes the URL, and its inner errors can quote part of
		// the password (a "/" in it ends the host); say nothing about them
		// when there is user information.
		if strings.Contains(rawURL, "@") {
			return errors.New("notify: smtp URL is not valid; user and password must be percent-encoded (\"/\" as %2F, \"@\" as %40, \"#\" as %23)")
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("notify: smtp URL is not valid: %w", err)
	}
	var defaultPort string
	switch u.Scheme {
	case "smtp":
		defaultPort = "587"
	case "smtps":
		defaultPort, s.implicitTLS = "465", true
	case "":
		return errors.New("notify: smtp URL has no scheme; use smtp://host:587 (STARTTLS) or smtps://host:465 (implicit TLS)")
	default:
		return fmt.Errorf("notify: smtp URL scheme %q is not supported; use smtp:// (STARTTLS) or smtps:// (implicit TLS)", u.Scheme)
	}
	if u.Opaque != "" {
		return fmt.Errorf("notify: smtp URL must be of the form %s://host:port", u.Scheme)
	}
	s.host = u.Hostname()
	if s.host == "" {
		return errors.New("notify: smtp URL has no host")
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("notify: smtp URL port %q is not a port number", port)
	}
	s.addr = net.JoinHostPort(s.host, port)
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("notify: smtp URL must not have a path, query or fragment")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		switch {
		case s.user == "" && s.pass != "":
			return errors.New("notify: smtp URL has a password but no user")
		case s.user != "" && s.pass == "":
			return errors.New("notify: smtp URL has a user but no password")
		}
	}
	return nil
}

// Addr returns the server as host:port, for logs; it never includes the
// credentials.
func (s *SMTP) Addr() string { return s.addr }

// Send delivers m in one SMTP conversation bounded by the configured timeout
// (and by ctx). Over smtp:// it upgrades with STARTTLS when the server offers
// it and refuses to go on without it unless the server is on a loopback
// address; credentials are only sent over TLS (or to localhost). An error
// names the step that failed and carries the server's reply.
func (s *SMTP) Send(ctx context.Context, m onboarding.Message) error {
	return send(ctx, m, s.sendEmail)
}

// sendEmail delivers e as Send delivers a message.
func (s *SMTP) sendEmail(ctx context.Context, e Email) error {
	to, msg, err := compose(s.from, e, s.now())
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return s.fail(ctx, "connect", err)
	}
	defer conn.Close()
	// The deadline bounds every read and write; cancelling ctx interrupts
	// them at once.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	remote := conn.RemoteAddr()
	if s.implicitTLS {
		tc := tls.Client(conn, s.tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return s.fail(ctx, "TLS handshake", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.host) // reads the greeting
	if err != nil {
		return s.fail(ctx, "connect", err)
	}
	defer c.Close()
	if err := c.Hello(s.localName); err != nil {
		return s.fail(ctx, "EHLO", err)
	}

	if !s.implicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tlsConfig); err != nil {
				return s.fail(ctx, "STARTTLS", err)
			}
		} else if !s.isLoopback(remote) {
			return s.fail(ctx, "STARTTLS", errors.New("server does not offer STARTTLS; refusing to send mail to a non-loopback server without TLS"))
		}
	}
	if s.user != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return s.fail(ctx, "AUTH", errors.New("server does not offer AUTH but the smtp URL has credentials"))
		}
		// PlainAuth itself refuses to send credentials without TLS unless
		// the host is localhost.
		if err := c.Auth(smtp.PlainAuth("", s.user, s.pass, s.host)); err != nil {
			return s.fail(ctx, "AUTH", err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return s.fail(ctx, "MAIL FROM", err)
	}
	if err := c.Rcpt(to.Address); err != nil {
		return s.fail(ctx, "RCPT TO", err)
	}
	w, err := c.Data()
	if err != nil {
		return s.fail(ctx, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		_ = w.Close()
		return s.fail(ctx, "DATA", err)
	}
	if err := w.Close(); err != nil { // the server's verdict on the message
		return s.fail(ctx, "DATA", err)
	}
	// The server has accepted the message: a failed QUIT must not make the
	// caller send it again.
	_ = c.Quit()
	return nil
}

// fail wraps err with the server and the step; when the deadline or the
// caller's context ended the conversation, that cause comes first so that
// errors.Is(err, context.DeadlineExceeded) holds.
func (s *SMTP) fail(ctx context.Context, step string, err error) error {
	ctxErr := ctx.Err()
	if ctxErr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// The connection's deadline is the context's: it can fire a moment
		// before the context reports it.
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("notify: smtp %s: %s: %w (%w)", s.addr, step, ctxErr, err)
	}
	return fmt.Errorf("notify: smtp %s: %s: %w", s.addr, step, err)
}

// isLoopbackAddr reports whether a is a TCP address on the loopback network.
func isLoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
