package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"onboard/onboarding"
	"onboard/storage/record"
)

// Applications (0002_records.sql: applications, application_slugs).

// appSlugs returns the link slugs of app's participants.
func appSlugs(app *onboarding.Application) []string {
	out := make([]string, 0, len(app.Participants))
	for _, p := range app.Participants {
		out = append(out, p.LinkSlug)
	}
	return out
}

// CreateApplication stores app, its slugs, its first activity entries,
// the outcome of its request with an Idempotency-Key and its first events
// in one transaction: without events, one round trip. An id or a link slug
// already stored is errDuplicate, and nothing is written.
func (s *Store) CreateApplication(ctx context.Context, app *onboarding.Application, ch onboarding.Changes) error {
	id, err := uuid.Parse(app.ID)
	if err != nil {
		return fmt.Errorf("create application: bad id %q: %w", app.ID, err)
	}
	rec, err := record.Encode(app)
	if err != nil {
		return err
	}
	w, err := s.encodeChanges(id, nil, ch)
	if err != nil {
		return err
	}
	slugs, _ := slugDiff(nil, appSlugs(app))
	logSeq, logHash := headColumns(w.log.head)
	blobs := nullIfEmpty(app.BlobIDs())
	err = s.sendAtomically(ctx, id.String(), func(b *pgx.Batch) {
		b.Queue(`INSERT INTO applications (id, org_id, status, seq, registry_documents_pending, log_seq, log_hash, blob_ids, record, version)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1)`,
			pgUUID(id), app.OrgID, string(app.Status), seqBytes(app.Seq), pending(app), logSeq, logHash, blobs, rec)
		queueSlugs(b, "application_slugs", "application_id", id, slugs, nil)
		w.queue(b, id)
	}, ch.Events)
	if err != nil {
		return duplicate("create application "+app.ID, err)
	}
	s.apps.put(id, 1, app.Clone(), w.log.head, jsonSize(rec))
	return nil
}

// pending is app's registry_documents_pending column.
func pending(app *onboarding.Application) bool {
	return app.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending
}

// readAppSQL reads application $1's version, and its record (and its
// log's head) unless the version is $2 (the cache's).
const readAppSQL = `SELECT version, CASE WHEN version = $2 THEN NULL ELSE record END, log_seq, log_hash
	FROM applications WHERE id = $1`

// sharedApplication returns the application with id as the cache shares
// it, reading the record only when the cache's version is not the row's.
func (s *Store) sharedApplication(ctx context.Context, id string) (*onboarding.Application, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, err
	}
	var cv int64
	c := s.apps.get(u)
	if c != nil {
		cv = c.version
	}
	var version int64
	var rec, hseq []byte
	var hhash *string
	if err := s.pool.QueryRow(ctx, readAppSQL, pgUUID(u), cv).Scan(&version, &rec, &hseq, &hhash); err != nil {
		return nil, notFound(err)
	}
	if rec == nil {
		return c.app, nil
	}
	head, err := scanHead(hseq, hhash)
	if err != nil {
		return nil, err
	}
	app := new(onboarding.Application)
	if err := record.Decode(rec, app); err != nil {
		return nil, err
	}
	s.apps.put(u, version, app, head, jsonSize(rec))
	return app, nil
}

// Application returns the application with id, or onboarding.ErrNotFound:
// the caller's own copy.
func (s *Store) Application(ctx context.Context, id string) (*onboarding.Application, error) {
	app, err := s.sharedApplication(ctx, id)
	if err != nil {
		return nil, err
	}
	return app.Clone(), nil
}

// ReadApplication calls read with the application with id without copying
// it: it may be the one the cache keeps, shared with every other reader,
// so read must not change it or keep any part of it once it returns. It
// answers read's error.
func (s *Store) ReadApplication(ctx context.Context, id string, read func(*onboarding.Application) error) error {
	app, err := s.sharedApplication(ctx, id)
	if err != nil {
		return err
	}
	return read(app)
}

