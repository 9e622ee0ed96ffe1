package form

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The sessions of applicant links, the form's and RFI requests'
// (docs/applicant-form.md): once a participant proved control of their email address
// (or used the partner's pre-auth code), their browser holds a session
// token in an HttpOnly cookie scoped to their link, and every post
// carries a CSRF token derived from the session's secret nonce.
// Before sign-in a browser holds an anonymous session, so that the
// verification pages have CSRF tokens too.

// Lifetimes of form sessions.
const (
	// DefaultSessionTimeout is how long a form session lasts without use,
	// unless Options.SessionTimeout says otherwise; every visit renews it.
	DefaultSessionTimeout = 12 * time.Hour
	// sessionRenewAfter is how old a session may get before a visit
	// issues a fresh token, so that not every request sets a cookie (a
	// quarter of the timeout when that is shorter).
	sessionRenewAfter = 10 * time.Minute
	// minSessionKey is the shortest session key accepted.
	minSessionKey = 32
)

// Session is what a form session token carries.
type Session struct {
	AppID         string
	ParticipantID string // empty for an anonymous session, before sign-in
	Epoch         int    // the participant's session epoch at sign-in
	Issued        time.Time
	Expires       time.Time
	Nonce         string // the secret the session's CSRF token is derived from
}

// Sessions issues and reads form session tokens and the CSRF tokens of
// their pages. The tokens are the whole session: nothing is stored.
type Sessions interface {
	// Issue returns the token of s.
	Issue(s Session) string
	// Read returns the session of a token that Issue made and that has
	// not expired at now; false for anything else.
	Read(token string, now time.Time) (Session, bool)
	// CSRFToken returns the CSRF token of a session's nonce.
	CSRFToken(nonce string) string
}

// SignedSessions are Sessions whose tokens are signed with HMAC-SHA256
// under a secret key, so that they need no storage.
type SignedSessions struct{ key []byte }

// NewSignedSessions returns SignedSessions under key, at least 32 random
// bytes.
func NewSignedSessions(key []byte) (*SignedSessions, error) {
	if len(key) < minSessionKey {
		return nil, errors.New("server: the session key must be at least 32 bytes")
	}
	return &SignedSessions{key: key}, nil
}

// anonymous stands for the participant of a session before sign-in.
const anonymous = "-"

// Issue encodes s as its fields joined by '.', then the HMAC-SHA256 of
// them under the key.
func (k *SignedSessions) Issue(s Session) string {
	participant := s.ParticipantID
	if participant == "" {
		participant = anonymous
	}
	payload := strings.Join([]string{"s1", s.AppID, participant, strconv.Itoa(s.Epoch),
		strconv.FormatInt(s.Issued.Unix(), 10), strconv.FormatInt(s.Expires.Unix(), 10), s.Nonce}, ".")
	return payload + "." + base64.RawURLEncoding.EncodeToString(k.mac("", payload))
}

// Read checks a token's signature and expiry.
func (k *SignedSessions) Read(token string, now time.Time) (Session, bool) {
	if token == "" || len(token) > 512 {
		return Session{}, false
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return Session{}, false
	}
	payload, sig := token[:i], token[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, k.mac("", payload)) {
		return Session{}, false
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 7 || parts[0] != "s1" {
		return Session{}, false
	}
	epoch, err1 := strconv.Atoi(parts[3])
	issued, err2 := strconv.ParseInt(parts[4], 10, 64)
	expires, err3 := strconv.ParseInt(parts[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || !now.Before(time.Unix(expires, 0)) {
		return Session{}, false
	}
	s := Session{AppID: parts[1], ParticipantID: parts[2], Epoch: epoch,
		Issued: time.Unix(issued, 0), Expires: time.Unix(expires, 0), Nonce: parts[6]}
	if s.ParticipantID == anonymous {
		s.ParticipantID = ""
	}
	return s, true
}

// CSRFToken is the HMAC of the nonce under the key, shortened to 18 bytes.
func (k *SignedSessions) CSRFToken(nonce string) string {
	return base64.RawURLEncoding.EncodeToString(k.mac("csrf\x00", nonce)[:18])
}

// mac is the HMAC-SHA256 of prefix and message under the key.
func (k *SignedSessions) mac(prefix, message string) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(prefix))
	m.Write([]byte(message))
	return m.Sum(nil)
}

// validCSRF reports whether got is the CSRF token want, in constant time.
func validCSRF(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// newNonce returns a fresh session secret: 16 random bytes, URL-safe.
func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand, Go 1.24 and later)
	return base64.RawURLEncoding.EncodeToString(b)
}

