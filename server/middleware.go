package server

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// Echo context keys of the authenticated API key and the bearer token it
// was presented as.
const (
	ctxKey   = "onboard.apikey"
	ctxToken = "onboard.token"
)

// apiKey returns the key the auth middleware stored for this request.
func apiKey(c echo.Context) *onboarding.APIKey {
	k, _ := c.Get(ctxKey).(*onboarding.APIKey)
	return k
}

// Failed API-key attempts allowed per client address: authFailureBurst
// at once, then one more each authFailureWindow/authFailureBurst.
const (
	authFailureBurst  = 10
	authFailureWindow = time.Minute
)

// authenticate resolves the bearer key, checks the endpoint's scope and
// applies the key's rate limit, in that order (docs/api.md).
//
// Before that, a client address that has failed too often is refused
// with 429 and Retry-After, whatever key it presents this time, valid
// ones included: the lockout only slows guessing if a locked-out address
// learns nothing, and a key that answered 200 while wrong ones answer 429
// would tell a guesser it had found one (GitHub's API does the same,
// refusing even valid credentials for a while after many bad ones). Only
// failures count (an invalid, unknown, revoked or expired key, or a
// header that is not Bearer): a busy client with a good key is never
// slowed, and a missing key guesses nothing. Concurrent attempts may all
// pass the check before their failures count: the overshoot is bounded by
// the client's concurrency, and every later attempt is refused.
func (s *Server) authenticate(scope onboarding.Scope) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			if strings.TrimSpace(h) == "" {
				return onboarding.ErrMissingAPIKey
			}
			if len(c.Request().Header.Values(echo.HeaderAuthorization)) > 1 {
				// Which one counts would depend on the parser: a proxy in
				// front may check the last while this would use the first.
				return onboarding.ErrInvalidAPIKey
			}
			addr := clientAddr(c)
			if wait := s.authFailures.wait(addr); wait > 0 {
				c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				return web.ErrRateLimited
			}
			scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				s.authFailed(addr)
				return onboarding.ErrInvalidAPIKey
			}
			token = strings.TrimSpace(token)
			k, err := s.svc.Authenticate(c.Request().Context(), token)
			if errors.Is(err, onboarding.ErrInvalidAPIKey) {
				s.authFailed(addr)
			}
			if err != nil {
				return err
			}
			c.Set(ctxKey, k)
			c.Set(ctxToken, token)
			if err := onboarding.Authorize(k, scope); err != nil {
				return err
			}
			if err := s.limit.take(c.Response().Header(), k.ClientID); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// authFailed counts a failed API-key attempt of the client address addr,
// and logs the moment the address is locked out (once per lockout, not
// once per refused attempt), so that an operator sees who is guessing.
func (s *Server) authFailed(addr string) {
	if s.authFailures.spend(addr) {
		s.log.Warn("client address locked out after failed API keys", "client", addr)
	}
}

// foreground notes each request with the Service while it is served, so
// that background work gives way to it (onboarding.Service.RequestStarted).
func (s *Server) foreground(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s.svc.RequestStarted()
		defer s.svc.RequestEnded()
		return next(c)
	}
}

// requestLog logs one line per request (never bodies: they carry personal
// data; never the path of a matched route either, whose parameters may be
// an applicant's link: its route pattern instead), with the request id
// web.RequestID gave it, and counts it in the HTTP metrics. A request
// whose client hung up is logged and counted as
// web.StatusClientClosedRequest, whatever was answered.
func (s *Server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Response().Header().Get(echo.HeaderXRequestID)
		w := c.Response().Writer // before a middleware wraps it
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		took := time.Since(start)
		route, status := s.routeOf(c), c.Response().Status
		if web.ClientGone(c.Request(), err) || writeFailedOf(w) {
			status = web.StatusClientClosedRequest // the answer, if any, was cut short
		}
		if s.metrics != nil {
			s.metrics.observe(route, web.RequestMethod(c), status, took)
		}
		level := slog.LevelInfo
		if isProbeRoute(route) && status < 500 {
			level = slog.LevelDebug // load balancers and scrapers call them every few seconds
		}
		if !s.log.Enabled(c.Request().Context(), level) {
			return nil
		}
		attrs := []slog.Attr{
			slog.String("method", web.RequestMethod(c)),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Float64("latency_ms", float64(took.Microseconds())/1000),
			slog.String("request_id", id),
		}
		if route == unmatchedRoute {
			attrs = append(attrs, slog.String("path", web.LoggedPath(c.Request().URL.Path)))
		}
		if k := apiKey(c); k != nil {
			attrs = append(attrs, slog.String("key", k.ClientID), slog.String("org", k.OrgID))
		}
		s.log.LogAttrs(c.Request().Context(), level, "request", attrs...)
		return nil
	}
}

