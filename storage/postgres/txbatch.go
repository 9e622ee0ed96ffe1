package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

// inBatchTx runs a transaction whose first statements go in the round
// trip that begins it: build queues them on a batch that begins the
// transaction (their results are read by the callbacks build sets on
// them), then, when they succeed and then is not nil, then runs in the
// transaction; the transaction commits when then succeeds and rolls back
// otherwise. Like inTx, it runs it all again (build too, on a new batch)
// when PostgreSQL aborted it for a serialization failure or a deadlock,
// and an error of then or of a callback is returned unchanged.
func (s *Store) inBatchTx(ctx context.Context, build func(*pgx.Batch), then func(pgx.Tx) error) error {
	var err error
	for range maxAttempts {
		err = s.batchTx(ctx, build, then)
		if !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", onboarding.ErrWriteConflict, err)
}

// batchTx is one attempt of inBatchTx.
func (s *Store) batchTx(ctx context.Context, build func(*pgx.Batch), then func(pgx.Tx) error) error {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	build(b)
	br := s.pool.SendBatch(ctx, b)
	tx := br.Tx()
	err := br.Close()
	if err == nil && then != nil {
		err = then(tx)
	}
	if err != nil {
		if rerr := tx.Rollback(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
			s.log.Warn("postgres: roll back", "err", rerr)
		}
		return err
	}
	return tx.Commit(ctx)
}

// sendBatch sends b in tx and reads every result, answering the first
// error (of a statement or of a callback).
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// lockedUpdate runs the transaction of an update of one record in as few
// round trips as it can: the first begins the transaction and runs what
// read queues (the SELECT … FOR UPDATE of the record's row, whose result
// its callback keeps); then write, given what was read, returns the batch
// that writes the change and the change's events. Without events, or
// with events whose endpoints the cache knows (fanOut), the batch
// ends with COMMIT: two round trips in all. Else, or when the fan-out's
// guard finds the cache out of date (then it all runs again), the batch
// is followed by writeEvents and the commit. Like inTx, it runs it all
// again when PostgreSQL aborted it for a serialization failure or a
// deadlock, and returns an error of write or of a callback unchanged.
func (s *Store) lockedUpdate(ctx context.Context, read func(*pgx.Batch), write func(pgx.Tx) (*pgx.Batch, []*onboarding.Event, error)) error {
	var err error
	cached := true
	for range maxAttempts {
		err = s.lockedUpdateOnce(ctx, read, write, cached)
		if errors.Is(err, errFanOutStale) {
			cached = false
			continue
		}
		if !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", onboarding.ErrWriteConflict, err)
}

// lockedUpdateOnce is one attempt of lockedUpdate, which fans the events
// out in the batch of the writes, from the cache, if cached is set and it
// can.
func (s *Store) lockedUpdateOnce(ctx context.Context, read func(*pgx.Batch), write func(pgx.Tx) (*pgx.Batch, []*onboarding.Event, error), cached bool) (err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	read(b)
	br := conn.Conn().SendBatch(ctx, b)
	tx := br.Tx()
	defer func() {
		// A failed statement or commit leaves the transaction open (or
		// aborted); a connection released so is closed by the pool.
		if err != nil && conn.Conn().PgConn().TxStatus() != 'I' {
			if rerr := tx.Rollback(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
				s.log.Warn("postgres: roll back", "err", rerr)
			}
		}
	}()
	if err = br.Close(); err != nil {
		return err
	}
	wb, events, err := write(tx)
	if err != nil {
		return err
	}
	inBatch, notify := len(events) == 0, false
	if !inBatch && cached {
		rows, err := encodeEvents(events)
		if err != nil {
			return err
		}
		var f fanOut
		if f, inBatch = s.planFanOut(rows); inBatch {
			f.queue(wb)
			notify = len(f.deliveries) > 0
		}
	}
	if inBatch {
		// The commit rides with the writes; the transaction object is
		// left behind, its connection idle again.
		wb.Queue("COMMIT")
		if err = tx.SendBatch(ctx, wb).Close(); err == nil && notify {
			s.notifyDeliveries()
		}
		return err
	}
	if err = tx.SendBatch(ctx, wb).Close(); err != nil {
		return err
	}
	if err = s.writeEvents(ctx, tx, events); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
