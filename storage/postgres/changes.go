package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// What a change writes beside its record (onboarding.Changes): its
// activity entries, chained after the subject's head, the outcome of its
// request with an Idempotency-Key, and its events. The entries and the
// outcome are queued on the batch that writes the record (changeWrite's
// queue), so that a create or an update sends them in the same round
// trip, and so are the events when the endpoints they are queued for are
// cached (fanout.go); else they follow in the same transaction
// (writeEvents, called by sendAtomically and lockedUpdate). Each
// statement is a plain one-row INSERT, whose prepared plan PostgreSQL
// keeps (a statement over arrays of rows would be planned anew each
// time).

// changeWrite is a change's activity entries and outcome, encoded, and
// the head of the subject's log after the entries.
type changeWrite struct {
	log chainedLog
	// The outcome's row; rec is nil without one.
	clientID, key string
	rec           []byte
	expires       time.Time
}

// encodeChanges chains ch.Log after head, the head of subject's log (nil:
// none yet), and encodes ch.Idempotent.
func (s *Store) encodeChanges(subject uuid.UUID, head *onboarding.ActivityHead, ch onboarding.Changes) (changeWrite, error) {
	log, err := s.chain(subject, head, ch.Log)
	if err != nil {
		return changeWrite{}, err
	}
	w := changeWrite{log: log}
	if o := ch.Idempotent; o != nil {
		if w.rec, err = record.Encode(o); err != nil {
			return changeWrite{}, err
		}
		w.clientID, w.key, w.expires = o.ClientID, o.Key, s.now().Add(onboarding.IdempotencyTTL)
	}
	return w, nil
}

// queue queues into b the statements that write w's entries of subject's
// log and its outcome, which replaces what was saved under its key.
func (w changeWrite) queue(b *pgx.Batch, subject uuid.UUID) {
	for i := range w.log.seqs {
		b.Queue(`INSERT INTO activity_entries (subject, seq, record) VALUES ($1, $2, $3)`, pgUUID(subject), w.log.seqs[i], w.log.recs[i])
	}
	if w.rec != nil {
		b.Queue(saveIdempotentSQL, w.clientID, w.key, w.rec, w.expires)
	}
}

// queueSlugs queues into b the statements that move record id's slugs in
// table (whose column names the record): removed ones deleted, added ones
// inserted (a slug another record holds fails the insert).
func queueSlugs(b *pgx.Batch, table, column string, id uuid.UUID, added, removed []string) {
	for _, slug := range removed {
		b.Queue(`DELETE FROM `+table+` WHERE slug = $1 AND `+column+` = $2`, slug, pgUUID(id))
	}
	for _, slug := range added {
		b.Queue(`INSERT INTO `+table+` (slug, `+column+`) VALUES ($1, $2)`, slug, pgUUID(id))
	}
}

// sendAtomically sends the statements build queues, which write one
// change, as one transaction. Without events, or with events whose
// endpoints the cache knows (fanOut), that is one round trip: PostgreSQL
// runs a batch's statements as one implicit transaction; the Store's
// notifier then notifies of the deliveries it queued. Else, or when the
// fan-out's guard finds the cache out of date, the statements are the
// first round trip of a transaction that writes the events with
// writeEvents and commits (inBatchTx). Like inTx, it tries again (build
// too) when PostgreSQL aborted it for a serialization failure or a
// deadlock.
func (s *Store) sendAtomically(ctx context.Context, key string, build func(*pgx.Batch), events []*onboarding.Event) error {
	var f fanOut
	if len(events) > 0 {
		rows, err := encodeEvents(events)
		if err != nil {
			return err
		}
		var ok bool
		if f, ok = s.planFanOut(rows); !ok {
			return s.writeChangeAndEvents(ctx, build, events)
		}
	}
	var err error
	for range maxAttempts {
		err = s.writes.send(ctx, key, func(b *pgx.Batch) {
			build(b)
			f.queue(b)
		})
		switch {
		case err == nil:
			if len(f.deliveries) > 0 {
				s.notifyDeliveries()
			}
			return nil
		case errors.Is(err, errFanOutStale):
			return s.writeChangeAndEvents(ctx, build, events)
		case !retryable(err):
			return err
		}
	}
	return fmt.Errorf("%w: %w", onboarding.ErrWriteConflict, err)
}

// writeChangeAndEvents writes the statements build queues and events in
// one transaction, reading the endpoints in it (writeEvents).
func (s *Store) writeChangeAndEvents(ctx context.Context, build func(*pgx.Batch), events []*onboarding.Event) error {
	return s.inBatchTx(ctx, build, func(tx pgx.Tx) error { return s.writeEvents(ctx, tx, events) })
}
