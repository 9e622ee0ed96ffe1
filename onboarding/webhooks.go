package onboarding

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"time"
)

// Webhooks (docs/webhooks.md): endpoints registered per organization, each
// event queued for every endpoint that wants it in the transaction that
// commits the event, and delivered by the delivery pool (notify.RunWebhooks) with Standard Webhooks
// signatures, retries over a day, and a log of every attempt.

// secretPrefix starts a signing secret as the operator sees it: "whsec_"
// and the standard base64 of the key (Standard Webhooks).
const secretPrefix = "whsec_"

// signingKeyBytes is the size of a generated signing key.
const signingKeyBytes = 32

// SecretOverlap is how long a rotated-out secret keeps signing beside the
// new one, so receivers can switch without losing a delivery.
const SecretOverlap = 24 * time.Hour

// DeliveryLogRetention is how long each delivery attempt stays in the log.
const DeliveryLogRetention = 30 * 24 * time.Hour

// DisableAfterExhausted is how many events in a row an endpoint may fail
// every attempt of before it is disabled.
const DisableAfterExhausted = 5

// Endpoint is a partner's webhook receiver.
type Endpoint struct {
	ID          string // endpointIDPrefix + ULID
	OrgID       string
	URL         string
	Description string
	Events      []EventType // the types it receives; empty: every type
	Enabled     bool
	// DisabledReason says why an endpoint is disabled: by the operator,
	// because it answered 410 Gone, or after DisableAfterExhausted events
	// in a row failed every attempt.
	DisabledReason string
	// Secrets sign its deliveries, newest first: the current one, and one
	// being rotated out until its ExpiresAt.
	Secrets   []SigningSecret
	CreatedAt time.Time
	// Exhausted counts the events in a row whose every attempt failed; a
	// successful delivery resets it.
	Exhausted int
}

// SigningSecret is one key an endpoint's deliveries are signed with.
type SigningSecret struct {
	Key       []byte
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: the current secret
}

// Wants reports whether e is queued for this endpoint when it commits:
// the endpoint is enabled, and e is addressed to it (webhook.test) or is of
// a type it subscribed to.
func (ep *Endpoint) Wants(e *Event) bool {
	if !ep.Enabled || ep.OrgID != e.OrgID {
		return false
	}
	if e.Endpoint != "" {
		return e.Endpoint == ep.ID
	}
	return len(ep.Events) == 0 || slices.Contains(ep.Events, e.Type)
}

// SigningKeys returns the keys that sign a delivery at now, newest first.
func (ep *Endpoint) SigningKeys(now time.Time) [][]byte {
	keys := make([][]byte, 0, len(ep.Secrets))
	for _, s := range ep.Secrets {
		if s.ExpiresAt == nil || now.Before(*s.ExpiresAt) {
			keys = append(keys, s.Key)
		}
	}
	return keys
}

// FormatSecret is a signing key as the operator copies it into a receiver.
func FormatSecret(key []byte) string {
	return secretPrefix + base64.StdEncoding.EncodeToString(key)
}

// Delivery is one event queued for one endpoint: the unit the delivery
// pool claims, attempts and finishes.
type Delivery struct {
	EventID    string
	EndpointID string
	Subject    string // the event's subject: deliveries of one subject to one endpoint go in order
	Attempts   int    // attempts made so far
	NextAt     time.Time
	// Owner and LeaseUntil name the worker that claimed the delivery and
	// when its claim lapses; another worker may claim it after that.
	Owner      string
	LeaseUntil time.Time

	// Filled in by ClaimDeliveries: the event and its endpoint as they
	// were at the claim.
	Event    *Event
	Endpoint *Endpoint
}

// DeliveryAttempt is one line of the delivery log.
type DeliveryAttempt struct {
	EventID    string
	EventType  EventType
	EndpointID string
	OrgID      string
	Attempt    int // 1 for the first attempt of a delivery
	At         time.Time
	StatusCode int // 0 when no HTTP answer came
	Latency    time.Duration
	Error      string // why the attempt failed; empty on success
	Success    bool
	Response   string // the first MaxLoggedResponse bytes of the answer
}

// MaxLoggedResponse bounds the part of an answer the delivery log keeps.
const MaxLoggedResponse = 1024

// Claim asks the store for due deliveries.
type Claim struct {
	Owner string
	Now   time.Time
	Lease time.Duration
	Limit int
	// InFlight counts the deliveries each endpoint has running now, and
	// MaxInFlight says how many an endpoint may have running in all (nil:
	// no limit): no endpoint is given more, so a slow one cannot take
	// every worker. ClaimDeliveries only reads both.
	InFlight    map[string]int
	MaxInFlight func(endpointID string) int
}

// DeliveryResult is what an attempt leaves: its log line, and what becomes
// of the delivery and its endpoint.
type DeliveryResult struct {
	Attempt DeliveryAttempt
	// Done takes the delivery off the queue (delivered, or given up), and
	// makes the next delivery of its subject to the endpoint due. When Done
	// is false, the delivery is due again at RetryAt.
	Done    bool
	RetryAt time.Time
	// Endpoint, when set, changes the endpoint in the same transaction (its
	// health). When the change disables the endpoint, its queued deliveries
	// are dropped, each with a log line saying so.
	Endpoint func(*Endpoint)
}

// AttemptQuery selects lines of the delivery log, newest first.
type AttemptQuery struct {
	EndpointID string // empty: every endpoint
	EventID    string // empty: every event
	FailedOnly bool
	Limit      int
}

