package admin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"onboard/onboarding"
	"onboard/server/web"
)

// The webhook commands of the admin socket (docs/cli.md): onboard webhooks
// add, list, remove, enable, disable, test, rotate-secret, deliveries and
// redeliver.

// Endpoint is a webhook endpoint as the admin socket and `webhooks
// list --json` show it: never its signing secrets.
type Endpoint struct {
	ID          string `json:"id"`
	OrgID       string `json:"org"`
	URL         string `json:"url"`
	Description string `json:"description"`
	// Events are the types it receives; empty (never null) means every type.
	Events         []string  `json:"events"`
	Enabled        bool      `json:"enabled"`
	DisabledReason string    `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
}

// SwitchedEndpoint is an endpoint after it was enabled or disabled.
type SwitchedEndpoint struct {
	Endpoint
	// Unchanged is true when it was enabled (disabled) already.
	Unchanged bool `json:"unchanged"`
}

// EndpointOf converts a stored endpoint into its admin view.
func EndpointOf(ep *onboarding.Endpoint) Endpoint {
	events := make([]string, len(ep.Events))
	for i, t := range ep.Events {
		events[i] = string(t)
	}
	return Endpoint{
		ID: ep.ID, OrgID: ep.OrgID, URL: ep.URL, Description: ep.Description, Events: events,
		Enabled: ep.Enabled, DisabledReason: ep.DisabledReason, CreatedAt: ep.CreatedAt,
	}
}

// AddEndpoint is the body of an endpoint registration on the admin
// socket.
type AddEndpoint struct {
	OrgID       string   `json:"org"`
	URL         string   `json:"url"`
	Events      []string `json:"events" nullable:"true"` // empty or null: every type
	Description string   `json:"description"`
}

// AddedEndpoint is the answer to a registration: the signing secret,
// shown once, and the endpoint.
type AddedEndpoint struct {
	Secret   string   `json:"secret"`
	Endpoint Endpoint `json:"endpoint"`
}

// RotatedSecret is the answer to a secret rotation: the new secret,
// shown once, and when the previous one stops signing.
type RotatedSecret struct {
	Secret        string    `json:"secret"`
	PreviousUntil time.Time `json:"previous_until"`
	Endpoint      Endpoint  `json:"endpoint"`
}

// TestEvent is the answer to a test: the webhook.test event queued for
// the endpoint.
type TestEvent struct {
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
}

// Redeliver is the body of a redelivery on the admin socket.
type Redeliver struct {
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"` // empty: every enabled endpoint that wants the event
}

// Redelivery is the answer to a redelivery: the endpoints the event
// was queued for.
type Redelivery struct {
	EventID   string   `json:"event_id"`
	Endpoints []string `json:"endpoints"`
}

// DeliveryQuery selects lines of the delivery log.
type DeliveryQuery struct {
	EndpointID string // empty: every endpoint
	EventID    string // empty: every event
	FailedOnly bool
	Limit      int // 0: the Service's default
}

// DeliveryAttempt is one line of the delivery log as the admin socket
// and `webhooks deliveries --json` show it.
type DeliveryAttempt struct {
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	EndpointID string    `json:"endpoint_id"`
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code"` // 0 when no HTTP answer came
	LatencyMS  int64     `json:"latency_ms"`
	Error      string    `json:"error"` // empty on success
	Success    bool      `json:"success"`
}

// AddEndpoint registers an endpoint; the answer holds its secret, shown once.
func (a Local) AddEndpoint(ctx context.Context, req AddEndpoint) (AddedEndpoint, error) {
	secret, ep, err := a.Service.AddEndpoint(ctx, onboarding.EndpointSpec{
		OrgID: req.OrgID, URL: req.URL, Events: req.Events, Description: req.Description,
	})
	if err != nil {
		return AddedEndpoint{}, err
	}
	return AddedEndpoint{Secret: secret, Endpoint: EndpointOf(ep)}, nil
}

// ListEndpoints lists the endpoints of org, or every endpoint when org is
// empty, oldest first.
func (a Local) ListEndpoints(ctx context.Context, org string) ([]Endpoint, error) {
	eps, err := a.Service.Endpoints(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = EndpointOf(ep)
	}
	return out, nil
}

// RemoveEndpoint deletes an endpoint and drops its queued deliveries.
func (a Local) RemoveEndpoint(ctx context.Context, id string) error {
	return a.Service.RemoveEndpoint(ctx, id)
}

// EnableEndpoint turns deliveries to an endpoint back on.
func (a Local) EnableEndpoint(ctx context.Context, id string) (SwitchedEndpoint, error) {
	return switchedView(a.Service.EnableEndpoint(ctx, id))
}

// DisableEndpoint stops deliveries to an endpoint.
func (a Local) DisableEndpoint(ctx context.Context, id string) (SwitchedEndpoint, error) {
	return switchedView(a.Service.DisableEndpoint(ctx, id))
}

