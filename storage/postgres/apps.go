package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
// in one transaction. An id or a link slug already stored is errDuplicate,
// and nothing is written.
func (s *Store) CreateApplication(ctx context.Context, app *onboarding.Application, ch onboarding.Changes) error {
	id, err := uuid.Parse(app.ID)
	if err != nil {
		return fmt.Errorf("create application: bad id %q: %w", app.ID, err)
	}
	rec, err := record.Encode(app)
	if err != nil {
		return err
	}
	log, err := s.chain(id, nil, ch.Log)
	if err != nil {
		return err
	}
	slugs, _ := slugDiff(nil, appSlugs(app))
	logSeq, logHash := headColumns(log.head)
	err = s.inBatchTx(ctx, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO applications (id, org_id, status, seq, registry_documents_pending, log_seq, log_hash, blob_ids, record)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, app.OrgID, string(app.Status), seqBytes(app.Seq), app.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending,
			logSeq, logHash, nullIfEmpty(app.BlobIDs()), rec)
		if len(slugs) > 0 {
			b.Queue(`INSERT INTO application_slugs (slug, application_id) SELECT unnest($1::text[]), $2`, slugs, id)
		}
	}, func(tx pgx.Tx) error {
		return s.writeChanges(ctx, tx, &pgx.Batch{}, id, log, ch)
	})
	return duplicate("create application "+app.ID, err)
}

// Application returns the application with id, or onboarding.ErrNotFound.
func (s *Store) Application(ctx context.Context, id string) (*onboarding.Application, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, err
	}
	return queryRecord[onboarding.Application](ctx, s.pool, `SELECT record FROM applications WHERE id = $1`, u)
}

// ReadApplication calls read with the application with id, decoded for
// this call alone (read may not change it all the same, as the contract
// says), and answers read's error.
func (s *Store) ReadApplication(ctx context.Context, id string, read func(*onboarding.Application) error) error {
	app, err := s.Application(ctx, id)
	if err != nil {
		return err
	}
	return read(app)
}

// ApplicationBySlug returns the application one of whose participants has
// the link slug, or onboarding.ErrNotFound.
func (s *Store) ApplicationBySlug(ctx context.Context, slug string) (*onboarding.Application, error) {
	if slug == "" || !textKey(slug) {
		return nil, onboarding.ErrNotFound
	}
	return queryRecord[onboarding.Application](ctx, s.pool, `SELECT a.record FROM application_slugs s
		JOIN applications a ON a.id = s.application_id WHERE s.slug = $1`, slug)
}

// UpdateApplication applies change to the stored application and writes,
// in one transaction, its record and columns, the slugs that changed, the
// activity entries (chained after the head read with the record), the
// idempotent outcome and the events. The transaction's first round trip
// begins it and locks the application's row (SELECT … FOR UPDATE), so
// updates of one application, from any instance, apply one after the
// other, each on what the one before wrote.
func (s *Store) UpdateApplication(ctx context.Context, id string, change func(*onboarding.Application) (onboarding.Changes, error)) (*onboarding.Application, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, err
	}
	var (
		result    *onboarding.Application
		rec, hseq []byte
		hhash     *string
	)
	err = s.inBatchTx(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT record, log_seq, log_hash FROM applications WHERE id = $1 FOR UPDATE`, u).QueryRow(func(row pgx.Row) error {
			return notFound(row.Scan(&rec, &hseq, &hhash))
		})
	}, func(tx pgx.Tx) error {
		head, err := scanHead(hseq, hhash)
		if err != nil {
			return err
		}
		var app onboarding.Application
		if err := record.Decode(rec, &app); err != nil {
			return err
		}
		oldSlugs, oldID, oldOrg, oldSeq := appSlugs(&app), app.ID, app.OrgID, app.Seq
		ch, err := change(&app)
		if err != nil {
			return err
		}
		if app.ID != oldID || app.OrgID != oldOrg || app.Seq != oldSeq {
			return fmt.Errorf("update application %s: id, organization and sequence are immutable", id)
		}
		newRec, err := record.Encode(&app)
		if err != nil {
			return err
		}
		log, err := s.chain(u, head, ch.Log)
		if err != nil {
			return err
		}
		logSeq, logHash := headColumns(log.head)
		b := &pgx.Batch{}
		b.Queue(`UPDATE applications SET status = $2, registry_documents_pending = $3, log_seq = $4, log_hash = $5, blob_ids = $6, record = $7
			WHERE id = $1`, u, string(app.Status), app.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending,
			logSeq, logHash, nullIfEmpty(app.BlobIDs()), newRec)
		queueSlugChanges(b, "application_slugs", "application_id", u, oldSlugs, appSlugs(&app))
		if err := s.writeChanges(ctx, tx, b, u, log, ch); err != nil {
			return duplicate("update application "+id, err)
		}
		result = &app
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}

// queueSlugChanges queues into b the slug rows (of table, naming their
// record in column) that an update of record id from before's slugs to
// after's deletes and inserts.
func queueSlugChanges(b *pgx.Batch, table, column string, id uuid.UUID, before, after []string) {
	added, removed := slugDiff(before, after)
	if len(removed) > 0 {
		b.Queue(`DELETE FROM `+table+` WHERE slug = ANY($1) AND `+column+` = $2`, removed, id)
	}
	if len(added) > 0 {
		b.Queue(`INSERT INTO `+table+` (slug, `+column+`) SELECT unnest($1::text[]), $2`, added, id)
	}
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
