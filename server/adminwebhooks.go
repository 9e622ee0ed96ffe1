package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"onboard/onboarding"
)

// The webhook commands of the admin socket (DESIGN §4): onboard webhooks
// add, list, remove, enable, disable, test, rotate-secret, deliveries and
// redeliver.

// AdminEndpoint is a webhook endpoint as the admin socket and `webhooks
// list --json` show it: never its signing secrets.
type AdminEndpoint struct {
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

// AdminSwitchedEndpoint is an endpoint after it was enabled or disabled.
type AdminSwitchedEndpoint struct {
	AdminEndpoint
	// Unchanged is true when it was enabled (disabled) already.
	Unchanged bool `json:"unchanged"`
}

// AdminEndpointOf converts a stored endpoint into its admin view.
func AdminEndpointOf(ep *onboarding.Endpoint) AdminEndpoint {
	events := make([]string, len(ep.Events))
	for i, t := range ep.Events {
		events[i] = string(t)
	}
	return AdminEndpoint{
		ID: ep.ID, OrgID: ep.OrgID, URL: ep.URL, Description: ep.Description, Events: events,
		Enabled: ep.Enabled, DisabledReason: ep.DisabledReason, CreatedAt: ep.CreatedAt,
	}
}

// AdminAddEndpoint is the body of an endpoint registration on the admin
// socket.
type AdminAddEndpoint struct {
	OrgID       string   `json:"org"`
	URL         string   `json:"url"`
	Events      []string `json:"events"` // empty: every type
	Description string   `json:"description"`
}

// AdminAddedEndpoint is the answer to a registration: the signing secret,
// shown once, and the endpoint.
type AdminAddedEndpoint struct {
	Secret   string        `json:"secret"`
	Endpoint AdminEndpoint `json:"endpoint"`
}

// AdminRotatedSecret is the answer to a secret rotation: the new secret,
// shown once, and when the previous one stops signing.
type AdminRotatedSecret struct {
	Secret        string        `json:"secret"`
	PreviousUntil time.Time     `json:"previous_until"`
	Endpoint      AdminEndpoint `json:"endpoint"`
}

// AdminTestEvent is the answer to a test: the webhook.test event queued for
// the endpoint.
type AdminTestEvent struct {
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
}

// AdminRedeliver is the body of a redelivery on the admin socket.
type AdminRedeliver struct {
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"` // empty: every enabled endpoint that wants the event
}

// AdminRedelivery is the answer to a redelivery: the endpoints the event
// was queued for.
type AdminRedelivery struct {
	EventID   string   `json:"event_id"`
	Endpoints []string `json:"endpoints"`
}

// AdminDeliveryQuery selects lines of the delivery log.
type AdminDeliveryQuery struct {
	EndpointID string // empty: every endpoint
	EventID    string // empty: every event
	FailedOnly bool
	Limit      int // 0: the Service's default
}

// AdminDeliveryAttempt is one line of the delivery log as the admin socket
// and `webhooks deliveries --json` show it.
type AdminDeliveryAttempt struct {
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

// WebhookAdmin runs the webhook commands on a Service, for the admin
// socket and for the CLI's direct path alike.
type WebhookAdmin struct{ Service *onboarding.Service }

// AddEndpoint registers an endpoint; the answer holds its secret, shown once.
func (a WebhookAdmin) AddEndpoint(ctx context.Context, req AdminAddEndpoint) (AdminAddedEndpoint, error) {
	secret, ep, err := a.Service.AddEndpoint(ctx, onboarding.EndpointSpec{
		OrgID: req.OrgID, URL: req.URL, Events: req.Events, Description: req.Description,
	})
	if err != nil {
		return AdminAddedEndpoint{}, err
	}
	return AdminAddedEndpoint{Secret: secret, Endpoint: AdminEndpointOf(ep)}, nil
}

// ListEndpoints lists the endpoints of org, or every endpoint when org is
// empty, oldest first.
func (a WebhookAdmin) ListEndpoints(ctx context.Context, org string) ([]AdminEndpoint, error) {
	eps, err := a.Service.Endpoints(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make([]AdminEndpoint, len(eps))
	for i, ep := range eps {
		out[i] = AdminEndpointOf(ep)
	}
	return out, nil
}

// RemoveEndpoint deletes an endpoint and drops its queued deliveries.
func (a WebhookAdmin) RemoveEndpoint(ctx context.Context, id string) error {
	return a.Service.RemoveEndpoint(ctx, id)
}

// EnableEndpoint turns deliveries to an endpoint back on.
func (a WebhookAdmin) EnableEndpoint(ctx context.Context, id string) (AdminSwitchedEndpoint, error) {
	return switchedView(a.Service.EnableEndpoint(ctx, id))
}

// DisableEndpoint stops deliveries to an endpoint.
func (a WebhookAdmin) DisableEndpoint(ctx context.Context, id string) (AdminSwitchedEndpoint, error) {
	return switchedView(a.Service.DisableEndpoint(ctx, id))
}

// switchedView is the admin view of an endpoint that was enabled or
// disabled, changed or not.
func switchedView(ep *onboarding.Endpoint, changed bool, err error) (AdminSwitchedEndpoint, error) {
	if err != nil {
		return AdminSwitchedEndpoint{}, err
	}
	return AdminSwitchedEndpoint{AdminEndpoint: AdminEndpointOf(ep), Unchanged: !changed}, nil
}

// RotateEndpointSecret gives an endpoint a new secret; the answer holds it,
// shown once, and when the previous secret stops signing.
func (a WebhookAdmin) RotateEndpointSecret(ctx context.Context, id string) (AdminRotatedSecret, error) {
	secret, ep, err := a.Service.RotateEndpointSecret(ctx, id)
	if err != nil {
		return AdminRotatedSecret{}, err
	}
	out := AdminRotatedSecret{Secret: secret, Endpoint: AdminEndpointOf(ep)}
	for _, s := range ep.Secrets {
		if s.ExpiresAt != nil && s.ExpiresAt.After(out.PreviousUntil) {
			out.PreviousUntil = s.ExpiresAt.UTC()
		}
	}
	return out, nil
}

// TestEndpoint queues a webhook.test event for an endpoint.
func (a WebhookAdmin) TestEndpoint(ctx context.Context, id string) (AdminTestEvent, error) {
	e, err := a.Service.TestEndpoint(ctx, id)
	if err != nil {
		return AdminTestEvent{}, err
	}
	return AdminTestEvent{EventID: e.ID, EndpointID: id}, nil
}

// Redeliver queues an event again, for one endpoint or for every enabled
// endpoint that wants it.
func (a WebhookAdmin) Redeliver(ctx context.Context, req AdminRedeliver) (AdminRedelivery, error) {
	queued, err := a.Service.Redeliver(ctx, req.EventID, req.EndpointID)
	if err != nil {
		return AdminRedelivery{}, err
	}
	return AdminRedelivery{EventID: req.EventID, Endpoints: queued}, nil
}

// DeliveryAttempts returns lines of the delivery log, newest first.
func (a WebhookAdmin) DeliveryAttempts(ctx context.Context, q AdminDeliveryQuery) ([]AdminDeliveryAttempt, error) {
	if q.Limit < 0 {
		return nil, onboarding.Errorf(onboarding.KindInvalid, "Invalid limit %d: it must be positive", q.Limit)
	}
	lines, err := a.Service.DeliveryAttempts(ctx, onboarding.AttemptQuery{
		EndpointID: q.EndpointID, EventID: q.EventID, FailedOnly: q.FailedOnly, Limit: q.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]AdminDeliveryAttempt, len(lines))
	for i, l := range lines {
		out[i] = AdminDeliveryAttempt{
			EventID: l.EventID, EventType: string(l.EventType), EndpointID: l.EndpointID, Attempt: l.Attempt,
			At: l.At.UTC(), StatusCode: l.StatusCode, LatencyMS: l.Latency.Milliseconds(), Error: l.Error, Success: l.Success,
		}
	}
	return out, nil
}

// webhookRoutes adds the webhook commands to the admin socket's mux.
func (s *Server) webhookRoutes(mux *http.ServeMux) {
	hooks := WebhookAdmin{s.svc}
	mux.HandleFunc("POST /webhooks", func(w http.ResponseWriter, r *http.Request) {
		var req AdminAddEndpoint
		if !s.adminDecode(w, r, &req) {
			return
		}
		added, err := hooks.AddEndpoint(r.Context(), req)
		s.adminReply(w, http.StatusCreated, added, err)
	})
	mux.HandleFunc("GET /webhooks", func(w http.ResponseWriter, r *http.Request) {
		eps, err := hooks.ListEndpoints(r.Context(), r.URL.Query().Get("org"))
		s.adminReply(w, http.StatusOK, eps, err)
	})
	mux.HandleFunc("DELETE /webhooks/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := hooks.RemoveEndpoint(r.Context(), r.PathValue("id")); err != nil {
			s.adminError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /webhooks/{id}/enable", func(w http.ResponseWriter, r *http.Request) {
		ep, err := hooks.EnableEndpoint(r.Context(), r.PathValue("id"))
		s.adminReply(w, http.StatusOK, ep, err)
	})
	mux.HandleFunc("POST /webhooks/{id}/disable", func(w http.ResponseWriter, r *http.Request) {
		ep, err := hooks.DisableEndpoint(r.Context(), r.PathValue("id"))
		s.adminReply(w, http.StatusOK, ep, err)
	})
	mux.HandleFunc("POST /webhooks/{id}/rotate-secret", func(w http.ResponseWriter, r *http.Request) {
		rotated, err := hooks.RotateEndpointSecret(r.Context(), r.PathValue("id"))
		s.adminReply(w, http.StatusOK, rotated, err)
	})
	mux.HandleFunc("POST /webhooks/{id}/test", func(w http.ResponseWriter, r *http.Request) {
		queued, err := hooks.TestEndpoint(r.Context(), r.PathValue("id"))
		s.adminReply(w, http.StatusAccepted, queued, err)
	})
	mux.HandleFunc("GET /webhook-deliveries", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		query := AdminDeliveryQuery{EndpointID: q.Get("endpoint"), EventID: q.Get("event"), FailedOnly: q.Get("failed") == "true"}
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				s.adminError(w, onboarding.Errorf(onboarding.KindInvalid, "Invalid limit '%s'", v))
				return
			}
			query.Limit = n
		}
		lines, err := hooks.DeliveryAttempts(r.Context(), query)
		s.adminReply(w, http.StatusOK, lines, err)
	})
	mux.HandleFunc("POST /events/{id}/redeliver", func(w http.ResponseWriter, r *http.Request) {
		var req AdminRedeliver
		if !s.adminDecode(w, r, &req) {
			return
		}
		req.EventID = r.PathValue("id")
		queued, err := hooks.Redeliver(r.Context(), req)
		s.adminReply(w, http.StatusAccepted, queued, err)
	})
}

