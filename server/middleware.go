package server

import (
	"crypto/rand"
	"encoding/hex"
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
// data) and tags the response with a request id.
func (s *Server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if id == "" || len(id) > 64 {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		attrs := []slog.Attr{
			slog.String("method", c.Request().Method),
			slog.String("path", c.Request().URL.Path),
			slog.Int("status", c.Response().Status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("request_id", id),
		}
		if k := apiKey(c); k != nil {
			attrs = append(attrs, slog.String("key", k.ClientID), slog.String("org", k.OrgID))
		}
		s.log.LogAttrs(c.Request().Context(), slog.LevelInfo, "request", attrs...)
		return nil
	}
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

// readBody reads the request body up to the JSON limit; over it, the client
// gets 413 Request body too large.
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	if r.ContentLength > s.maxJSON {
		return nil, errBodyTooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, s.maxJSON))
	if err != nil {
		return nil, err
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
