package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// watchRetry is the pause before WatchDeliveries connects again after
// losing its connection.
const watchRetry = time.Second

// WatchDeliveries calls wake each time a transaction of any instance that
// queued deliveries (events that endpoints want, a redelivery) commits,
// until ctx ends; it then returns ctx's error. It listens on a connection
// of its own, outside the pool, and calls wake once more each time it has
// (re)connected and is listening, since what committed while it was not
// was not heard: the first call says that it is listening. A lost
// connection is logged and made again after a pause.
//
// An instance runs it in a goroutine beside its delivery pool, with a wake
// that does what the Service does after a commit of its own: make a
// waiting pool claim again at once (a non-blocking send on its wake
// channel). wake must not block; several commits may come as one call.
func (s *Store) WatchDeliveries(ctx context.Context, wake func()) error {
	for {
		err := s.listenDeliveries(ctx, wake)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Warn("webhooks: listening for queued deliveries", "err", err)
		t := time.NewTimer(watchRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// listenDeliveries is one connection of WatchDeliveries: it returns when
// the connection fails or ctx ends.
func (s *Store) listenDeliveries(ctx context.Context, wake func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+deliveriesChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		wake()
	}
}