// maxAdminBody bounds an admin request body. The commands build their
// bodies from command-line arguments, which Linux caps at 128 KiB each
// (MAX_ARG_STRLEN), at most six bytes of JSON a byte (control characters
// are refused before): no command line reaches the limit, so a value too
// long gets the same message through the admin socket as on the store
// opened directly (a key name of 100,000 characters got "Invalid JSON
// body" here with a limit of 64 KiB).
const maxAdminBody = 1 << 20

// adminDecode reads a JSON request body into v as the API does
// (DecodeJSON: no key twice, member names exact), or answers
// the error: Invalid JSON body for one that is empty, over maxAdminBody
// or not JSON.
func (s *Server) adminDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	switch {
	case err != nil:
		err = onboarding.ErrBodyUnreadable
	case len(bytes.TrimSpace(body)) == 0 || len(body) > maxAdminBody:
		err = onboarding.ErrInvalidJSON
	default:
		err = DecodeJSON(body, v)
	}
	if err != nil {
		s.adminError(w, err)
		return false
	}
	return true
}

// AddEndpoint registers an endpoint through the running server.
func (c *AdminClient) AddEndpoint(ctx context.Context, req AdminAddEndpoint) (AdminAddedEndpoint, error) {
	var out AdminAddedEndpoint
	err := c.do(ctx, http.MethodPost, "/webhooks", req, &out)
	return out, err
}

