package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Secret returns the shared secret called name, creating it with create
// the first time any instance asks: of instances asking together, one
// insert wins and every instance returns the winner's value, so they all
// sign and verify with the same key.
func (s *Store) Secret(ctx context.Context, name string, create func() ([]byte, error)) ([]byte, error) {
	var value []byte
	err := s.pool.QueryRow(ctx, "SELECT value FROM secrets WHERE name = $1", name).Scan(&value)
	if err == nil {
		return value, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	fresh, err := create()
	if err != nil {
		return nil, err
	}
	err = s.pool.QueryRow(ctx, `INSERT INTO secrets (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING value`, name, fresh).Scan(&value)
	if err != nil {
		return nil, fmt.Errorf("store secret %s: %w", name, err)
	}
	return value, nil
}
