package postgres

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/dump"
	"onboard/storage/record"
)

// Dump and Load: the records in the backend-neutral form of package dump,
// which backups carry (backup/), so that a backup of either backend
// restores into the other. Dump reads the rows' records and the columns
// that are not derived from them (queue state, leases, log heads,
// expiries); Load writes each record with the columns and index rows the
// store's own writes derive from it.

// dumpQuery is one table Dump reads, in the order of dump.Kinds, and how a
// row becomes a line.
type dumpQuery struct {
	kind string
	sql  string
	// expiring: the query takes the time before which rows have
	// expired, $1.
	expiring bool
	line     func(pgx.Rows) (*dump.Line, error)
}

// Dump passes every record of one consistent snapshot (a read-only,
// repeatable-read transaction) to emit as a line, kinds in the order
// dump.Kinds lists them and rows in the order the embedded store's keys
// sort, so that the dumps of the two backends compare line by line.
// Expired rows (events, delivery log lines, idempotency records) that
// the sweep has not yet deleted are left out, as reads ignore them.
// emit's error, or ctx's, stops the dump and is returned.
func (s *Store) Dump(ctx context.Context, emit func(*dump.Line) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("dump records: %w", err)
	}
	defer tx.Rollback(context.Background())
	now := s.now()
	for _, q := range dumpQueries() {
		if err := dumpTable(ctx, tx, q, now, emit); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// dumpTable runs q and emits a line per row.
func dumpTable(ctx context.Context, tx pgx.Tx, q dumpQuery, now time.Time, emit func(*dump.Line) error) error {
	var args []any
	if q.expiring {
		args = append(args, now)
	}
	rows, err := tx.Query(ctx, q.sql, args...)
	if err != nil {
		return fmt.Errorf("dump %s records: %w", q.kind, err)
	}
	defer rows.Close()
	for rows.Next() {
		l, err := q.line(rows)
		if err != nil {
			return fmt.Errorf("dump %s records: %w", q.kind, err)
		}
		l.Kind = q.kind
		if err := emit(l); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dump %s records: %w", q.kind, err)
	}
	return nil
}

// dumpQueries are the tables Dump reads, in the order of dump.Kinds.
func dumpQueries() []dumpQuery {
	plain := func(rows pgx.Rows) (*dump.Line, error) {
		var l dump.Line
		return &l, rows.Scan(&l.Record)
	}
	return []dumpQuery{
		{dump.Application, `SELECT record FROM applications ORDER BY id`, false, plain},
		{dump.RFIRequest, `SELECT r.record, q.lease_owner, q.lease_until_ns FROM rfi_requests r
			LEFT JOIN rfi_expiry_queue q ON q.rfi_id = r.id ORDER BY r.id`, false, dumpRFI},
		{dump.Activity, `SELECT subject, seq, record FROM activity_entries ORDER BY subject, seq`, false, dumpActivity},
		{dump.ActivityHead, `SELECT id, log_seq, log_hash FROM applications WHERE log_seq IS NOT NULL
			UNION ALL SELECT id, log_seq, log_hash FROM rfi_requests WHERE log_seq IS NOT NULL ORDER BY id`, false, dumpHead},
		{dump.APIKey, `SELECT record FROM api_keys ORDER BY client_id COLLATE "C"`, false, plain},
		{dump.Idempotency, `SELECT client_id, key, expires_at, record FROM idempotency WHERE expires_at > $1
			ORDER BY client_id COLLATE "C", key COLLATE "C"`, true, dumpIdempotency},
		{dump.Endpoint, `SELECT record FROM webhook_endpoints ORDER BY id`, false, plain},
		{dump.Event, `SELECT record FROM events WHERE expires_at > $1 ORDER BY id`, true, plain},
		{dump.Delivery, `SELECT endpoint_id, subject, event_id, event_type, head, attempts, next_at, owner, lease_until
			FROM deliveries ORDER BY endpoint_id, subject, event_id`, false, dumpDelivery},
		{dump.DeliveryAttempt, `SELECT id, at, record FROM delivery_attempts WHERE expires_at > $1 ORDER BY at, id`, true, dumpAttempt},
	}
}

func dumpRFI(rows pgx.Rows) (*dump.Line, error) {
	var l dump.Line
	var owner *string
	var until *int64
	if err := rows.Scan(&l.Record, &owner, &until); err != nil {
		return nil, err
	}
	if owner != nil && until != nil {
		l.Owner, l.LeaseUntil = *owner, time.Unix(0, *until).UTC()
	}
	return &l, nil
}

func dumpActivity(rows pgx.Rows) (*dump.Line, error) {
	var l dump.Line
	var subject uuid.UUID
	var seq []byte
	if err := rows.Scan(&subject, &seq, &l.Record); err != nil {
		return nil, err
	}
	if len(seq) != len(l.Seq) {
		return nil, fmt.Errorf("activity entry of %s: a seq of %d bytes", subject, len(seq))
	}
	l.Subject, l.Seq = subject.String(), ulid.ULID(seq)
	return &l, nil
}

func dumpHead(rows pgx.Rows) (*dump.Line, error) {
	var l dump.Line
	var subject uuid.UUID
	var seq []byte
	if err := rows.Scan(&subject, &seq, &l.Hash); err != nil {
		return nil, err
	}
	if len(seq) != len(l.Seq) {
		return nil, fmt.Errorf("activity head of %s: a seq of %d bytes", subject, len(seq))
	}
	l.Subject, l.Seq = subject.String(), ulid.ULID(seq)
	return &l, nil
}

func dumpIdempotency(rows pgx.Rows) (*dump.Line, error) {
	var l dump.Line
	if err := rows.Scan(&l.ClientID, &l.Key, &l.ExpiresAt, &l.Record); err != nil {
		return nil, err
	}
	l.ExpiresAt = l.ExpiresAt.UTC()
	return &l, nil
}

func dumpDelivery(rows pgx.Rows) (*dump.Line, error) {
	var l dump.Line
	var owner *string
	var until *time.Time
	if err := rows.Scan(&l.EndpointID, &l.Subject, &l.EventID, &l.EventType, &l.Head, &l.Attempts, &l.NextAt, &owner, &until); err != nil {
		return nil, err
	}
	l.NextAt = l.NextAt.UTC()
	if owner != nil && until != nil {
		l.Owner, l.LeaseUntil = *owner, until.UTC()
	}
	return &l, nil
}

// dumpAttempt is a delivery log line's line. The log orders its lines by
// time and then id, and a line's Seq must sort the same: its timestamp is
// the line's millisecond and its entropy the id.
func dumpAttempt(rows pgx.Rows) (*dump.Line, error) {
	var l dump.Line
	var id int64
	var at time.Time
	if err := rows.Scan(&id, &at, &l.Record); err != nil {
		return nil, err
	}
	var entropy [10]byte
	binary.BigEndian.PutUint64(entropy[2:], uint64(id))
	if err := l.Seq.SetTime(ulid.Timestamp(at)); err != nil {
		return nil, err
	}
	if err := l.Seq.SetEntropy(entropy[:]); err != nil {
		return nil, err
	}
	return &l, nil
}

// loadBatch is how many lines Load sends to the database at a time.
const loadBatch = 500

// Load writes the lines next yields (io.EOF after the last) into the
// database, which must hold no record (dump.ErrNotEmpty otherwise), in one
// transaction: a load that fails leaves the database as it was. Each
// record is written with the columns and index rows the store's own
// writes derive from it. A line the database refuses for what it holds
// (a row twice, a head of no subject) or that does not decode is a
// *dump.LineError.
func (s *Store) Load(ctx context.Context, next func() (*dump.Line, error)) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		empty, err := empty(ctx, tx)
		if err != nil {
			return err
		}
		if !empty {
			return dump.ErrNotEmpty
		}
		b := &pgx.Batch{}
		for n := 1; ; n++ {
			l, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if err := queueLine(b, l, n); err != nil {
				return &dump.LineError{Line: n, Err: err}
			}
			if n%loadBatch == 0 {
				if err := tx.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
				b = &pgx.Batch{}
			}
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// Empty reports whether the database holds no record.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var e bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		e, err = empty(ctx, tx)
		return err
	})
	return e, err
}