// ListEndpoints lists endpoints through the running server; org may be empty.
func (c *AdminClient) ListEndpoints(ctx context.Context, org string) ([]AdminEndpoint, error) {
	var out []AdminEndpoint
	err := c.do(ctx, http.MethodGet, "/webhooks?org="+url.QueryEscape(org), nil, &out)
	return out, err
}

// RemoveEndpoint deletes an endpoint through the running server.
func (c *AdminClient) RemoveEndpoint(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/webhooks/"+url.PathEscape(id), nil, nil)
}

// EnableEndpoint enables an endpoint through the running server.
func (c *AdminClient) EnableEndpoint(ctx context.Context, id string) (AdminSwitchedEndpoint, error) {
	var out AdminSwitchedEndpoint
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/enable", nil, &out)
	return out, err
}

// DisableEndpoint disables an endpoint through the running server.
func (c *AdminClient) DisableEndpoint(ctx context.Context, id string) (AdminSwitchedEndpoint, error) {
	var out AdminSwitchedEndpoint
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/disable", nil, &out)
	return out, err
}

// RotateEndpointSecret rotates an endpoint's secret through the running server.
func (c *AdminClient) RotateEndpointSecret(ctx context.Context, id string) (AdminRotatedSecret, error) {
	var out AdminRotatedSecret
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/rotate-secret", nil, &out)
	return out, err
}

// TestEndpoint queues a webhook.test event through the running server.
func (c *AdminClient) TestEndpoint(ctx context.Context, id string) (AdminTestEvent, error) {
	var out AdminTestEvent
	err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/test", nil, &out)
	return out, err
}

// Redeliver queues an event again through the running server.
func (c *AdminClient) Redeliver(ctx context.Context, req AdminRedeliver) (AdminRedelivery, error) {
	var out AdminRedelivery
	err := c.do(ctx, http.MethodPost, "/events/"+url.PathEscape(req.EventID)+"/redeliver", req, &out)
	return out, err
}

// DeliveryAttempts reads the delivery log through the running server.
func (c *AdminClient) DeliveryAttempts(ctx context.Context, q AdminDeliveryQuery) ([]AdminDeliveryAttempt, error) {
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
	var out []AdminDeliveryAttempt
	err := c.do(ctx, http.MethodGet, "/webhook-deliveries?"+v.Encode(), nil, &out)
	return out, err
}