// ApplicationBySlug returns the application one of whose participants has
// the link slug, or onboarding.ErrNotFound: the caller's own copy, of the
// cached application when the cache holds the row's version.
func (s *Store) ApplicationBySlug(ctx context.Context, slug string) (*onboarding.Application, error) {
	if slug == "" || !textKey(slug) {
		return nil, onboarding.ErrNotFound
	}
	var raw [16]byte
	var version int64
	var rec, hseq []byte
	var hhash *string
	if err := s.pool.QueryRow(ctx, `SELECT a.id, a.version, a.record, a.log_seq, a.log_hash FROM application_slugs s
		JOIN applications a ON a.id = s.application_id WHERE s.slug = $1`, slug).Scan(&raw, &version, &rec, &hseq, &hhash); err != nil {
		return nil, notFound(err)
	}
	u := uuid.UUID(raw)
	if c := s.apps.get(u); c != nil && c.version == version {
		return c.app.Clone(), nil
	}
	head, err := scanHead(hseq, hhash)
	if err != nil {
		return nil, err
	}
	app := new(onboarding.Application)
	if err := record.Decode(rec, app); err != nil {
		return nil, err
	}
	s.apps.put(u, version, app.Clone(), head, jsonSize(rec))
	return app, nil
}

// updateAppSQL replaces application $1's row ($2 status … $7 record) if
// its version is still $8, and answers the version it gets; else it fails
// with record_changed's error, which aborts its transaction.
const updateAppSQL = `WITH app AS (
		UPDATE applications SET status = $2, registry_documents_pending = $3, log_seq = $4, log_hash = $5, blob_ids = $6,
			record = $7, version = version + 1
		WHERE id = $1 AND version = $8 RETURNING version
	) SELECT coalesce((SELECT version FROM app), record_changed())`

// recordChanged reports whether err is updateAppSQL's guard failing.
func recordChanged(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "OB001"
}

// appWrite is a change of an application, applied and encoded, and what
// the update answers.
type appWrite struct {
	u       uuid.UUID
	app     *onboarding.Application
	version int64 // the row's version it was applied to
	rec     []byte
	added   []string // slugs
	removed []string
	changes changeWrite
	events  []*onboarding.Event
	next    int64 // the version written
}

// applyAppChange runs change on app, which it may change (a copy of the
// stored application at version, whose log's head is head), and encodes
// what the update writes.
func (s *Store) applyAppChange(u uuid.UUID, app *onboarding.Application, version int64, head *onboarding.ActivityHead,
	change func(*onboarding.Application) (onboarding.Changes, error)) (*appWrite, error) {
	oldSlugs, oldID, oldOrg, oldSeq := appSlugs(app), app.ID, app.OrgID, app.Seq
	ch, err := change(app)
	if err != nil {
		return nil, err
	}
	if app.ID != oldID || app.OrgID != oldOrg || app.Seq != oldSeq {
		return nil, fmt.Errorf("update application %s: id, organization and sequence are immutable", u)
	}
	w := &appWrite{u: u, app: app, version: version, events: ch.Events}
	if w.rec, err = record.Encode(app); err != nil {
		return nil, err
	}
	if w.changes, err = s.encodeChanges(u, head, ch); err != nil {
		return nil, err
	}
	w.added, w.removed = slugDiff(oldSlugs, appSlugs(app))
	return w, nil
}

// queue queues into b the statements that write w: the row, guarded by
// its version, the slugs that changed, the entries and the outcome.
func (w *appWrite) queue(b *pgx.Batch) {
	logSeq, logHash := headColumns(w.changes.log.head)
	b.Queue(updateAppSQL, pgUUID(w.u), string(w.app.Status), pending(w.app), logSeq, logHash, nullIfEmpty(w.app.BlobIDs()), w.rec, w.version).
		QueryRow(func(row pgx.Row) error { return row.Scan(&w.next) })
	queueSlugs(b, "application_slugs", "application_id", w.u, w.added, w.removed)
	w.changes.queue(b, w.u)
}

