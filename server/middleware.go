package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
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

// authenticate resolves the bearer key, checks the endpoint's scope and
// applies the key's rate limit, in that order (spec §5, DESIGN §5.9).
func (s *Server) authenticate(scope onboarding.Scope) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			if strings.TrimSpace(h) == "" {
				return onboarding.ErrMissingAPIKey
			}
			scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				return onboarding.ErrInvalidAPIKey
			}
			token = strings.TrimSpace(token)
			k, err := s.svc.Authenticate(c.Request().Context(), token)
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

// requestLog logs one line per request (never bodies: they carry personal
// data; never the path of a matched route either, whose parameters may be
// an applicant's link: its route pattern instead), counts it in the HTTP
// metrics, and tags the response with a request id: the client's
// X-Request-Id when it is sane (requestIDOK), a new one otherwise.
func (s *Server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !requestIDOK(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		took := time.Since(start)
		route, status := s.routeOf(c), c.Response().Status
		if s.metrics != nil {
			s.metrics.observe(route, c.Request().Method, status, took)
		}
		level := slog.LevelInfo
		if isProbeRoute(route) && status < 500 {
			level = slog.LevelDebug // load balancers and scrapers call them every few seconds
		}
		if !s.log.Enabled(c.Request().Context(), level) {
			return nil
		}
		attrs := []slog.Attr{
			slog.String("method", c.Request().Method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Float64("latency_ms", float64(took.Microseconds())/1000),
			slog.String("request_id", id),
		}
		if route == unmatchedRoute {
			attrs = append(attrs, slog.String("path", c.Request().URL.Path))
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

// maxRequestID bounds the X-Request-Id a client may choose.
const maxRequestID = 128

// requestIDOK reports whether a client's X-Request-Id may be kept: 1 to
// maxRequestID letters, digits and "-_.:+/=" (UUIDs, ULIDs, hex and base64
// ids), nothing that could break a log line or a header.
func requestIDOK(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("-_.:+/=", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// recoverPanic turns a panic into a 500 with the stack in the log.
func (s *Server) recoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// apiHeaders marks every API response as private and not to be sniffed.
func apiHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		return next(c)
	}
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
		return nil, errBodyTooLarge
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

// limiter is a token bucket per API key: rate tokens a second up to burst.
type limiter struct {
	rate, burst float64
	now         func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst int, now func() time.Time) *limiter {
	return &limiter{rate: rate, burst: float64(burst), now: now, buckets: make(map[string]*bucket)}
}

// take spends one token of key's bucket and sets the RateLimit headers, or
// returns errRateLimited with Retry-After set.
func (l *limiter) take(h http.Header, key string) error {
	if l.rate <= 0 {
		return nil
	}
	now := l.now()
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
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
		return errRateLimited
	}
	return nil
}
