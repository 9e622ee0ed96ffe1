package postgres

import (
	"context"
	"time"
)

// notifyTimeout bounds a notification's wait for the database, so that a
// database that does not answer does not hold up Close.
const notifyTimeout = 10 * time.Second

// notifyGap is the notifier's pause after each notification, in which
// the writes that want one wait for the next together: under a stream of
// writes it notifies some two hundred times a second, not once per write.
const notifyGap = 5 * time.Millisecond

// The notification of queued deliveries for the fan-outs from cached
// endpoints (fanout.go). PostgreSQL serializes the commits of
// transactions that notify (a database-wide lock, held until the commit
// is written), so writes that notified as they committed would commit
// one at a time, where others commit together. Instead, a write that
// queued deliveries commits without notifying and asks the Store's
// notifier, which notifies deliveriesChannel after it, in a transaction
// of its own that does not wait for the disk (the notification needs no
// durability): one for every write committed before it started, so that
// concurrent writes share one, and at most one per notifyGap. Listeners
// hear it once the deliveries are visible, as they would hear the
// writes' own; a notification lost to a failed connection or to Close
// delays the other instances' delivery pools until their next rescan
// (their own pool was woken by the Service).

// startNotifier starts the goroutine that notifies deliveriesChannel
// after each wanted call, until the Store stops.
func (s *Store) startNotifier() {
	s.background.Go(func() {
		for {
			select {
			case <-s.stop:
				return
			case <-s.notifyWanted:
			}
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			if _, err := s.pool.Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`, deliveriesChannel); err != nil {
				s.log.Warn("postgres: notify of queued deliveries", "err", err)
			}
			cancel()
			t := time.NewTimer(notifyGap)
			select {
			case <-s.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
	})
}

// notifyDeliveries asks the notifier to notify deliveriesChannel, after
// the commit of the caller's deliveries; it never blocks.
func (s *Store) notifyDeliveries() {
	select {
	case s.notifyWanted <- struct{}{}:
	default: // a notification not yet sent will do
	}
}