// empty reports whether none of the tables of records has a row.
func empty(ctx context.Context, tx pgx.Tx) (bool, error) {
	var any bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM applications) OR EXISTS (SELECT 1 FROM rfi_requests)
		OR EXISTS (SELECT 1 FROM activity_entries) OR EXISTS (SELECT 1 FROM api_keys)
		OR EXISTS (SELECT 1 FROM idempotency) OR EXISTS (SELECT 1 FROM webhook_endpoints)
		OR EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM deliveries)
		OR EXISTS (SELECT 1 FROM delivery_attempts)`).Scan(&any)
	return !any, err
}

// queueLine queues into b the statements that write line l (number n).
func queueLine(b *pgx.Batch, l *dump.Line, n int) error {
	if err := l.Check(); err != nil {
		return err
	}
	switch l.Kind {
	case dump.Application:
		return queueApplication(b, l, n)
	case dump.RFIRequest:
		return queueRFI(b, l, n)
	case dump.Activity:
		return queueActivity(b, l, n)
	case dump.ActivityHead:
		return queueHead(b, l, n)
	case dump.APIKey:
		var k onboarding.APIKey
		if err := record.Decode(l.Record, &k); err != nil {
			return err
		}
		exec(b, n, `INSERT INTO api_keys (client_id, org_id, record) VALUES ($1, $2, $3)`, k.ClientID, k.OrgID, l.Record)
	case dump.Idempotency:
		var saved json.RawMessage
		if err := record.Decode(l.Record, &saved); err != nil {
			return err
		}
		exec(b, n, `INSERT INTO idempotency (client_id, key, record, expires_at) VALUES ($1, $2, $3, $4)`,
			l.ClientID, l.Key, l.Record, l.ExpiresAt)
	case dump.Endpoint:
		var ep onboarding.Endpoint
		if err := record.Decode(l.Record, &ep); err != nil {
			return err
		}
		exec(b, n, `INSERT INTO webhook_endpoints (id, org_id, enabled, record) VALUES ($1, $2, $3, $4)`,
			ep.ID, ep.OrgID, ep.Enabled, l.Record)
	case dump.Event:
		var e onboarding.Event
		if err := record.Decode(l.Record, &e); err != nil {
			return err
		}
		exec(b, n, `INSERT INTO events (id, org_id, type, at, expires_at, record) VALUES ($1, $2, $3, $4, $5, $6)`,
			e.ID, e.OrgID, string(e.Type), e.At, e.At.Add(onboarding.EventRetention), l.Record)
	case dump.Delivery:
		var owner *string
		var until *time.Time
		if l.Owner != "" {
			owner, until = &l.Owner, &l.LeaseUntil
		}
		exec(b, n, `INSERT INTO deliveries (endpoint_id, subject, event_id, event_type, head, attempts, next_at, owner, lease_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			l.EndpointID, l.Subject, l.EventID, string(l.EventType), l.Head, l.Attempts, l.NextAt, owner, until)
	case dump.DeliveryAttempt:
		var a onboarding.DeliveryAttempt
		if err := record.Decode(l.Record, &a); err != nil {
			return err
		}
		exec(b, n, `INSERT INTO delivery_attempts (endpoint_id, event_id, success, at, expires_at, record)
			VALUES ($1, $2, $3, $4, $5, $6)`, a.EndpointID, a.EventID, a.Success, a.At, a.At.Add(onboarding.DeliveryLogRetention), l.Record)
	}
	return nil
}

