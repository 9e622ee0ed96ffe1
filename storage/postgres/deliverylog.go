package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// defaultAttemptLimit is the page of DeliveryAttempts when the query sets
// no limit.
const defaultAttemptLimit = 100

// writeAttempts stores delivery log lines, in order, in one statement,
// each expiring onboarding.DeliveryLogRetention after its attempt. A line
// without a time is logged now.
func (s *Store) writeAttempts(ctx context.Context, tx pgx.Tx, lines []onboarding.DeliveryAttempt) error {
	if len(lines) == 0 {
		return nil
	}
	n := len(lines)
	endpoints, events := make([]string, n), make([]string, n)
	success, ats, recs := make([]bool, n), make([]time.Time, n), make([][]byte, n)
	for i, l := range lines {
		if l.At.IsZero() {
			l.At = s.now()
		}
		rec, err := record.Encode(&l)
		if err != nil {
			return err
		}
		endpoints[i], events[i], success[i], ats[i], recs[i] = l.EndpointID, l.EventID, l.Success, l.At, rec
	}
	// WITH ORDINALITY keeps the lines' order in their ids.
	_, err := tx.Exec(ctx, `INSERT INTO delivery_attempts (endpoint_id, event_id, success, at, expires_at, record)
		SELECT endpoint_id, event_id, success, at, at + $6::interval, record
		FROM unnest($1::text[], $2::text[], $3::bool[], $4::timestamptz[], $5::bytea[])
			WITH ORDINALITY AS l(endpoint_id, event_id, success, at, record, n)
		ORDER BY n`, endpoints, events, success, ats, recs, onboarding.DeliveryLogRetention)
	return err
}

// DeliveryAttempts returns up to q.Limit (default 100) lines of the
// delivery log that have not expired, newest first, through the index of
// the event when q names one, else of the endpoint when it names one,
// else of the whole log.
func (s *Store) DeliveryAttempts(ctx context.Context, q onboarding.AttemptQuery) ([]onboarding.DeliveryAttempt, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultAttemptLimit
	}
	var sql strings.Builder
	sql.WriteString(`SELECT record FROM delivery_attempts WHERE expires_at > $1`)
	args := []any{s.now()}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.EventID != "" {
		sql.WriteString(` AND event_id = ` + arg(q.EventID))
	}
	if q.EndpointID != "" {
		sql.WriteString(` AND endpoint_id = ` + arg(q.EndpointID))
	}
	if q.FailedOnly {
		sql.WriteString(` AND NOT success`)
	}
	sql.WriteString(` ORDER BY at DESC, id DESC LIMIT ` + arg(limit))
	rows, err := s.pool.Query(ctx, sql.String(), args...)
	if err != nil {
		return nil, err
	}
	recs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	var out []onboarding.DeliveryAttempt
	for _, rec := range recs {
		var a onboarding.DeliveryAttempt
		if err := record.Decode(rec, &a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