// UpdateApplication applies change to the stored application and writes,
// in one transaction, its record and columns, the slugs that changed, the
// activity entries (chained after the head of the version changed), the
// idempotent outcome and the events.
//
// When the cache holds the application, the change is applied to a copy
// of it and written in one statement that checks the row's version
// (optimistically: one round trip, and the commit with it when there are
// no events). When the version has moved on, or the change refused the
// cached application (a refusal counts only on the stored one), or the
// cache does not hold it, the update locks the row (lockedUpdate: the
// round trip that begins the transaction runs SELECT … FOR UPDATE,
// reading the record only when the cache's version is not the row's),
// applies the change to what it read and writes. Updates of one
// application, from any instance, so apply one after the other, each on
// what the one before wrote, and a hot application's updates queue on
// its row lock rather than retry.
func (s *Store) UpdateApplication(ctx context.Context, id string, change func(*onboarding.Application) (onboarding.Changes, error)) (*onboarding.Application, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, err
	}
	if c := s.apps.get(u); c != nil {
		w, err := s.applyAppChange(u, c.app.Clone(), c.version, c.head, change)
		if err == nil {
			err = s.sendAtomically(ctx, u.String(), w.queue, w.events)
			switch {
			case err == nil:
				s.apps.put(u, w.next, w.app.Clone(), w.changes.log.head, jsonSize(w.rec))
				return w.app, nil
			case !recordChanged(err):
				return nil, duplicate("update application "+id, err)
			}
		}
	}
	var (
		w         *appWrite
		c         *cachedApp
		version   int64
		rec, hseq []byte
		hhash     *string
	)
	err = s.lockedUpdate(ctx, func(b *pgx.Batch) {
		var cv int64
		if c = s.apps.get(u); c != nil {
			cv = c.version
		}
		b.Queue(`SELECT version, CASE WHEN version = $2 THEN NULL ELSE record END, log_seq, log_hash
			FROM applications WHERE id = $1 FOR UPDATE`, pgUUID(u), cv).QueryRow(func(row pgx.Row) error {
			return notFound(row.Scan(&version, &rec, &hseq, &hhash))
		})
	}, func(pgx.Tx) (*pgx.Batch, []*onboarding.Event, error) {
		head, err := scanHead(hseq, hhash)
		if err != nil {
			return nil, nil, err
		}
		var app *onboarding.Application
		if rec == nil {
			app = c.app.Clone()
		} else {
			app = new(onboarding.Application)
			if err := record.Decode(rec, app); err != nil {
				return nil, nil, err
			}
		}
		if w, err = s.applyAppChange(u, app, version, head, change); err != nil {
			return nil, nil, err
		}
		b := &pgx.Batch{}
		w.queue(b)
		return b, w.events, nil
	})
	if err != nil {
		return nil, duplicate("update application "+id, err)
	}
	s.apps.put(u, w.next, w.app.Clone(), w.changes.log.head, jsonSize(w.rec))
	return w.app, nil
}

// ListApplications returns a page of the organization's applications (of
// one status, or of all), newest first from before q.Before: an index
// scan from the cursor, LIMIT the page and one more (to learn whether
// more follow), so its cost does not grow with the number of applications.
func (s *Store) ListApplications(ctx context.Context, q onboarding.ListQuery) ([]*onboarding.Application, bool, error) {
	sql, args := listQuery("applications", q.OrgID, string(q.Status), q.Before[:], q.Limit)
	return queryRecords[onboarding.Application](ctx, s.pool, q.Limit, sql, args...)
}

// listQuery is the page query of table's records (applications or RFI
// requests) of org, of status (empty: every status), created before
// before (zero: from the newest), newest first, up to limit and one more.
func listQuery(table, org, status string, before []byte, limit int) (string, []any) {
	sql := `SELECT record FROM ` + table + ` WHERE org_id = $1`
	args := []any{org, pageLimit(limit)}
	if status != "" {
		args = append(args, status)
		sql += fmt.Sprintf(` AND status = $%d`, len(args))
	}
	if !zeroSeq(before) {
		args = append(args, before)
		sql += fmt.Sprintf(` AND seq < $%d`, len(args))
	}
	if status != "" {
		// Ordered as the index on (org_id, status, seq) is, so that the
		// scan walks it backwards.
		return sql + ` ORDER BY org_id DESC, status DESC, seq DESC LIMIT $2`, args
	}
	return sql + ` ORDER BY org_id DESC, seq DESC LIMIT $2`, args
}

// zeroSeq reports whether a ULID's bytes are all zero: no cursor.
func zeroSeq(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// PendingRegistryDocuments returns the ids of the applications whose
// registry documents are still pending, in id order, from a partial index
// of them: its cost grows with the number pending, not with the number of
// applications.
func (s *Store) PendingRegistryDocuments(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text FROM applications WHERE registry_documents_pending ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
