// Package metrics holds the Prometheus metrics of `onboard serve` that are
// not the HTTP server's own (those are server's, labelled by echo route;
// docs/operations.md lists both): registry calls, webhook attempts and
// email, counted where the Service meets its transports (the registry
// client's CountCall, and wrappers of the mailer and of the webhook
// transport, so the domain knows nothing of them); the outbox and the
// disabled endpoints, read from the store when Prometheus scrapes; and the
// Go runtime and process collectors. They live on a registry of their own,
// never the global default.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"onboard/onboarding"
	"onboard/registry"
)

// Outcomes of onboard_webhook_attempts_total.
const (
	webhookDelivered = "delivered"  // a 2xx answer
	webhookGone      = "gone"       // 410 Gone: the endpoint is disabled
	webhookHTTPError = "http_error" // any other answer: retried
	webhookNoAnswer  = "no_answer"  // timeout, connection failure, refused address: retried
)

// Outcomes of onboard_mail_sent_total.
const (
	mailSent   = "sent"   // the transport accepted the message
	mailFailed = "failed" // it did not (the activity log says why)
)

// Reasons of onboard_webhook_endpoints_disabled.
const (
	disabledByOperator = "operator" // `onboard webhooks disable`
	disabledGone       = "gone"     // the endpoint answered 410 Gone
	disabledFailing    = "failing"  // its last events each failed every attempt
)

// outboxRefresh is how often, at most, a scrape counts the webhook outbox
// again; scrapes in between get the last count.
const outboxRefresh = 30 * time.Second

// Registry is the Prometheus registry the collectors are on, which
// GET /metrics serves.
func (m *Collectors) Registry() *prometheus.Registry { return m.reg }

// Collectors is the Prometheus registry of `onboard serve` and the
// counters the root wires into the Service's transports. A nil
// *Collectors counts nothing: its methods return what they wrap.
type Collectors struct {
	reg             *prometheus.Registry
	registryCalls   *prometheus.CounterVec // onboard_registry_requests_total{registry,outcome}
	webhookAttempts *prometheus.CounterVec // onboard_webhook_attempts_total{outcome}
	mailSent        *prometheus.CounterVec // onboard_mail_sent_total{outcome}
}

// New returns a registry with the Go runtime and process
// collectors and the counters, each series started at zero so that rates
// and alerts see it from the first scrape.
func New() *Collectors {
	m := &Collectors{
		reg: prometheus.NewRegistry(),
		registryCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "onboard_registry_requests_total",
			Help: "Requests to the company registries (uk: Companies House, ie: CRO), by outcome: ok, not_found, throttled, unavailable, error.",
		}, []string{"registry", "outcome"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "onboard_webhook_attempts_total",
			Help: "Webhook delivery attempts, by outcome: delivered (2xx), gone (410), http_error (any other answer), no_answer.",
		}, []string{"outcome"}),
		mailSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "onboard_mail_sent_total",
			Help: "Emails handed to the mail transport (SMTP or the sandbox outbox), by outcome: sent, failed.",
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.registryCalls, m.webhookAttempts, m.mailSent,
	)
	for _, reg := range registry.Registries() {
		for _, outcome := range registry.Outcomes() {
			m.registryCalls.WithLabelValues(reg, outcome)
		}
	}
	for _, outcome := range []string{webhookDelivered, webhookGone, webhookHTTPError, webhookNoAnswer} {
		m.webhookAttempts.WithLabelValues(outcome)
	}
	for _, outcome := range []string{mailSent, mailFailed} {
		m.mailSent.WithLabelValues(outcome)
	}
	return m
}

// RegistryCounter is registry.Options.CountCall; nil counts nothing.
func (m *Collectors) RegistryCounter() func(reg, outcome string) {
	if m == nil {
		return nil
	}
	return func(reg, outcome string) { m.registryCalls.WithLabelValues(reg, outcome).Inc() }
}

// Mailer wraps next to count what it sends; a nil next (production without
// SMTP: nothing is sent) stays nil.
func (m *Collectors) Mailer(next onboarding.Mailer) onboarding.Mailer {
	if m == nil || next == nil {
		return next
	}
	return &countingMailer{next: next, sent: m.mailSent}
}

// Webhooks wraps next to count its attempts.
func (m *Collectors) Webhooks(next onboarding.WebhookTransport) onboarding.WebhookTransport {
	if m == nil || next == nil {
		return next
	}
	return &countingWebhooks{WebhookTransport: next, attempts: m.webhookAttempts}
}

// countingMailer is a Mailer that counts each message by outcome.
type countingMailer struct {
	next onboarding.Mailer
	sent *prometheus.CounterVec
}