// isProbeRoute reports whether route is that of health checks or scrapes,
// logged at debug level while they succeed.
func isProbeRoute(route string) bool {
	return route == "/healthz" || route == "/readyz" || route == "/metrics"
}

// jsonBodyTimeout is how long a JSON API body may take to arrive, counted
// from when the handler starts reading it. API bodies come from partners'
// servers and are small (at most maxJSON, 1 MiB by default, usually a few
// KB): 30 seconds is ample even on a poor link, and a client that stalls
// mid-body is cut off then rather than holding a connection and a
// goroutine for the server's whole ReadTimeout. The deadline is set per
// request here, not as a smaller http.Server.ReadTimeout, because the same
// server takes the applicant form's uploads (25 MiB, from phones on slow
// mobile links), which need the longer server-wide limit.
const jsonBodyTimeout = 30 * time.Second

// readBody reads the request body up to the JSON limit; over it, the client
// gets 413 Request body too large. A body that cannot be read in full (it
// is shorter than its Content-Length, stops arriving for jsonBodyTimeout,
// or the client goes away) is 400 onboarding.ErrBodyUnreadable, never 500.
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	if r.ContentLength > s.maxJSON {
		return nil, web.ErrBodyTooLarge
	}
	// Not supported by test recorders, hence no error check; over a real
	// connection it replaces the server-wide ReadTimeout while the body
	// arrives.
	rc := http.NewResponseController(c.Response())
	_ = rc.SetReadDeadline(time.Now().Add(jsonBodyTimeout))
	b, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, s.maxJSON))
	if err == nil {
		// The body is in: no deadline while the handler works, or net/http's
		// background read would time out and cancel the request's context
		// during a slow registry check. The server sets the next request's
		// deadlines itself.
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		s.log.Debug("request body unreadable", "err", err)
		return nil, onboarding.ErrBodyUnreadable
	}
	return b, nil
}

// clientAddr is the address failed authentications are counted by: the
// client's IP as echo's IPExtractor gives it (the connection's peer,
// unless Options.TrustedProxies names the proxies whose X-Forwarded-For
// to believe), an IPv6 client by its /64, which one host can fill.
func clientAddr(c echo.Context) string {
	ip, err := netip.ParseAddr(c.RealIP())
	if err != nil {
		return c.RealIP()
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// ipExtractor is how the server finds a client's address: the
// connection's peer, or, when the peer is one of trusted, the nearest
// address X-Forwarded-For names that is not. Nothing else is trusted
// (echo's default would believe any client's X-Forwarded-For).
func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// limiter is a token bucket per key (an API key's client id, a client
// address): rate tokens a second up to burst.
type limiter struct {
	rate, burst float64
	now         func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	// sweepAt is the number of buckets at which spend forgets the full
	// ones, which are the same as none.
	sweepAt int
}

type bucket struct {
	tokens float64
	last   time.Time
}

// minSweep is the fewest buckets a limiter sweeps.
const minSweep = 1024

func newLimiter(rate float64, burst int, now func() time.Time) *limiter {
	return &limiter{rate: rate, burst: float64(burst), now: now, buckets: make(map[string]*bucket), sweepAt: minSweep}
}

// refill returns key's bucket with the tokens earned since it was last
// used; l.mu must be held.
func (l *limiter) refill(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	return b
}

// wait returns how long key has to wait for a token: 0 when it has one.
// It spends nothing.
func (l *limiter) wait(key string) time.Duration {
	if l.rate <= 0 {
		return 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return 0
	}
	tokens := math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / l.rate * float64(time.Second))
}

// spend takes a token of key's bucket, when it has one, and reports
// whether that was its last: key must wait from now on. Now and then it
// forgets the buckets that are full again, so that the many keys of
// one-off clients do not pile up.
func (l *limiter) spend(key string) (emptied bool) {
	if l.rate <= 0 {
		return false
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) >= l.sweepAt {
		for k, b := range l.buckets {
			if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
				delete(l.buckets, k)
			}
		}
		l.sweepAt = max(minSweep, 2*len(l.buckets))
	}
	if b := l.refill(key, now); b.tokens >= 1 {
		b.tokens--
		return b.tokens < 1
	}
	return false
}

// take spends one token of key's bucket and sets the RateLimit headers, or
// returns web.ErrRateLimited with Retry-After set.
func (l *limiter) take(h http.Header, key string) error {
	if l.rate <= 0 {
		return nil
	}
	now := l.now()
	l.mu.Lock()
	b := l.refill(key, now)
	allowed := b.tokens >= 1
	if allowed {
		b.tokens--
	}
	tokens := b.tokens
	l.mu.Unlock()

	h.Set("RateLimit-Limit", strconv.Itoa(int(l.burst)))
	h.Set("RateLimit-Remaining", strconv.Itoa(int(tokens)))
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil((l.burst-tokens)/l.rate))))
	if !allowed {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil((1-tokens)/l.rate))))
		return web.ErrRateLimited
	}
	return nil
}
