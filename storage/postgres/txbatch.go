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