func queueApplication(b *pgx.Batch, l *dump.Line, n int) error {
	var app onboarding.Application
	if err := record.Decode(l.Record, &app); err != nil {
		return err
	}
	id, err := uuid.Parse(app.ID)
	if err != nil {
		return fmt.Errorf("application id %q: %w", app.ID, err)
	}
	exec(b, n, `INSERT INTO applications (id, org_id, status, seq, registry_documents_pending, blob_ids, record, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 1)`,
		id, app.OrgID, string(app.Status), seqBytes(app.Seq), pending(&app), nullIfEmpty(app.BlobIDs()), l.Record)
	slugs, _ := slugDiff(nil, appSlugs(&app))
	from := b.Len()
	queueSlugs(b, "application_slugs", "application_id", id, slugs, nil)
	ofLine(b, from, n)
	return nil
}

// queueRFI queues an RFI request with its slugs and, when it is active,
// its row of the expiry queue, leased when the line says so.
func queueRFI(b *pgx.Batch, l *dump.Line, n int) error {
	var r onboarding.RFIRequest
	if err := record.Decode(l.Record, &r); err != nil {
		return err
	}
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return fmt.Errorf("rfi request id %q: %w", r.ID, err)
	}
	exec(b, n, `INSERT INTO rfi_requests (id, org_id, status, seq, blob_ids, record) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, r.OrgID, string(r.Status), seqBytes(r.Seq), nullIfEmpty(r.BlobIDs()), l.Record)
	slugs, _ := slugDiff(nil, rfiSlugs(&r))
	from := b.Len()
	queueSlugs(b, "rfi_slugs", "rfi_id", id, slugs, nil)
	ofLine(b, from, n)
	if r.Status != onboarding.RFIActive {
		return nil
	}
	var owner *string
	var until *int64
	if l.Owner != "" {
		ns := dueNanos(l.LeaseUntil)
		owner, until = &l.Owner, &ns
	}
	exec(b, n, `INSERT INTO rfi_expiry_queue (rfi_id, expires_ns, lease_owner, lease_until_ns) VALUES ($1, $2, $3, $4)`,
		id, dueNanos(r.ExpiresAt), owner, until)
	return nil
}

func queueActivity(b *pgx.Batch, l *dump.Line, n int) error {
	subject, err := uuid.Parse(l.Subject)
	if err != nil {
		return fmt.Errorf("activity subject %q: %w", l.Subject, err)
	}
	if _, err := loggedActivity(seqBytes(l.Seq), l.Record); err != nil {
		return err
	}
	exec(b, n, `INSERT INTO activity_entries (subject, seq, record) VALUES ($1, $2, $3)`, subject, seqBytes(l.Seq), l.Record)
	return nil
}

// queueHead sets the head of an application's or RFI request's log, in
// its row, which an earlier line wrote.
func queueHead(b *pgx.Batch, l *dump.Line, n int) error {
	subject, err := uuid.Parse(l.Subject)
	if err != nil {
		return fmt.Errorf("activity subject %q: %w", l.Subject, err)
	}
	b.Queue(`WITH a AS (
			UPDATE applications SET log_seq = $2, log_hash = $3 WHERE id = $1 AND log_seq IS NULL RETURNING 1
		), r AS (
			UPDATE rfi_requests SET log_seq = $2, log_hash = $3 WHERE id = $1 AND log_seq IS NULL RETURNING 1
		)
		SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM r)`, subject, seqBytes(l.Seq), l.Hash).Fn = func(br pgx.BatchResults) error {
		var set int
		if err := br.QueryRow().Scan(&set); err != nil {
			return lineFailure(n, err)
		}
		if set != 1 {
			return &dump.LineError{Line: n, Err: fmt.Errorf("the head of the log of %s, which is no application or RFI request before it", l.Subject)}
		}
		return nil
	}
	return nil
}

// exec queues a statement of line n (lineFailure).
func exec(b *pgx.Batch, n int, sql string, args ...any) {
	b.Queue(sql, args...).Fn = execOf(n)
}

// ofLine makes the statements of b from the from-th on statements of line
// n, as exec queues them.
func ofLine(b *pgx.Batch, from, n int) {
	for _, q := range b.QueuedQueries[from:] {
		q.Fn = execOf(n)
	}
}

// execOf runs a statement of line n: its failure is lineFailure's.
func execOf(n int) func(pgx.BatchResults) error {
	return func(br pgx.BatchResults) error {
		_, err := br.Exec()
		return lineFailure(n, err)
	}
}

// lineFailure is err, the failure of a statement of line n: one that the
// line's content causes (SQLSTATE class 22, data exception, or 23,
// integrity constraint violation: a row twice) is a *dump.LineError.
func lineFailure(n int, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code[:2] == "22" || pe.Code[:2] == "23") {
		what := pe.Message
		if pe.Detail != "" {
			what += ": " + pe.Detail
		}
		return &dump.LineError{Line: n, Err: errors.New(what)}
	}
	return err
}

// Secrets returns every generated secret, name → value (backup.SecretSource).
func (s *Store) Secrets(ctx context.Context) (map[string][]byte, error) {
	rows, err := s.pool.Query(ctx, "SELECT name, value FROM secrets")
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	out := map[string][]byte{}
	var name string
	var value []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		out[name] = value
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	return out, nil
}

// PutSecret keeps value as the generated secret name, replacing one there
// already (backup.SecretWriter: a restore's secrets replace those an
// instance created before it).
func (s *Store) PutSecret(ctx context.Context, name string, value []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO secrets (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("store secret %s: %w", name, err)
	}
	return nil
}