// switchedView is the admin view of an endpoint that was enabled or
// disabled, changed or not.
func switchedView(ep *onboarding.Endpoint, changed bool, err error) (SwitchedEndpoint, error) {
	if err != nil {
		return SwitchedEndpoint{}, err
	}
	return SwitchedEndpoint{Endpoint: EndpointOf(ep), Unchanged: !changed}, nil
}

// RotateEndpointSecret gives an endpoint a new secret; the answer holds it,
// shown once, and when the previous secret stops signing.
func (a Local) RotateEndpointSecret(ctx context.Context, id string) (RotatedSecret, error) {
	secret, ep, err := a.Service.RotateEndpointSecret(ctx, id)
	if err != nil {
		return RotatedSecret{}, err
	}
	out := RotatedSecret{Secret: secret, Endpoint: EndpointOf(ep)}
	for _, s := range ep.Secrets {
		if s.ExpiresAt != nil && s.ExpiresAt.After(out.PreviousUntil) {
			out.PreviousUntil = s.ExpiresAt.UTC()
		}
	}
	return out, nil
}

// TestEndpoint queues a webhook.test event for an endpoint.
func (a Local) TestEndpoint(ctx context.Context, id string) (TestEvent, error) {
	e, err := a.Service.TestEndpoint(ctx, id)
	if err != nil {
		return TestEvent{}, err
	}
	return TestEvent{EventID: e.ID, EndpointID: id}, nil
}

// Redeliver queues an event again, for one endpoint or for every enabled
// endpoint that wants it.
func (a Local) Redeliver(ctx context.Context, req Redeliver) (Redelivery, error) {
	queued, err := a.Service.Redeliver(ctx, req.EventID, req.EndpointID)
	if err != nil {
		return Redelivery{}, err
	}
	return Redelivery{EventID: req.EventID, Endpoints: queued}, nil
}

// DeliveryAttempts returns lines of the delivery log, newest first.
func (a Local) DeliveryAttempts(ctx context.Context, q DeliveryQuery) ([]DeliveryAttempt, error) {
	if q.Limit < 0 {
		return nil, onboarding.Errorf(onboarding.KindInvalid, "Invalid limit %d: it must be positive", q.Limit)
	}
	lines, err := a.Service.DeliveryAttempts(ctx, onboarding.AttemptQuery{
		EndpointID: q.EndpointID, EventID: q.EventID, FailedOnly: q.FailedOnly, Limit: q.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]DeliveryAttempt, len(lines))
	for i, l := range lines {
		out[i] = DeliveryAttempt{
			EventID: l.EventID, EventType: string(l.EventType), EndpointID: l.EndpointID, Attempt: l.Attempt,
			At: l.At.UTC(), StatusCode: l.StatusCode, LatencyMS: l.Latency.Milliseconds(), Error: l.Error, Success: l.Success,
		}
	}
	return out, nil
}

// webhookRoutes adds the webhook commands to the admin socket's mux.
func (s *handler) webhookRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /webhooks", func(w http.ResponseWriter, r *http.Request) {
		var req AddEndpoint
		if !s.decode(w, r, &req) {
			return
		}
		added, err := s.local.AddEndpoint(r.Context(), req)
		s.reply(w, http.StatusCreated, added, err)
	})
	mux.HandleFunc("GET /webhooks", func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.query(w, r, "org")
		if !ok {
			return
		}
		eps, err := s.local.ListEndpoints(r.Context(), q.Get("org"))
		s.reply(w, http.StatusOK, eps, err)
	})
	mux.HandleFunc("DELETE /webhooks/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := s.local.RemoveEndpoint(r.Context(), r.PathValue("id")); err != nil {
			s.fail(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /webhooks/{id}/enable", func(w http.ResponseWriter, r *http.Request) {
		ep, err := s.local.EnableEndpoint(r.Context(), r.PathValue("id"))
		s.reply(w, http.StatusOK, ep, err)
	})
	mux.HandleFunc("POST /webhooks/{id}/disable", func(w http.ResponseWriter, r *http.Request) {
		ep, err := s.local.DisableEndpoint(r.Context(), r.PathValue("id"))
		s.reply(w, http.StatusOK, ep, err)
	})
	mux.HandleFunc("POST /webhooks/{id}/rotate-secret", func(w http.ResponseWriter, r *http.Request) {
		rotated, err := s.local.RotateEndpointSecret(r.Context(), r.PathValue("id"))
		s.reply(w, http.StatusOK, rotated, err)
	})
	mux.HandleFunc("POST /webhooks/{id}/test", func(w http.ResponseWriter, r *http.Request) {
		queued, err := s.local.TestEndpoint(r.Context(), r.PathValue("id"))
		s.reply(w, http.StatusAccepted, queued, err)
	})
	mux.HandleFunc("GET /webhook-deliveries", func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.query(w, r, "endpoint", "event", "failed", "limit")
		if !ok {
			return
		}
		query := DeliveryQuery{EndpointID: q.Get("endpoint"), EventID: q.Get("event"), FailedOnly: q.Get("failed") == "true"}
		if q.Has("limit") { // given empty, it is refused as any other limit that is not a number
			v := q.Get("limit")
			n, err := strconv.Atoi(v)
			if err != nil {
				s.fail(w, onboarding.Errorf(onboarding.KindInvalid, "Invalid limit '%s'", v))
				return
			}
			query.Limit = n
		}
		lines, err := s.local.DeliveryAttempts(r.Context(), query)
		s.reply(w, http.StatusOK, lines, err)
	})
	mux.HandleFunc("POST /events/{id}/redeliver", func(w http.ResponseWriter, r *http.Request) {
		var req Redeliver
		if !s.decode(w, r, &req) {
			return
		}
		req.EventID = r.PathValue("id")
		queued, err := s.local.Redeliver(r.Context(), req)
		s.reply(w, http.StatusAccepted, queued, err)
	})
}

