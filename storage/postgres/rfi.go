package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// RFI requests (0002_records.sql: rfi_requests, rfi_slugs,
// rfi_expiry_queue): the record, its slugs and its row in the expiry
// queue, all written in the transaction that writes the record, with the
// activity entries and events of the change.

var _ onboarding.RFIStore = (*Store)(nil)

// rfiSlugs returns the link slugs of r's participants.
func rfiSlugs(r *onboarding.RFIRequest) []string {
	out := make([]string, 0, len(r.Participants))
	for _, p := range r.Participants {
		out = append(out, p.LinkSlug)
	}
	return out
}

// dueNanos is t as the expiry queue orders it: unix nanoseconds, with
// times before 1970 as 0 (the embedded store's order).
func dueNanos(t time.Time) int64 {
	if t.Before(time.Unix(0, 0)) {
		return 0
	}
	return t.UnixNano()
}

// queueRequeue queues into b what keeps request id's row of the expiry
// queue in step with r, the record the batch writes: an active request
// has exactly one row, at r.ExpiresAt unless a claim holds it (then at the
// lease's end, kept as long as ExpiresAt does not change, so that an
// unrelated update does not end the lease), and a request that is not
// active has none. The statements lock the row, so an update waits for a
// claim of the request in flight, and a claim skips a request whose
// update is in flight.
func queueRequeue(b *pgx.Batch, id uuid.UUID, r *onboarding.RFIRequest) {
	if r.Status != onboarding.RFIActive {
		b.Queue(`DELETE FROM rfi_expiry_queue WHERE rfi_id = $1`, pgUUID(id))
		return
	}
	b.Queue(`INSERT INTO rfi_expiry_queue (rfi_id, expires_ns) VALUES ($1, $2)
		ON CONFLICT (rfi_id) DO UPDATE SET expires_ns = excluded.expires_ns, lease_owner = NULL, lease_until_ns = NULL
		WHERE rfi_expiry_queue.expires_ns <> excluded.expires_ns`, pgUUID(id), dueNanos(r.ExpiresAt))
}

// CreateRFIRequest stores r, its slugs, its expiry-queue row (when it is
// active), its first activity entries, the outcome of its request with an
// Idempotency-Key and its first events in one transaction. An id or a
// link slug already stored is errDuplicate, and nothing is written.
func (s *Store) CreateRFIRequest(ctx context.Context, r *onboarding.RFIRequest, ch onboarding.Changes) error {
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return fmt.Errorf("create rfi request: bad id %q: %w", r.ID, err)
	}
	rec, err := record.Encode(r)
	if err != nil {
		return err
	}
	w, err := s.encodeChanges(id, nil, ch)
	if err != nil {
		return err
	}
	slugs, _ := slugDiff(nil, rfiSlugs(r))
	logSeq, logHash := headColumns(w.log.head)
	err = s.sendAtomically(ctx, id.String(), func(b *pgx.Batch) {
		b.Queue(`INSERT INTO rfi_requests (id, org_id, status, seq, log_seq, log_hash, blob_ids, record)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			pgUUID(id), r.OrgID, string(r.Status), seqBytes(r.Seq), logSeq, logHash, nullIfEmpty(r.BlobIDs()), rec)
		queueSlugs(b, "rfi_slugs", "rfi_id", id, slugs, nil)
		if r.Status == onboarding.RFIActive {
			b.Queue(`INSERT INTO rfi_expiry_queue (rfi_id, expires_ns) VALUES ($1, $2)`, pgUUID(id), dueNanos(r.ExpiresAt))
		}
		w.queue(b, id)
	}, ch.Events)
	return duplicate("create rfi request "+r.ID, err)
}

// RFIRequest returns the RFI request with id, or onboarding.ErrNotFound.
func (s *Store) RFIRequest(ctx context.Context, id string) (*onboarding.RFIRequest, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, err
	}
	return queryRecord[onboarding.RFIRequest](ctx, s.pool, `SELECT record FROM rfi_requests WHERE id = $1`, pgUUID(u))
}

// RFIRequestBySlug returns the RFI request one of whose participants has
// the link slug, or onboarding.ErrNotFound.
func (s *Store) RFIRequestBySlug(ctx context.Context, slug string) (*onboarding.RFIRequest, error) {
	if slug == "" || !textKey(slug) {
		return nil, onboarding.ErrNotFound
	}
	return queryRecord[onboarding.RFIRequest](ctx, s.pool, `SELECT r.record FROM rfi_slugs s
		JOIN rfi_requests r ON r.id = s.rfi_id WHERE s.slug = $1`, slug)
}

// UpdateRFIRequest applies change to the stored RFI request and writes, in
// one transaction, its record and columns, the slugs that changed, its
// expiry-queue row, the activity entries, the idempotent outcome and the
// events, as UpdateApplication does (lockedUpdate), locking the request's
// row first.
func (s *Store) UpdateRFIRequest(ctx context.Context, id string, change func(*onboarding.RFIRequest) (onboarding.Changes, error)) (*onboarding.RFIRequest, error) {
	u, err := parseID(id)
	if err != nil {
		return nil, err
	}
	var (
		result    *onboarding.RFIRequest
		rec, hseq []byte
		hhash     *string
	)
	err = s.lockedUpdate(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT record, log_seq, log_hash FROM rfi_requests WHERE id = $1 FOR UPDATE`, pgUUID(u)).QueryRow(func(row pgx.Row) error {
			return notFound(row.Scan(&rec, &hseq, &hhash))
		})
	}, func(pgx.Tx) (*pgx.Batch, []*onboarding.Event, error) {
		head, err := scanHead(hseq, hhash)
		if err != nil {
			return nil, nil, err
		}
		var r onboarding.RFIRequest
		if err := record.Decode(rec, &r); err != nil {
			return nil, nil, err
		}
		oldSlugs, oldID, oldOrg, oldSeq := rfiSlugs(&r), r.ID, r.OrgID, r.Seq
		ch, err := change(&r)
		if err != nil {
			return nil, nil, err
		}
		if r.ID != oldID || r.OrgID != oldOrg || r.Seq != oldSeq {
			return nil, nil, fmt.Errorf("update rfi request %s: id, organization and sequence are immutable", id)
		}
		newRec, err := record.Encode(&r)
		if err != nil {
			return nil, nil, err
		}
		w, err := s.encodeChanges(u, head, ch)
		if err != nil {
			return nil, nil, err
		}
		added, removed := slugDiff(oldSlugs, rfiSlugs(&r))
		logSeq, logHash := headColumns(w.log.head)
		b := &pgx.Batch{}
		b.Queue(`UPDATE rfi_requests SET status = $2, log_seq = $3, log_hash = $4, blob_ids = $5, record = $6 WHERE id = $1`,
			pgUUID(u), string(r.Status), logSeq, logHash, nullIfEmpty(r.BlobIDs()), newRec)
		queueSlugs(b, "rfi_slugs", "rfi_id", u, added, removed)
		queueRequeue(b, u, &r)
		w.queue(b, u)
		result = &r
		return b, ch.Events, nil
	})
	if err != nil {
		return nil, duplicate("update rfi request "+id, err)
	}
	return result, nil
}

