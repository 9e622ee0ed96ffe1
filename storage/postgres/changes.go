package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// writeChanges writes, in tx, what a change of subject commits beside its
// record (onboarding.Changes): its activity entries, chained after the
// subject's head (log, from chain; the caller writes the head with the
// subject's row), the outcome of its request with an Idempotency-Key, and
// its events. b holds the caller's own statements (the record's row and
// index rows): the entries and the outcome join them in one round trip,
// and the events follow (writeEvents).
func (s *Store) writeChanges(ctx context.Context, tx pgx.Tx, b *pgx.Batch, subject uuid.UUID, log chainedLog, ch onboarding.Changes) error {
	log.queue(b, subject)
	if err := s.queueOutcome(b, ch.Idempotent); err != nil {
		return err
	}
	if err := sendBatch(ctx, tx, b); err != nil {
		return err
	}
	if len(ch.Events) == 0 {
		return nil
	}
	return s.writeEvents(ctx, tx, ch.Events)
}

// queueOutcome queues into b the save of o (nothing when nil): it
// replaces what was saved under its key and expires, as a saved response
// does, onboarding.IdempotencyTTL from now.
func (s *Store) queueOutcome(b *pgx.Batch, o *onboarding.IdempotentOutcome) error {
	if o == nil {
		return nil
	}
	rec, err := record.Encode(o)
	if err != nil {
		return err
	}
	b.Queue(saveIdempotentSQL, o.ClientID, o.Key, rec, s.now().Add(onboarding.IdempotencyTTL))
	return nil
}
