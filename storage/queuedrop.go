package storage

// Dropping the queue of an endpoint that was disabled or removed. The
// change of the endpoint commits first, in a transaction of its own that
// reads the endpoint's record only (UpdateEndpoint, DeleteEndpoint,
// FinishDeliveries): from then on no transaction queues for the endpoint
// (those that queue read its record, and one that read it before the change
// conflicts and retries), and no claim leases a delivery of it (a claim
// reads the record of every endpoint it leases from, likewise). What is
// left queued is then deleted here a batch per transaction, so that no
// transaction reads more than dropBatch deliveries and none conflicts with
// the queue's traffic for long.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// maxDrainConflicts bounds the batches in a row that drainEndpointQueue
// retries after they lost every attempt to conflicting transactions. Once
// the endpoint is changed only few transactions still write to its queue
// (the finishes of attempts in flight, and other drops, which drop with
// it), so this is reached only under a load that never lets up.
const maxDrainConflicts = 16

// drainEndpointQueue drops what is queued for the endpoint id, a batch
// (dropQueue) per transaction: with log lines at at while the endpoint is
// disabled, without once it is removed. It stops when the queue is empty,
// or when the endpoint is enabled: what is queued then was queued after
// the enabling, which commits only when the queue is empty
// (UpdateEndpoint).
func (s *Store) drainEndpointQueue(ctx context.Context, id string, at time.Time) error {
	conflicts := 0
	for {
		more := false
		err := s.update(ctx, func(txn *badger.Txn) error {
			var err error
			more, err = s.dropQueueBatch(txn, id, at)
			return err
		})
		switch {
		case errors.Is(err, onboarding.ErrWriteConflict) && conflicts < maxDrainConflicts:
			// Each conflict was with a write to this queue that committed
			// meanwhile: a finish, or a drop of the same deliveries.
			conflicts++
			continue
		case err != nil:
			return fmt.Errorf("drop the queue of endpoint %s: %w", id, err)
		case !more:
			return nil
		}
		conflicts = 0
	}
}

// dropQueueBatch drops one batch of what is queued for the endpoint id, as
// drainEndpointQueue does, in txn; more reports that some are left.
func (s *Store) dropQueueBatch(txn *badger.Txn, id string, at time.Time) (more bool, err error) {
	var ep onboarding.Endpoint
	switch err := getRecord(txn, endpointKey(id), &ep); {
	case errors.Is(err, onboarding.ErrNotFound):
		ep.ID = id
		return s.dropEndpointQueue(txn, &ep, false, at)
	case err != nil:
		return false, err
	case ep.Enabled:
		return false, nil
	}
	return s.dropEndpointQueue(txn, &ep, true, at)
}

// dropLeftovers drops a batch of what is still queued for each of eps,
// endpoints a claim found disabled with deliveries queued (a drain that
// failed or is still running), each in one attempt of a transaction of its
// own, outside the claim's, so that the claim does not conflict with a
// drain. A batch that conflicts is left to the drain it met, or to the
// next claim. It reports whether anything may be left.
func (s *Store) dropLeftovers(eps []*onboarding.Endpoint, at time.Time) bool {
	if s.space.allow() != nil {
		return len(eps) > 0 // the disk is full: the next claim drops them
	}
	left := false
	for _, ep := range eps {
		more := false
		s.rlockDB()
		err := s.db.Update(func(txn *badger.Txn) error {
			var err error
			more, err = s.dropQueueBatch(txn, ep.ID, at)
			return err
		})
		s.dbMu.RUnlock()
		switch {
		case errors.Is(err, badger.ErrConflict):
			left = true
		case err != nil:
			s.log.Error("webhooks: drop the queue of a disabled endpoint", "endpoint_id", ep.ID, "err", err)
			left = true
		case more:
			left = true
		}
	}
	return left
}