// ListRFIRequests returns a page of the organization's RFI requests (of
// one status, or of all), newest first from before q.Before, as
// ListApplications does.
func (s *Store) ListRFIRequests(ctx context.Context, q onboarding.RFIListQuery) ([]*onboarding.RFIRequest, bool, error) {
	sql, args := listQuery("rfi_requests", q.OrgID, string(q.Status), q.Before[:], q.Limit)
	return queryRecords[onboarding.RFIRequest](ctx, s.pool, q.Limit, sql, args...)
}

// claimRFISQL leases ($3 owner, $4 the lease's end) up to $2 requests due
// at or before $1, earliest first, skipping the rows other transactions
// hold (a concurrent claim, an update in flight), and answers their ids in
// due order with the due time of the earliest request it did not take:
// one statement, so one transaction and one snapshot.
const claimRFISQL = `WITH due AS (
		SELECT rfi_id, due_ns FROM rfi_expiry_queue WHERE due_ns <= $1
		ORDER BY due_ns, rfi_id LIMIT $2 FOR UPDATE SKIP LOCKED
	), claimed AS (
		UPDATE rfi_expiry_queue q SET lease_owner = $3, lease_until_ns = $4
		FROM due WHERE q.rfi_id = due.rfi_id RETURNING q.rfi_id
	)
	SELECT
		coalesce((SELECT array_agg(due.rfi_id::text ORDER BY due.due_ns, due.rfi_id) FROM due JOIN claimed USING (rfi_id)), '{}'),
		(SELECT min(due_ns) FROM rfi_expiry_queue WHERE rfi_id NOT IN (SELECT rfi_id FROM claimed))`

// ClaimRFIExpiries leases up to c.Limit active requests due at or before
// c.Now (their ExpiresAt, or the end of a lapsed lease) to c.Owner until
// c.Now+c.Lease, earliest first, and returns their ids. next is the due
// time of the earliest request not taken: later than c.Now, or, when
// c.Limit cut the claim short (or a concurrent claim or update held a
// row), one due already. Claims of several instances never take the
// same request while its lease runs.
func (s *Store) ClaimRFIExpiries(ctx context.Context, c onboarding.Claim) ([]string, time.Time, error) {
	var ids []string
	var next *int64
	now, until := dueNanos(c.Now), dueNanos(c.Now.Add(c.Lease))
	if err := s.pool.QueryRow(ctx, claimRFISQL, now, max(c.Limit, 0), c.Owner, until).Scan(&ids, &next); err != nil {
		return nil, time.Time{}, fmt.Errorf("claim rfi expiries: %w", err)
	}
	if len(ids) == 0 {
		ids = nil
	}
	if next == nil {
		return ids, time.Time{}, nil
	}
	return ids, time.Unix(0, *next).UTC(), nil
}
