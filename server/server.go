// Package server is onboard's HTTP layer and the only package that imports
// echo: the /api/external JSON API, the admin socket, and the one table that
// maps domain errors to HTTP statuses. Handlers are thin: bind, call one
// Service method, render.
package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"onboard/onboarding"
)

// Options configures a Server.
type Options struct {
	Service *onboarding.Service
	// Responses keeps the responses of requests with an Idempotency-Key;
	// without it such requests fail with 500 and a logged cause.
	Responses ResponseStore
	// Sessions keeps the applicant form's sessions; without it the form
	// answers that it is not available.
	Sessions Sessions
	// SessionTimeout is how long a form session lasts without use
	// (default 12 hours); pages warn before it ends.
	SessionTimeout time.Duration
	Logger         *slog.Logger // default: discard
	// RatePerSecond and Burst set each API key's token bucket (DESIGN §5.9);
	// a RatePerSecond of 0 disables rate limiting.
	RatePerSecond float64
	Burst         int
	MaxJSONBytes  int64            // default 1 MiB
	Now           func() time.Time // default time.Now
	// PublicURL is the base URL applicants reach the server at; form
	// cookies are Secure when it is https.
	PublicURL string
	// Sandbox serves the sandbox test helpers (DESIGN §5.11); without it
	// (production) every path under /api/external/test-helpers/ answers
	// 404 Not found.
	Sandbox bool
	// Metrics, when set, is the registry the HTTP metrics are registered
	// on and GET /metrics serves (DESIGN §5.13); without it there is no
	// /metrics.
	Metrics *prometheus.Registry
	// MetricsListener, when set, is where Run serves GET /metrics, instead
	// of the API listener.
	MetricsListener net.Listener
	// Readiness are the checks of GET /readyz; with none it answers ready.
	Readiness []Probe
	// Backup makes the archives of onboard backup on the admin socket;
	// without it, a backup request answers 503.
	Backup Backuper
	// TrustedProxies are the addresses of the reverse proxies in front of
	// the server, whose X-Forwarded-For names the client; without them the
	// client is the connection's peer and X-Forwarded-For is ignored.
	TrustedProxies []netip.Prefix
}

// Server serves the API.
type Server struct {
	svc   *onboarding.Service
	log   *slog.Logger
	e     *echo.Echo
	limit *limiter
	// authFailures counts failed API-key attempts per client address.
	authFailures *limiter
	maxJSON      int64
	now          func() time.Time

	secureCookie bool
	sandbox      bool   // serve the test helpers
	pages        *pages // the applicant form's parsed templates

	replays  *replays // requests with an Idempotency-Key
	sessions Sessions // the applicant form's sessions
	// sessionTimeout is how long a form session lasts without use.
	sessionTimeout time.Duration

	catalogs sync.Map // *onboarding.Form → []byte: rendered field catalogs
	answers  answerBuffers
	views    *viewMemo // get-application answers kept rendered

	routePatterns  map[string]bool // every registered route's pattern: the route labels
	headRoutes     map[string]bool // the patterns of the routes registered for HEAD
	metrics        *httpMetrics    // nil: no metrics
	metricsHandler http.Handler    // GET /metrics
	metricsLn      net.Listener    // nil: /metrics is on the API listener
	probes         []Probe         // the checks of GET /readyz
	backup         Backuper        // onboard backup on the admin socket; nil: unavailable
}

// New returns a Server with every route registered.
func New(opts Options) *Server {
	s := &Server{svc: opts.Service, log: opts.Logger, maxJSON: opts.MaxJSONBytes, now: opts.Now, views: newViewMemo(renderedViewsBytes)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxJSON <= 0 {
		s.maxJSON = 1 << 20
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.secureCookie = strings.HasPrefix(opts.PublicURL, "https://")
	s.sandbox = opts.Sandbox
	s.backup = opts.Backup
	s.pages = mustParsePages()
	s.sessions = opts.Sessions
	s.sessionTimeout = cmp.Or(opts.SessionTimeout, sessionTTL)
	s.replays = &replays{store: opts.Responses, now: s.now, log: s.log, inflight: map[string]*flight{}}
	s.limit = newLimiter(opts.RatePerSecond, opts.Burst, s.now)
	s.authFailures = newLimiter(authFailureBurst/authFailureWindow.Seconds(), authFailureBurst, s.now)
	s.probes = opts.Readiness
	if opts.Metrics != nil {
		s.metrics = newHTTPMetrics(opts.Metrics)
		s.metricsHandler = newMetricsHandler(opts.Metrics, s.log)
		s.metricsLn = opts.MetricsListener
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = ipExtractor(opts.TrustedProxies)
	s.e = e
	s.routes()
	s.routePatterns, s.headRoutes = map[string]bool{}, map[string]bool{}
	for _, r := range e.Routes() {
		s.routePatterns[r.Path] = true
		if r.Method == http.MethodHead {
			s.headRoutes[r.Path] = true
		}
	}
	return s
}

// Handler returns the API's http.Handler.
func (s *Server) Handler() http.Handler { return s.e }

// Run serves the API on api, the admin socket on admin (which may be nil)
// and GET /metrics on Options.MetricsListener (when set) until ctx is
// done, then shuts down gracefully: in-flight requests finish, for at most
// grace.
func (s *Server) Run(ctx context.Context, api, admin net.Listener, grace time.Duration) error {
	servers := []*http.Server{{
		Handler:           s.e,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}}
	listeners := []net.Listener{api}
	if admin != nil {
		servers = append(servers, &http.Server{Handler: s.AdminHandler(), ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, admin)
	}
	if s.metricsLn != nil {
		servers = append(servers, &http.Server{Handler: metricsOnly(s.metricsHandler), ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, s.metricsLn)
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			err := srv.Serve(listeners[i])
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			errc <- err
		}()
	}
	var first error
	select {
	case <-ctx.Done():
	case first = <-errc:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// writeJSON renders v with the given status. It encodes as encoding/json
// does, with the JSON v2 implementation in that mode (DefaultOptionsV1):
// the same bytes in less time and with fewer allocations.
func writeJSON(c echo.Context, status int, v any) error {
	b, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1())
	if err != nil {
		return err
	}
	return writeRawJSON(c, status, b)
}

// writeRawJSON sends bytes that are already JSON, with their
// Content-Length: net/http would otherwise send a body of more than 2 KiB
// chunked.
func writeRawJSON(c echo.Context, status int, b []byte) error {
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(b)))
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}
