package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"onboard/server/web"
)

// HTTP metrics (docs/operations.md). Their route label is echo's route pattern
// ("/api/external/applications/:id"), never the request's path, and their
// method label is one of the standard methods or "other", so the number of
// series is bounded by the routes onboard registers whatever clients send.

// unmatchedRoute is the route label of a request no route matched.
const unmatchedRoute = web.UnmatchedRoute

// httpMetrics counts the API listener's requests.
type httpMetrics struct {
	requests *prometheus.CounterVec   // onboard_http_requests_total{route,method,code}
	duration *prometheus.HistogramVec // onboard_http_request_duration_seconds{route,method}
	// series caches the counter and histogram of each seriesKey met, so
	// that a request costs one map lookup rather than two label hashes.
	series sync.Map // seriesKey → *requestSeries
}

// seriesKey is the labels of one request's series.
type seriesKey struct {
	route, method string
	status        int
}

// requestSeries is one route, method and status's counter and histogram.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// newHTTPMetrics registers the HTTP metrics on reg. A registry that holds
// them already (a second Server on it) shares its collectors.
func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "onboard_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "onboard_http_request_duration_seconds",
		Help: "Time from a request's arrival to its response, by route pattern and method.",
		// Reads take well under a millisecond, a create that checks the
		// registry up to its 8-second budget, an upload up to tens of seconds.
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "method"})
	return &httpMetrics{
		requests: registerOrShare(reg, requests),
		duration: registerOrShare(reg, duration),
	}
}

// registerOrShare registers c on reg, or returns the collector of the same
// description reg already holds.
func registerOrShare[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("server: register metrics: " + err.Error()) // a programming error: two metrics of one name
	}
	return c
}

// routeOf is the route label of the request c served: the pattern of the
// route it matched, or unmatchedRoute. A path that matched a route of
// another method (405) keeps that route's pattern.
func (s *Server) routeOf(c echo.Context) string {
	if p := c.Path(); s.routePatterns[p] {
		return p
	}
	return unmatchedRoute
}

// observe counts one answered request.
func (m *httpMetrics) observe(route, method string, status int, took time.Duration) {
	k := seriesKey{route: route, method: methodLabel(method), status: status}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &requestSeries{
			count:    m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
			duration: m.duration.WithLabelValues(k.route, k.method),
		})
	}
	rs := v.(*requestSeries)
	rs.count.Inc()
	rs.duration.Observe(took.Seconds())
}

// methodLabel is method as a label: a standard method, or "other".
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// newMetricsHandler serves reg in the Prometheus text format (or what the
// scraper negotiates). A collector that fails is left out of the answer and
// logged; the others are still served.
func newMetricsHandler(reg *prometheus.Registry, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg, // counts its own scrapes and their errors
	})
}

// metricsOnly serves h at /metrics and answers 404 elsewhere: the handler
// of a metrics listener of its own.
func metricsOnly(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	return mux
}
