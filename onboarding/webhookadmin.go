package onboarding

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The operator's webhook commands (docs/cli.md): endpoints are managed from
// the CLI, directly or through the running server's admin socket.

// endpointIDPrefix starts every endpoint id: "we_" and a ULID.
const endpointIDPrefix = "we_"

// maxEndpointDescription bounds an endpoint's description, in characters.
const maxEndpointDescription = 200

// maxSigningSecrets bounds the secrets that sign an endpoint's deliveries
// at once: the current one and those rotated out in the last SecretOverlap.
const maxSigningSecrets = 5

// Reasons an endpoint is disabled, as `webhooks list` shows them.
const (
	DisabledByOperator  = "disabled by the operator"
	DisabledGone        = "the endpoint answered 410 Gone"
	disabledExhaustedFm = "%d events in a row failed every delivery attempt"
)

// EndpointSpec is an endpoint to register.
type EndpointSpec struct {
	OrgID       string
	URL         string
	Events      []string // event type names; empty: every type
	Description string
}

// ErrEndpointNotFound is the error for an endpoint id that does not exist.
func ErrEndpointNotFound(id string) *Error {
	return Errorf(KindNotFound, "webhook endpoint '%s' not found", id)
}

// AddEndpoint registers an endpoint and returns its signing secret
// (whsec_...), the only time the secret is shown.
func (s *Service) AddEndpoint(ctx context.Context, spec EndpointSpec) (string, *Endpoint, error) {
	if _, ok := s.orgs[spec.OrgID]; !ok {
		return "", nil, Errorf(KindInvalid, "unknown organization '%s'", spec.OrgID)
	}
	url := strings.TrimSpace(spec.URL)
	if url == "" {
		return "", nil, Errorf(KindInvalid, "a webhook URL is required")
	}
	if err := s.checkEndpointURL(ctx, url); err != nil {
		return "", nil, err
	}
	events, err := parseEventFilter(spec.Events)
	if err != nil {
		return "", nil, err
	}
	desc := strings.TrimSpace(spec.Description)
	switch {
	case utf8.RuneCountInString(desc) > maxEndpointDescription:
		return "", nil, Errorf(KindInvalid, "a description is at most %d characters", maxEndpointDescription)
	case strings.ContainsFunc(desc, isControl):
		return "", nil, Errorf(KindInvalid, "a description must be one line, without control characters")
	}
	now := s.now().UTC()
	seq, err := s.nextSeq(now)
	if err != nil {
		return "", nil, err
	}
	key, err := newSigningKey(s.random)
	if err != nil {
		return "", nil, err
	}
	ep := &Endpoint{
		ID: endpointIDPrefix + seq.String(), OrgID: spec.OrgID, URL: url, Description: desc,
		Events: events, Enabled: true, CreatedAt: now,
		Secrets: []SigningSecret{{Key: key, CreatedAt: now}},
	}
	if err := s.store.CreateEndpoint(ctx, ep); err != nil {
		return "", nil, fmt.Errorf("create webhook endpoint: %w", err)
	}
	s.log.Info("webhook endpoint added", "endpoint_id", ep.ID, "org", ep.OrgID, "url", logURL(ep.URL))
	return FormatSecret(key), ep, nil
}

// checkEndpointURL asks the transport whether url may receive webhooks.
func (s *Service) checkEndpointURL(ctx context.Context, url string) error {
	if s.webhooks == nil {
		return errors.New("webhooks: no transport is configured")
	}
	if err := s.webhooks.CheckURL(ctx, url); err != nil {
		return Errorf(KindInvalid, "Invalid webhook URL: %s", err.Error())
	}
	return nil
}

