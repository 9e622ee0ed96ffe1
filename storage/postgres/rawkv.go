package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RawKV is a bare table of keys and values in a PostgreSQL database: one
// primary-key read or one autocommitted insert (durable, as the server's
// synchronous_commit makes every commit) is what the database costs on
// this machine, the ceiling onboard bench compares the API on PostgreSQL
// with. Its table, onboard_ceiling_kv, is separate from the Store's and
// dropped by Close.
type RawKV struct {
	pool *pgxpool.Pool
}

// OpenRawKV connects to the database at url with a pool of maxConns and
// creates an empty ceiling table.
func OpenRawKV(ctx context.Context, url string, maxConns int) (*RawKV, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres_url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = int32(maxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if _, err := pool.Exec(ctx, `DROP TABLE IF EXISTS onboard_ceiling_kv;
		CREATE TABLE onboard_ceiling_kv (key text PRIMARY KEY, value bytea NOT NULL)`); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: create the ceiling table: %w", err)
	}
	return &RawKV{pool: pool}, nil
}

// Get returns the value stored under key; ok is false when there is none.
func (k *RawKV) Get(key string) (value []byte, ok bool, err error) {
	err = k.pool.QueryRow(context.Background(), "SELECT value FROM onboard_ceiling_kv WHERE key = $1", key).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return value, true, nil
}

// Put stores value under key in one autocommitted statement, whose commit
// is on disk before Put returns.
func (k *RawKV) Put(key string, value []byte) error {
	_, err := k.pool.Exec(context.Background(), `INSERT INTO onboard_ceiling_kv (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// Close drops the ceiling table and closes the pool.
func (k *RawKV) Close() error {
	_, err := k.pool.Exec(context.Background(), "DROP TABLE IF EXISTS onboard_ceiling_kv")
	k.pool.Close()
	return err
}
