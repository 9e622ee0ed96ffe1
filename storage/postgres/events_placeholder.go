package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
)

// writeEvents stands in for the webhook tables' writer (events.go), which
// replaces this file when the branches are merged.
func (s *Store) writeEvents(ctx context.Context, tx pgx.Tx, events []*onboarding.Event) error {
	return nil
}