// maxAdminBody bounds an admin request body. The commands build their
// bodies from command-line arguments, which Linux caps at 128 KiB each
// (MAX_ARG_STRLEN), at most six bytes of JSON a byte (control characters
// are refused before): no command line reaches the limit, so a value too
// long gets the same message through the admin socket as on the store
// opened directly, not "Invalid JSON body".
const maxAdminBody = 1 << 20

// decode reads a JSON request body into v as the API does
// (web.DecodeJSON: no key twice, member names exact), or answers
// the error: Invalid JSON body for one that is empty, over maxAdminBody
// or not JSON.
func (s *handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	switch {
	case err != nil:
		err = onboarding.ErrBodyUnreadable
	case len(bytes.TrimSpace(body)) == 0 || len(body) > maxAdminBody:
		err = onboarding.ErrInvalidJSON
	default:
		err = web.DecodeJSON(body, v)
	}
	if err != nil {
		s.fail(w, err)
		return false
	}
	return true
}

// AddEndpoint registers an endpoint through the running server.
func (c *Client) AddEndpoint(ctx context.Context, req AddEndpoint) (AddedEndpoint, error) {
	var out AddedEndpoint
	err := c.do(ctx, http.MethodPost, "/webhooks", req, &out)
	return out, err
}

// ListEndpoints lists endpoints through the running server; org may be empty.
func (c *Client) ListEndpoints(ctx context.Context, org string) ([]Endpoint, error) {
	var out []Endpoint
	err := c.do(ctx, http.MethodGet, "/webhooks?org="+url.QueryEscape(org), nil, &out)
	return out, err
}

// RemoveEndpoint deletes an endpoint through the running server.
func (c *Client) RemoveEndpoint(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/webhooks/"+url.PathEscape(id), nil, nil)
}

// EnableEndpoint enables an endpoint through the running server.
func (c *Client) EnableEndpoint(ctx context.Context, id string) (SwitchedEndpoint, error) {
	var out SwitchedEndpoint
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/enable", nil, &out)
	return out, err
}

// DisableEndpoint disables an endpoint through the running server.
func (c *Client) DisableEndpoint(ctx context.Context, id string) (SwitchedEndpoint, error) {
	var out SwitchedEndpoint
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/disable", nil, &out)
	return out, err
}

// RotateEndpointSecret rotates an endpoint's secret through the running server.
func (c *Client) RotateEndpointSecret(ctx context.Context, id string) (RotatedSecret, error) {
	var out RotatedSecret
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/rotate-secret", nil, &out)
	return out, err
}

// TestEndpoint queues a webhook.test event through the running server.
func (c *Client) TestEndpoint(ctx context.Context, id string) (TestEvent, error) {
	var out TestEvent
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/test", nil, &out)
	return out, err
}

// Redeliver queues an event again through the running server.
func (c *Client) Redeliver(ctx context.Context, req Redeliver) (Redelivery, error) {
	var out Redelivery
	err := c.do(ctx, http.MethodPost, "/events/"+url.PathEscape(req.EventID)+"/redeliver", req, &out)
	return out, err
}

// DeliveryAttempts reads the delivery log through the running server.
func (c *Client) DeliveryAttempts(ctx context.Context, q DeliveryQuery) ([]DeliveryAttempt, error) {
	v := url.Values{}
	if q.EndpointID != "" {
		v.Set("endpoint", q.EndpointID)
	}
	if q.EventID != "" {
		v.Set("event", q.EventID)
	}
	if q.FailedOnly {
		v.Set("failed", "true")
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out []DeliveryAttempt
	err := c.do(ctx, http.MethodGet, "/webhook-deliveries?"+v.Encode(), nil, &out)
	return out, err
}