// Send sends m through the wrapped Mailer and counts the outcome.
func (c *countingMailer) Send(ctx context.Context, m onboarding.Message) error {
	err := c.next.Send(ctx, m)
	outcome := mailSent
	if err != nil {
		outcome = mailFailed
	}
	c.sent.WithLabelValues(outcome).Inc()
	return err
}

// countingWebhooks is a WebhookTransport that counts each attempt by
// outcome; CheckURL is the wrapped transport's.
type countingWebhooks struct {
	onboarding.WebhookTransport
	attempts *prometheus.CounterVec
}

// Send makes the attempt through the wrapped transport and counts it.
func (c *countingWebhooks) Send(ctx context.Context, r onboarding.WebhookRequest) (onboarding.WebhookResponse, error) {
	resp, err := c.WebhookTransport.Send(ctx, r)
	outcome := webhookHTTPError
	switch {
	case err != nil:
		outcome = webhookNoAnswer
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		outcome = webhookDelivered
	case resp.StatusCode == http.StatusGone:
		outcome = webhookGone
	}
	c.attempts.WithLabelValues(outcome).Inc()
	return resp, err
}

// OutboxStore is what the scrape-time gauges read: the storage.Store.
type OutboxStore interface {
	QueuedDeliveries(ctx context.Context) (int, error)
	Endpoints(ctx context.Context, orgID string) ([]*onboarding.Endpoint, error)
}

// WatchStore registers onboard_outbox_pending and
// onboard_webhook_endpoints_disabled, read from store at scrape time; the
// outbox is counted again at most every outboxRefresh.
func (m *Collectors) WatchStore(store OutboxStore) {
	m.reg.MustRegister(NewStoreCollector(store, outboxRefresh, time.Now))
}

// NewStoreCollector returns the collector of the store's gauges, whose
// outbox count lasts refresh by the clock now.
func NewStoreCollector(store OutboxStore, refresh time.Duration, now func() time.Time) *StoreCollector {
	return &StoreCollector{
		store:   store,
		refresh: refresh,
		now:     now,
		pending: prometheus.NewDesc("onboard_outbox_pending",
			"Webhook deliveries queued and not yet done (delivered, given up or dropped), counted at most every "+refresh.String()+".", nil, nil),
		disabled: prometheus.NewDesc("onboard_webhook_endpoints_disabled",
			"Webhook endpoints disabled, by reason: operator, gone (answered 410), failing (events in a row failed every attempt).", []string{"reason"}, nil),
	}
}

// StoreCollector reads the outbox and the endpoints when scraped. Counting
// the outbox walks the keys of the delivery queue (no values), so a count
// serves the scrapes of the next refresh: the walk runs at most once per refresh however often, and by
// however many scrapers, /metrics is read. Endpoints are few and read on
// every scrape.
type StoreCollector struct {
	store             OutboxStore
	refresh           time.Duration
	now               func() time.Time
	pending, disabled *prometheus.Desc

	mu        sync.Mutex // held while counting, so concurrent scrapes share one walk
	queued    int
	countedAt time.Time // zero: not counted yet
}

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 5 * time.Second

// Describe sends the gauges' descriptions.
func (c *StoreCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.disabled
}

// Collect reads the store; a read that fails leaves its gauge out of the
// scrape (the handler logs why).
func (c *StoreCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if n, err := c.QueuedDeliveries(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(c.pending, fmt.Errorf("count the webhook outbox: %w", err))
	} else {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(n))
	}
	eps, err := c.store.Endpoints(ctx, "")
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.disabled, fmt.Errorf("read the webhook endpoints: %w", err))
		return
	}
	counts := map[string]int{disabledByOperator: 0, disabledGone: 0, disabledFailing: 0}
	for _, ep := range eps {
		if !ep.Enabled {
			counts[disabledReason(ep.DisabledReason)]++
		}
	}
	for reason, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.disabled, prometheus.GaugeValue, float64(n), reason)
	}
}

// QueuedDeliveries returns the last count of the outbox, counting again
// when it is older than the refresh.
func (c *StoreCollector) QueuedDeliveries(ctx context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if !c.countedAt.IsZero() && now.Sub(c.countedAt) < c.refresh {
		return c.queued, nil
	}
	n, err := c.store.QueuedDeliveries(ctx)
	if err != nil {
		return 0, err
	}
	c.queued, c.countedAt = n, now
	return n, nil
}

// disabledReason is the reason label of an endpoint's DisabledReason.
func disabledReason(reason string) string {
	switch reason {
	case onboarding.DisabledByOperator:
		return disabledByOperator
	case onboarding.DisabledGone:
		return disabledGone
	}
	return disabledFailing
}
