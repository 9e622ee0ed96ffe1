package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// webhookSweepEvery is how often an instance sweeps (sweepWebhooks).
const webhookSweepEvery = 10 * time.Minute

// webhookSweepLock is the key of the transaction advisory lock that lets
// one instance sweep at a time: "hooksweep" in ASCII, less its last byte.
const webhookSweepLock = 0x686f6f6b7377656

// webhookSweepBatch bounds the rows one statement of the sweep deletes, so that
// a sweep after a long pause does not hold a long transaction.
const webhookSweepBatch = 10000

// startWebhookSweep starts the goroutine that sweeps every
// webhookSweepEvery until the returned stop is called; stop waits for it.
func (s *Store) startWebhookSweep() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(webhookSweepEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := s.sweepWebhooks(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("webhooks: sweep", "err", err)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// sweepWebhooks deletes the events and delivery log lines that expired,
// and drops what is left queued for endpoints that are disabled (with log
// lines) or gone (without): what a drop that failed, or a crash between
// an endpoint's change and its drop, leaves. Of instances sweeping at
// once, one does (under a transaction advisory lock) and the others
// return at once: swept reports whether this one did.
func (s *Store) sweepWebhooks(ctx context.Context) (swept bool, err error) {
	now := s.now()
	var stopped []string
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		stopped = nil
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, webhookSweepLock).Scan(&swept); err != nil || !swept {
			return err
		}
		for _, table := range []string{"events", "delivery_attempts"} {
			for {
				tag, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE ctid IN (
					SELECT ctid FROM `+table+` WHERE expires_at <= $1 LIMIT $2)`, now, webhookSweepBatch)
				if err != nil {
					return fmt.Errorf("delete expired %s: %w", table, err)
				}
				if tag.RowsAffected() < webhookSweepBatch {
					break
				}
			}
		}
		// The distinct endpoints of the queue, one index probe each,
		// that are not enabled endpoints.
		rows, err := tx.Query(ctx, `WITH RECURSIVE queued(endpoint_id) AS (
				(SELECT endpoint_id FROM deliveries ORDER BY endpoint_id LIMIT 1)
				UNION ALL
				SELECT (SELECT d.endpoint_id FROM deliveries d WHERE d.endpoint_id > q.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
				FROM queued q WHERE q.endpoint_id IS NOT NULL)
			SELECT endpoint_id FROM queued q WHERE endpoint_id IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = q.endpoint_id AND e.enabled)`)
		if err != nil {
			return err
		}
		stopped, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return false, err
	}
	var errs []error
	for _, id := range stopped {
		errs = append(errs, s.drainEndpointQueue(ctx, id, now))
	}
	return swept, errors.Join(errs...)
}