// csrfKey is the echo context key of the CSRF token of a form request.
const (
	csrfKey = "csrf"
	// sessionEndsKey is the context key of the time the request's
	// signed-in session ends.
	sessionEndsKey = "session-ends"
)

// heldSession reads the session the browser holds, if it holds a valid one.
func (s *Server) heldSession(c echo.Context) (Session, bool) {
	ck, err := c.Request().Cookie(SessionCookie)
	if err != nil {
		return Session{}, false
	}
	return s.sessions.Read(ck.Value, s.now())
}

// guest is a visitor at an applicant link, as the link's sessions,
// verification pages and error pages need it: the form's visitor
// (formGuest) or an RFI request's (rfiGuest).
type guest interface {
	// subject is the id the link's sessions name (Session.AppID): the
	// application's or the RFI request's.
	subject() string
	participant() *onboarding.Participant
	// signedIn and signedInNow are the visitor's SignedIn and SignedInNow.
	signedIn() bool
	signedInNow() bool
	// base is the link's address, /a/{slug} or /r/{slug}: where its pages
	// are and the path of its session cookie.
	base() string
	// layout starts the layout of one of the link's pages.
	layout(title string) layout
	// sendCode and verifyCode are the domain's verification steps.
	sendCode(ctx context.Context, svc *onboarding.Service) error
	verifyCode(ctx context.Context, svc *onboarding.Service, code string) error
	// signOut ends the participant's sessions and revokes their pre-auth
	// code.
	signOut(ctx context.Context, svc *onboarding.Service) error
}

// keepSession gives the visit of g its session: a new one when g signed in
// just now, the held one while it stands for g (renewed once it is older
// than sessionRenewAfter), the held anonymous one of the same subject, or
// else a new anonymous one. It sets the cookie when the token changes, and
// the request's CSRF token.
func (s *Server) keepSession(c echo.Context, g guest, held Session, holds bool) {
	now := s.now()
	switch {
	case g.signedInNow():
		s.startSession(c, g)
		return
	case g.signedIn():
		if now.Sub(held.Issued) > min(sessionRenewAfter, s.sessionTimeout/4) {
			s.renewSession(c, g, held)
			return
		}
		c.Set(sessionEndsKey, held.Expires)
	case holds && held.AppID == g.subject() && held.ParticipantID == "":
	default:
		held = Session{AppID: g.subject(), Nonce: newNonce(), Issued: now, Expires: now.Add(s.sessionTimeout)}
		s.setSession(c, g, held)
	}
	c.Set(csrfKey, s.sessions.CSRFToken(held.Nonce))
}

// renewSession extends g's signed-in session held to a full timeout from
// now, keeping its secret (and so the CSRF token of open pages).
func (s *Server) renewSession(c echo.Context, g guest, held Session) {
	now := s.now()
	held.Issued, held.Expires = now, now.Add(s.sessionTimeout)
	s.setSession(c, g, held)
	c.Set(sessionEndsKey, held.Expires)
	c.Set(csrfKey, s.sessions.CSRFToken(held.Nonce))
}

// sessionSeconds is how many seconds the signed-in session of the request
// has left (0 outside one): the page's timeout warning counts them down.
func (s *Server) sessionSeconds(c echo.Context) int {
	ends, ok := c.Get(sessionEndsKey).(time.Time)
	if !ok {
		return 0
	}
	// Rounded up, so that the page's count never ends before the session.
	return max(int((ends.Sub(s.now())+time.Second-1)/time.Second), 1)
}

// startSession starts a signed-in session for g's participant, with a
// fresh secret.
func (s *Server) startSession(c echo.Context, g guest) {
	now := s.now()
	p := g.participant()
	ss := Session{AppID: g.subject(), ParticipantID: p.ID, Epoch: p.SessionEpoch,
		Nonce: newNonce(), Issued: now, Expires: now.Add(s.sessionTimeout)}
	s.setSession(c, g, ss)
	c.Set(sessionEndsKey, ss.Expires)
	c.Set(csrfKey, s.sessions.CSRFToken(ss.Nonce))
}

// setSession hands ss to the browser in the session cookie, scoped to g's
// link.
func (s *Server) setSession(c echo.Context, g guest, ss Session) {
	c.SetCookie(&http.Cookie{
		Name: SessionCookie, Value: s.sessions.Issue(ss), Path: g.base(),
		MaxAge: int(s.sessionTimeout.Seconds()), HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookie || c.Request().TLS != nil,
	})
}

// csrfOf returns the CSRF token of a form request; empty outside the form.
func csrfOf(c echo.Context) string {
	token, _ := c.Get(csrfKey).(string)
	return token
}
