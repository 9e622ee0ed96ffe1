package postgres

import (
	"context"
	"time"
)

// The expiry sweep. Rows that expire carry an expires_at which reads
// compare with the store's clock, so an expired row is gone for every
// reader the moment it expires; the sweep only reclaims its space. Each
// instance sweeps on its own ticker; the sweeps of several instances
// share the work, as each batch claims its rows FOR UPDATE SKIP LOCKED.

const (
	// defaultSweepInterval is how often an open Store sweeps.
	defaultSweepInterval = 10 * time.Minute
	// sweepBatch bounds the rows one transaction of the sweep deletes, so
	// that a large backlog does not hold locks or grow the WAL in one go.
	sweepBatch = 1000
)

// SweepExpired deletes the idempotency records that expired by the
// store's clock, a batch per transaction, and returns how many it deleted.
func (s *Store) SweepExpired(ctx context.Context) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency WHERE ctid IN (
			SELECT ctid FROM idempotency WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, s.now(), sweepBatch)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < sweepBatch {
			return total, nil
		}
	}
}

// sweepLoop runs SweepExpired every interval until Close.
func (s *Store) sweepLoop(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.stop
		cancel()
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			n, err := s.SweepExpired(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Error("postgres: sweep expired records", "err", err)
			case n > 0:
				s.log.Debug("postgres: swept expired records", "deleted", n)
			}
		}
	}
}
