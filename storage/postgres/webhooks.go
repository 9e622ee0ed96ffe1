package postgres

// Webhook endpoints (the schema is migrations/0003_webhooks.sql). A change
// that disables or removes an endpoint commits first, in a transaction
// that locks the endpoint's row alone; its queue is then dropped in a
// transaction of its own (drainEndpointQueue), before the call returns.
// Taking the row first and the queue's rows after, never the other way
// round while holding the row, keeps these from deadlocking with the
// finishes of attempts, which lock deliveries first and then the endpoint.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"onboard/onboarding"
	"onboard/storage/record"
)

var _ onboarding.WebhookStore = (*Store)(nil)

// errWebhookDuplicate reports an endpoint or event whose id is taken.
var errWebhookDuplicate = errors.New("the id is taken")

// keyTaken reports whether err is PostgreSQL refusing a duplicate key
// (23505).
func keyTaken(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// CreateEndpoint stores a new endpoint.
func (s *Store) CreateEndpoint(ctx context.Context, ep *onboarding.Endpoint) error {
	rec, err := record.Encode(ep)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO webhook_endpoints (id, org_id, enabled, record) VALUES ($1, $2, $3, $4)`,
		ep.ID, ep.OrgID, ep.Enabled, rec)
	if keyTaken(err) {
		return fmt.Errorf("create endpoint %s: %w", ep.ID, errWebhookDuplicate)
	}
	s.endpoints.forget(ep.OrgID)
	return err
}

// Endpoint returns the endpoint with id, or onboarding.ErrNotFound.
func (s *Store) Endpoint(ctx context.Context, id string) (*onboarding.Endpoint, error) {
	var rec []byte
	if err := s.pool.QueryRow(ctx, `SELECT record FROM webhook_endpoints WHERE id = $1`, id).Scan(&rec); err != nil {
		return nil, notFound(err)
	}
	return decodeEndpoint(rec)
}

// decodeEndpoint decodes an endpoint record.
func decodeEndpoint(rec []byte) (*onboarding.Endpoint, error) {
	var ep onboarding.Endpoint
	if err := record.Decode(rec, &ep); err != nil {
		return nil, err
	}
	return &ep, nil
}

// Endpoints returns orgID's endpoints (every endpoint when orgID is empty),
// oldest first: in id order, which is creation order for ULID-based ids.
func (s *Store) Endpoints(ctx context.Context, orgID string) ([]*onboarding.Endpoint, error) {
	q, args := `SELECT record FROM webhook_endpoints ORDER BY id`, []any{}
	if orgID != "" {
		q, args = `SELECT record FROM webhook_endpoints WHERE org_id = $1 ORDER BY id`, []any{orgID}
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	recs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	var out []*onboarding.Endpoint
	for _, rec := range recs {
		ep, err := decodeEndpoint(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, nil
}

// UpdateEndpoint applies change to the endpoint in a transaction that
// locks its row only. When the endpoint is disabled after the change, its
// queue is then dropped, each delivery with a log line saying why
// (drainEndpointQueue), before UpdateEndpoint returns. A change that
// enables a disabled endpoint whose queue still holds deliveries (a drop
// that failed) drops them first and tries again, so that enabling never
// resumes a delivery that disabling dropped: while an endpoint is disabled
// nothing joins its queue, so the queue it is enabled with is empty.
func (s *Store) UpdateEndpoint(ctx context.Context, id string, change func(*onboarding.Endpoint) error) (*onboarding.Endpoint, error) {
	return onboarding.ChangeEndpointThenDrop(maxAttempts,
		func() (*onboarding.Endpoint, error) { return s.changeEndpoint(ctx, id, change) },
		func() error { return s.drainEndpointQueue(ctx, id, s.now()) })
}

// changeEndpoint is UpdateEndpoint's transaction: it applies change to
// the endpoint's record under its row lock, and answers
// onboarding.ErrQueueLeft, committing nothing, when the change would
// enable it with deliveries still queued.
func (s *Store) changeEndpoint(ctx context.Context, id string, change func(*onboarding.Endpoint) error) (*onboarding.Endpoint, error) {
	var result *onboarding.Endpoint
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// FOR NO KEY UPDATE does not wait for the transactions queueing
		// events for the endpoint (FOR KEY SHARE); the UPDATE below takes
		// the stronger lock that does when it changes enabled.
		var rec []byte
		if err := tx.QueryRow(ctx, `SELECT record FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&rec); err != nil {
			return notFound(err)
		}
		ep, err := decodeEndpoint(rec)
		if err != nil {
			return err
		}
		wasEnabled, org := ep.Enabled, ep.OrgID
		if err := change(ep); err != nil {
			return err
		}
		if ep.ID != id || ep.OrgID != org {
			return fmt.Errorf("update endpoint %s: id and organization are immutable", id)
		}
		if !wasEnabled && ep.Enabled {
			var queued bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE endpoint_id = $1)`, id).Scan(&queued); err != nil {
				return err
			}
			if queued {
				return onboarding.ErrQueueLeft
			}
		}
		if err := writeEndpoint(ctx, tx, ep); err != nil {
			return err
		}
		result = ep
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.endpoints.forget(result.OrgID)
	return result, nil
}

// writeEndpoint stores ep's record and enabled over its row.
func writeEndpoint(ctx context.Context, tx pgx.Tx, ep *onboarding.Endpoint) error {
	rec, err := record.Encode(ep)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE webhook_endpoints SET enabled = $2, record = $3 WHERE id = $1`, ep.ID, ep.Enabled, rec)
	return err
}

