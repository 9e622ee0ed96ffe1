package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// errDuplicate reports a create that would reuse an existing record's id,
// or a link slug another record holds; with random 122-bit ids it means a
// bug, not bad luck.
var errDuplicate = errors.New("record or index entry already exists")

// parseID parses a record id, which is a UUID: anything else names no
// record (onboarding.ErrNotFound).
func parseID(id string) (uuid.UUID, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return uuid.UUID{}, onboarding.ErrNotFound
	}
	return u, nil
}

// textKey reports whether s can be a text column's value: PostgreSQL's
// text holds valid UTF-8 without NUL. A lookup by a string that cannot
// (a link slug or client id from a request) finds nothing.
func textKey(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// uniqueViolation reports whether err is PostgreSQL refusing a row whose
// unique key another row holds (23505).
func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// duplicate turns a unique violation into errDuplicate, naming what.
func duplicate(what string, err error) error {
	if uniqueViolation(err) {
		return fmt.Errorf("%s: %w", what, errDuplicate)
	}
	return err
}

// pgUUID is u as pgx encodes a uuid parameter without a detour: a
// uuid.UUID would go through its driver.Valuer, a string.
func pgUUID(u uuid.UUID) [16]byte { return u }

// seqBytes is a ULID as its bytea column holds it.
func seqBytes(u ulid.ULID) []byte { return u[:] }

// scanULID converts a bytea column read into a ULID.
func scanULID(b []byte) (ulid.ULID, error) {
	var u ulid.ULID
	if len(b) != len(u) {
		return u, fmt.Errorf("ulid column: %d bytes, want %d", len(b), len(u))
	}
	copy(u[:], b)
	return u, nil
}

// pageLimit is the LIMIT of a page query of limit items: one more, to
// learn whether more follow; a negative limit reads every row (LIMIT
// NULL), as the embedded store's walk does.
func pageLimit(limit int) any {
	if limit < 0 {
		return nil
	}
	return int64(limit) + 1
}

// queryRecords runs a query whose rows are records of T, one column each,
// decoding them in order; with a page limit (pageLimit), it answers
// whether rows beyond limit followed, which it leaves out.
func queryRecords[T any](ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, limit int, sql string, args ...any) ([]*T, bool, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	out := make([]*T, 0, max(min(limit, 1000), 0))
	more := false
	for rows.Next() {
		if limit >= 0 && len(out) == limit {
			more = true
			break
		}
		rec := new(T)
		if err := record.Decode(rows.RawValues()[0], rec); err != nil {
			return nil, false, err
		}
		out = append(out, rec)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return out, more, nil
}

// queryRecord reads the one record of T the query returns, or
// onboarding.ErrNotFound.
func queryRecord[T any](ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, sql string, args ...any) (*T, error) {
	var b []byte
	if err := q.QueryRow(ctx, sql, args...).Scan(&b); err != nil {
		return nil, notFound(err)
	}
	rec := new(T)
	if err := record.Decode(b, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// slugDiff returns the slugs of after that before lacks (to insert) and
// those of before that after lacks (to delete), each without repeats.
func slugDiff(before, after []string) (added, removed []string) {
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, s := range after {
		if !in(before, s) && !in(added, s) {
			added = append(added, s)
		}
	}
	for _, s := range before {
		if !in(after, s) && !in(removed, s) {
			removed = append(removed, s)
		}
	}
	return added, removed
}

// nullIfEmpty is ids as a text[] column holds it: NULL when there are none.
func nullIfEmpty(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return ids
}