// parseEventFilter validates an endpoint's event types; none means all.
func parseEventFilter(names []string) ([]EventType, error) {
	var out []EventType
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return nil, Errorf(KindInvalid, "an event type is required after --event (leave --event out to receive every type)")
		}
		for _, part := range strings.Split(n, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				return nil, Errorf(KindInvalid, "an event type is required after --event (leave --event out to receive every type)")
			}
			t, err := ParseEventType(part)
			if err != nil {
				valid := make([]string, 0, len(EventTypes()))
				for _, v := range EventTypes() {
					valid = append(valid, string(v))
				}
				return nil, Errorf(KindInvalid, "unknown event type '%s' (valid types: %s)", part, strings.Join(valid, ", "))
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// isControl reports characters that have no place in a one-line note:
// control characters, and the bidirectional controls that make text read
// other than it is stored.
func isControl(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }

func newSigningKey(r io.Reader) ([]byte, error) {
	key := make([]byte, signingKeyBytes)
	if _, err := io.ReadFull(r, key); err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	return key, nil
}

// Endpoints lists the endpoints of orgID, or of every organization when
// orgID is empty, oldest first.
func (s *Service) Endpoints(ctx context.Context, orgID string) ([]*Endpoint, error) {
	if orgID != "" {
		if _, ok := s.orgs[orgID]; !ok {
			return nil, Errorf(KindInvalid, "unknown organization '%s'", orgID)
		}
	}
	eps, err := s.store.Endpoints(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return eps, nil
}

// RemoveEndpoint deletes an endpoint; its queued deliveries are dropped.
func (s *Service) RemoveEndpoint(ctx context.Context, id string) error {
	if _, err := s.endpoint(ctx, id); err != nil {
		return err
	}
	if err := s.store.DeleteEndpoint(ctx, id); err != nil {
		if errors.Is(err, ErrNotFound) {
			return ErrEndpointNotFound(id)
		}
		return fmt.Errorf("remove webhook endpoint: %w", err)
	}
	s.log.Info("webhook endpoint removed", "endpoint_id", id)
	return nil
}

// EnableEndpoint turns deliveries to an endpoint back on, and gives it a
// fresh count of failed events. Events committed while it was disabled are
// not sent: the partner reconciles them from the events API, or the
// operator redelivers them. changed is false when it was enabled already
// (nothing is written then).
func (s *Service) EnableEndpoint(ctx context.Context, id string) (ep *Endpoint, changed bool, err error) {
	ep, err = s.changeEndpoint(ctx, id, func(ep *Endpoint) error {
		changed = !ep.Enabled
		if changed {
			ep.Enabled, ep.DisabledReason, ep.Exhausted = true, "", 0
		}
		return nil
	})
	if err == nil && changed {
		s.wakeWebhooks()
	}
	return ep, changed, err
}

// DisableEndpoint stops deliveries to an endpoint; its queued deliveries
// are dropped, each with a line in the delivery log. changed is false when
// it was disabled already, whatever the reason (which it keeps).
func (s *Service) DisableEndpoint(ctx context.Context, id string) (ep *Endpoint, changed bool, err error) {
	ep, err = s.changeEndpoint(ctx, id, func(ep *Endpoint) error {
		changed = ep.Enabled
		if changed {
			ep.Enabled, ep.DisabledReason = false, DisabledByOperator
		}
		return nil
	})
	return ep, changed, err
}

// RotateEndpointSecret gives an endpoint a new signing secret and returns
// it, shown once. Every earlier secret keeps signing beside it until
// SecretOverlap after it was rotated out, so a receiver that has not
// switched yet loses nothing, however often the secret is rotated; at most
// maxSigningSecrets sign at once.
func (s *Service) RotateEndpointSecret(ctx context.Context, id string) (string, *Endpoint, error) {
	key, err := newSigningKey(s.random)
	if err != nil {
		return "", nil, err
	}
	now := s.now().UTC()
	ep, err := s.changeEndpoint(ctx, id, func(ep *Endpoint) error {
		kept := []SigningSecret{{Key: key, CreatedAt: now}}
		for _, old := range ep.Secrets {
			switch {
			case old.ExpiresAt == nil:
				until := now.Add(SecretOverlap)
				old.ExpiresAt = &until
			case !now.Before(*old.ExpiresAt):
				continue // already stopped signing
			}
			kept = append(kept, old)
		}
		if len(kept) > maxSigningSecrets {
			return Errorf(KindConflict, "webhook endpoint '%s' already has %d secrets signing (its secret was rotated %d times in the last 24 hours); wait until the oldest stops signing at %s",
				id, maxSigningSecrets, maxSigningSecrets-1, kept[len(kept)-1].ExpiresAt.Format(time.RFC3339))
		}
		ep.Secrets = kept
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	s.log.Info("webhook secret rotated", "endpoint_id", id)
	return FormatSecret(key), ep, nil
}

// TestEndpoint sends a webhook.test event to one endpoint, whatever its
// event filter: data is {"endpoint_id"}.
func (s *Service) TestEndpoint(ctx context.Context, id string) (*Event, error) {
	ep, err := s.endpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ep.Enabled {
		return nil, Errorf(KindConflict, "webhook endpoint '%s' is disabled (%s); enable it first", id, ep.DisabledReason)
	}
	e, err := s.newEvent(EventWebhookTest, ep.OrgID, "", s.now().UTC(), struct {
		EndpointID string `json:"endpoint_id"`
	}{ep.ID})
	if err != nil {
		return nil, err
	}
	e.Endpoint = ep.ID
	if err := s.store.AddEvent(ctx, e); err != nil {
		return nil, fmt.Errorf("queue test event: %w", err)
	}
	s.wakeWebhooks()
	return e, nil
}

// Redeliver queues an event again: for endpointID, or (empty) for every
// enabled endpoint of its organization that wants it. Attempts start over.
// It returns the endpoints it was queued for. Another organization's
// endpoint is, for the event, an endpoint not found.
func (s *Service) Redeliver(ctx context.Context, eventID, endpointID string) ([]string, error) {
	if endpointID != "" {
		ep, err := s.endpoint(ctx, endpointID)
		if err != nil {
			return nil, err
		}
		switch e, err := s.store.Event(ctx, eventID); {
		case err == nil && e.OrgID != ep.OrgID:
			return nil, ErrEndpointNotFound(endpointID)
		case err != nil && !errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("redeliver: %w", err)
		}
		if !ep.Enabled {
			return nil, Errorf(KindConflict, "webhook endpoint '%s' is disabled (%s); enable it first", endpointID, ep.DisabledReason)
		}
	}
	queued, err := s.store.Redeliver(ctx, eventID, endpointID, s.now().UTC())
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, "event '%s' not found (events are kept %d days)", eventID, int(EventRetention/(24*time.Hour)))
	}
	if err != nil {
		return nil, fmt.Errorf("redeliver: %w", err)
	}
	if len(queued) == 0 {
		return nil, Errorf(KindConflict, "no enabled endpoint wants event '%s'", eventID)
	}
	s.wakeWebhooks()
	return queued, nil
}

// DeliveryAttempts returns lines of the delivery log, newest first.
func (s *Service) DeliveryAttempts(ctx context.Context, q AttemptQuery) ([]DeliveryAttempt, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	out, err := s.store.DeliveryAttempts(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read delivery log: %w", err)
	}
	return out, nil
}

func (s *Service) endpoint(ctx context.Context, id string) (*Endpoint, error) {
	ep, err := s.store.Endpoint(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrEndpointNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("load webhook endpoint: %w", err)
	}
	return ep, nil
}

func (s *Service) changeEndpoint(ctx context.Context, id string, change func(*Endpoint) error) (*Endpoint, error) {
	ep, err := s.store.UpdateEndpoint(ctx, id, change)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrEndpointNotFound(id)
	}
	if err != nil {
		if AsError(err) != nil {
			return nil, err
		}
		return nil, fmt.Errorf("update webhook endpoint: %w", err)
	}
	return ep, nil
}