// EventQuery selects a page of an organization's events, newest first.
type EventQuery struct {
	OrgID  string
	Type   EventType // empty: every type
	Before string    // return only events older than this event id; empty: from the newest
	Limit  int
}

// WebhookStore keeps endpoints, events, their queued deliveries and the
// delivery log. Events are written by CreateApplication and
// UpdateApplication (Changes.Events) and by AddEvent; each is queued, in
// the same transaction, for every endpoint that Wants it. Event records
// and log lines expire after EventRetention and DeliveryLogRetention.
type WebhookStore interface {
	// CreateEndpoint stores a new endpoint.
	CreateEndpoint(ctx context.Context, ep *Endpoint) error
	// Endpoint returns the endpoint with id.
	Endpoint(ctx context.Context, id string) (*Endpoint, error)
	// Endpoints returns orgID's endpoints (every endpoint when orgID is
	// empty), oldest first.
	Endpoints(ctx context.Context, orgID string) ([]*Endpoint, error)
	// UpdateEndpoint applies change atomically. When the endpoint is
	// disabled after it, its queued deliveries are then dropped, each
	// logged with reason, before UpdateEndpoint returns; once the change
	// has committed none is queued for it or claimed. Enabling never
	// resumes a delivery that disabling dropped.
	UpdateEndpoint(ctx context.Context, id string, change func(*Endpoint) error) (*Endpoint, error)
	// DeleteEndpoint removes the endpoint, then its queued deliveries,
	// before it returns.
	DeleteEndpoint(ctx context.Context, id string) error

	// AddEvent stores an event that no application change caused
	// (webhook.test) and queues it like the others.
	AddEvent(ctx context.Context, e *Event) error
	// Event returns the event with id, until it expires.
	Event(ctx context.Context, id string) (*Event, error)
	// Events returns up to q.Limit events newest first, and whether more follow.
	Events(ctx context.Context, q EventQuery) ([]*Event, bool, error)
	// Redeliver queues the event again, due at, for endpointID, or (empty)
	// for every enabled endpoint of its organization that wants it; a
	// delivery of it already queued for an endpoint starts over. It returns
	// the endpoints it was queued for.
	Redeliver(ctx context.Context, eventID, endpointID string, at time.Time) ([]string, error)

	// ClaimDeliveries leases up to c.Limit deliveries due at c.Now, earliest
	// first, skipping deliveries of disabled endpoints and deliveries
	// waiting behind an earlier one of their subject. A claimed delivery is
	// due again at its LeaseUntil, so the work of a worker that died is
	// taken up once its lease lapses. next is when the earliest delivery not
	// claimed is due (zero when none is queued), leaving out deliveries held
	// back by their endpoint's c.MaxInFlight: an attempt in flight to that
	// endpoint ends first.
	ClaimDeliveries(ctx context.Context, c Claim) (claimed []*Delivery, next time.Time, err error)
	// FinishDeliveries records a batch of attempts, in order, in one
	// commit: for each, the log line always, and the result when the
	// delivery is still claimed by d.Owner until d.LeaseUntil; lost[i]
	// reports that the i-th claim no longer held. An error is about the
	// whole batch, which then recorded nothing.
	FinishDeliveries(ctx context.Context, batch []FinishedDelivery) (lost []bool, err error)
	// DeliveryAttempts returns lines of the delivery log, newest first.
	DeliveryAttempts(ctx context.Context, q AttemptQuery) ([]DeliveryAttempt, error)
	// QueuedDeliveries counts the deliveries queued and not yet done.
	QueuedDeliveries(ctx context.Context) (int, error)
}

// FinishedDelivery is an attempt for Store.FinishDeliveries to record: the
// delivery as it was claimed, and what the attempt came to.
type FinishedDelivery struct {
	Delivery *Delivery
	Result   DeliveryResult
}

// ErrLeaseLost reports that a delivery being finished is no longer
// under the claim being finished (its lease lapsed and it was claimed again,
// by another worker or the same, or it was dropped).
var ErrLeaseLost = errors.New("the delivery is no longer claimed by this worker")

// WebhookRequest is one delivery attempt for a WebhookTransport to send.
type WebhookRequest struct {
	URL     string
	EventID string // the webhook-id header
	Body    []byte
	// Keys sign the attempt, one v1 signature each (Standard Webhooks):
	// two during a secret rotation.
	Keys      [][]byte
	Timestamp time.Time // the webhook-timestamp header: when this attempt is made
}

// WebhookResponse is the answer to one attempt.
type WebhookResponse struct {
	StatusCode int
	// RetryAfter is the delay a 429 or 503 asked for in its Retry-After
	// header; zero when none.
	RetryAfter time.Duration
	Body       []byte // at most the first MaxLoggedResponse bytes
	Latency    time.Duration
}

// WebhookTransport sends webhook deliveries. The notify package
// implements it over HTTP.
type WebhookTransport interface {
	// Send makes one attempt: a signed POST of r.Body to r.URL, with no
	// redirects followed. It returns an error, with whatever it measured,
	// when no HTTP answer came (a refused destination, a failed
	// connection, the timeout); any answer, 2xx or not, is not an error.
	Send(ctx context.Context, r WebhookRequest) (WebhookResponse, error)
	// CheckURL reports why url cannot be an endpoint (production: not
	// https, or resolving to a private, loopback or link-local address),
	// as an error whose message the operator reads; nil when it can.
	CheckURL(ctx context.Context, url string) error
}
