// Package server is onboard's JSON API under /api/external, with the
// health, metrics and admin socket beside it: it builds the echo instance
// that the applicant form (package form) is mounted on, and runs the
// listeners. Handlers are thin: bind, call one Service method, render.
package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"onboard/onboarding"
	"onboard/server/web"
)

// Options configures a Server.
type Options struct {
	Service *onboarding.Service
	// Responses keeps the responses of requests with an Idempotency-Key;
	// without it such requests fail with 500 and a logged cause.
	Responses ResponseStore
	// Pages are the routes served beside the API: the applicant form and
	// the RFI page. Without them, their paths answer 404 Not found.
	Pages  Pages
	Logger *slog.Logger // default: discard
	// RatePerSecond and Burst set each API key's token bucket (docs/api.md);
	// a RatePerSecond of 0 disables rate limiting.
	RatePerSecond float64
	Burst         int
	MaxJSONBytes  int64            // default 1 MiB
	Now           func() time.Time // default time.Now
	// Sandbox serves the sandbox test helpers (docs/sandbox.md); without it
	// (production) every path under /api/external/test-helpers/ answers
	// 404 Not found.
	Sandbox bool
	// Metrics, when set, is the registry the HTTP metrics are registered
	// on and GET /metrics serves (docs/operations.md); without it there is no
	// /metrics.
	Metrics *prometheus.Registry
	// MetricsListener, when set, is where Run serves GET /metrics, instead
	// of the API listener.
	MetricsListener net.Listener
	// Readiness are the checks of GET /readyz; with none it answers ready.
	Readiness []Probe
	// Admin is the handler of the admin socket, which Run serves on its
	// admin listener.
	Admin http.Handler
	// TrustedProxies are the addresses of the reverse proxies in front of
	// the server, whose X-Forwarded-For names the client; without them the
	// client is the connection's peer and X-Forwarded-For is ignored.
	TrustedProxies []netip.Prefix
	// WriteTimeout is how long each write of an answer may wait for the
	// client to take data (default 60 s): a client that reads nothing for
	// that long is cut off, one that reads slowly gets any size of answer.
	WriteTimeout time.Duration
	// MaxOpenFiles is the descriptor limit the caps on connections and
	// downloads are derived from (docs/operations.md); default the
	// process's RLIMIT_NOFILE, none where it cannot be read.
	MaxOpenFiles int
	// DownloadsPerClient caps the downloads one client address may have in
	// progress (default 8).
	DownloadsPerClient int
	// Writes, when set, refuses the API's POSTs and PATCHes while the
	// store refuses writes (a full disk).
	Writes WriteGate
}

// Pages are routes that share the API's listener, middleware and error
// answers without being part of the API: the applicant form and the RFI
// page (package form).
type Pages interface {
	// Register adds the routes to e. New calls it once, after
	// registering the API's routes.
	Register(e *echo.Echo)
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

	sandbox bool  // serve the test helpers
	pages   Pages // the applicant form and the RFI page; nil: none

	replays *replays // requests with an Idempotency-Key

	catalogs sync.Map // *onboarding.Form → []byte: rendered field catalogs
	answers  answerBuffers
	views    *viewMemo // get-application answers kept rendered

	routePatterns  map[string]bool // every registered route's pattern: the route labels
	headRoutes     map[string]bool // the patterns of the routes registered for HEAD
	metrics        *httpMetrics    // nil: no metrics
	metricsHandler http.Handler    // GET /metrics
	metricsLn      net.Listener    // nil: /metrics is on the API listener
	probes         []Probe         // the checks of GET /readyz
	admin          http.Handler    // the admin socket's handler

	handler      http.Handler   // e with write deadlines: what the API listener serves
	maxConns     int            // connections the API listener accepts at once; 0: no cap
	downloads    *downloadSlots // downloads in progress
	fileLimit    int            // the descriptor limit the caps come from; 0: unknown
	openAtStart  int            // descriptors open when the caps were set
	writeTimeout time.Duration  // see Options.WriteTimeout
	writes       WriteGate      // nil: writes are not gated here
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
	s.sandbox = opts.Sandbox
	s.admin = opts.Admin
	s.pages = opts.Pages
	s.replays = &replays{store: opts.Responses, now: s.now, log: s.log, inflight: map[string]*flight{}}
	s.limit = newLimiter(opts.RatePerSecond, opts.Burst, s.now)
	s.authFailures = newLimiter(authFailureBurst/authFailureWindow.Seconds(), authFailureBurst, s.now)
	s.probes = opts.Readiness
	s.writeTimeout = cmp.Or(opts.WriteTimeout, defaultWriteTimeout)
	s.fileLimit, s.openAtStart = cmp.Or(opts.MaxOpenFiles, openFileLimit()), openFiles()
	maxDownloads := 0
	s.maxConns, maxDownloads = descriptorBudget(s.fileLimit, s.openAtStart)
	s.downloads = newDownloadSlots(maxDownloads, cmp.Or(opts.DownloadsPerClient, defaultDownloadsPerClient))
	s.writes = opts.Writes
	if opts.Metrics != nil {
		s.metrics = newHTTPMetrics(opts.Metrics)
		s.metricsHandler = newMetricsHandler(opts.Metrics, s.log)
		s.metricsLn = opts.MetricsListener
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = web.ErrorHandler(s.log)
	e.IPExtractor = ipExtractor(opts.TrustedProxies)
	s.e = e
	s.handler = withWriteDeadlines(e, s.writeTimeout)
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

// Handler returns the API's http.Handler, with its write deadlines.
func (s *Server) Handler() http.Handler { return s.handler }

// Run serves the API on api, the admin socket on admin (which may be nil)
// and GET /metrics on Options.MetricsListener (when set) until ctx is
// done, then shuts down gracefully: in-flight requests finish, for at most
// grace. The API listener accepts no more connections at once than the
// descriptor budget allows (docs/operations.md).
func (s *Server) Run(ctx context.Context, api, admin net.Listener, grace time.Duration) error {
	var connState func(net.Conn, http.ConnState)
	if s.maxConns > 0 {
		limited := newLimitListener(api, s.maxConns)
		api, connState = limited, limited.connState
	}
	s.log.Info("client limits", "open_files_limit", s.fileLimit, "open_files", s.openAtStart,
		"max_connections", s.maxConns, "max_downloads", s.downloads.max, "downloads_per_client", s.downloads.perClient,
		"write_timeout", s.writeTimeout.String())
	servers := []*http.Server{{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnState:         connState,
	}}
	listeners := []net.Listener{api}
	if admin != nil && s.admin != nil {
		servers = append(servers, &http.Server{Handler: s.admin, ReadHeaderTimeout: 10 * time.Second})
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
