// Package form serves the applicant form under /a/{link_slug} and the RFI
// page under /r/{link_slug}: server-rendered pages with their sessions,
// CSRF tokens, templates and assets, on the API server's echo instance.
package form

import (
	"cmp"
	"log/slog"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// Options configures the form's Server.
type Options struct {
	Service *onboarding.Service
	// Sessions keeps the applicant form's sessions; without it the form
	// answers that it is not available.
	Sessions Sessions
	// SessionTimeout is how long a form session lasts without use
	// (default 12 hours); pages warn before it ends.
	SessionTimeout time.Duration
	Logger         *slog.Logger     // default: discard
	Now            func() time.Time // default time.Now
	// PublicURL is the base URL applicants reach the server at; form
	// cookies are Secure when it is https.
	PublicURL string
}

// Server serves the applicant form and the RFI page.
type Server struct {
	svc *onboarding.Service
	log *slog.Logger
	now func() time.Time
	e   *echo.Echo // where Register put the routes

	secureCookie bool
	pages        *pages   // the parsed templates
	sessions     Sessions // nil: the form is not available
	// sessionTimeout is how long a form session lasts without use.
	sessionTimeout time.Duration
}

// New returns the form's Server, whose routes Register adds to an echo
// instance.
func New(opts Options) *Server {
	s := &Server{svc: opts.Service, log: opts.Logger, now: opts.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.secureCookie = strings.HasPrefix(opts.PublicURL, "https://")
	s.pages = mustParsePages()
	s.sessions = opts.Sessions
	s.sessionTimeout = cmp.Or(opts.SessionTimeout, DefaultSessionTimeout)
	return s
}

// Register adds the form's routes, the RFI page's and their assets to e,
// whose middleware and error handler they share with the API.
func (s *Server) Register(e *echo.Echo) {
	s.e = e
	s.formRoutes()
}