// DeleteEndpoint removes the endpoint, then drops its queued deliveries
// without log lines, before it returns. Its delivery log lines stay until
// they expire.
func (s *Store) DeleteEndpoint(ctx context.Context, id string) error {
	var org string
	if err := s.pool.QueryRow(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 RETURNING org_id`, id).Scan(&org); err != nil {
		return notFound(err)
	}
	s.endpoints.forget(org)
	return s.drainEndpointQueue(ctx, id, s.now())
}

// disabledError is the log line's error for a delivery dropped because its
// endpoint was disabled.
func disabledError(reason string) string {
	if reason == "" {
		return "not delivered: the endpoint was disabled"
	}
	return "not delivered: the endpoint was disabled (" + reason + ")"
}

// drainEndpointQueue drops what is queued for the endpoint id, in one
// transaction: with a log line at at for each delivery while the endpoint
// is disabled, without once it is removed. An enabled endpoint's queue is
// left alone: what is queued then was queued after the enabling, which
// commits only with an empty queue (UpdateEndpoint). Deliveries in flight
// are dropped too; finishing them reports the claim lost.
func (s *Store) drainEndpointQueue(ctx context.Context, id string, at time.Time) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var rec []byte
		var ep *onboarding.Endpoint
		switch err := tx.QueryRow(ctx, `SELECT record FROM webhook_endpoints WHERE id = $1`, id).Scan(&rec); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			if ep, err = decodeEndpoint(rec); err != nil {
				return err
			}
			if ep.Enabled {
				return nil
			}
		}
		// Locked in key order, as finishes lock theirs, so that the two
		// wait for each other rather than deadlock.
		rows, err := tx.Query(ctx, `DELETE FROM deliveries d USING (
				SELECT subject, event_id FROM deliveries WHERE endpoint_id = $1
				ORDER BY subject, event_id FOR UPDATE) l
			WHERE d.endpoint_id = $1 AND d.subject = l.subject AND d.event_id = l.event_id
			RETURNING d.event_id, d.event_type, d.attempts`, id)
		if err != nil {
			return err
		}
		var lines []onboarding.DeliveryAttempt
		var eventID, eventType string
		var attempts int
		_, err = pgx.ForEachRow(rows, []any{&eventID, &eventType, &attempts}, func() error {
			if ep != nil {
				lines = append(lines, onboarding.DeliveryAttempt{
					EventID: eventID, EventType: onboarding.EventType(eventType), EndpointID: id, OrgID: ep.OrgID,
					Attempt: attempts, At: at, Error: disabledError(ep.DisabledReason),
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		return s.writeAttempts(ctx, tx, lines)
	})
	if err != nil {
		return fmt.Errorf("drop the queue of endpoint %s: %w", id, err)
	}
	return nil
}
