package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"onboard/onboarding"
	"onboard/storage/record"
)

// TamperWithActivity rewrites the subject's stored activity log behind the
// hash chain's back, as someone with write access to the database could:
// edit gets the log's head (nil when it has none) and its entries, oldest
// first, and returns what to store instead. Entries are stored exactly as
// returned, under their Seq, with their Prev and Hash (nothing is
// recomputed), and the head as returned (nil: none). It exists for the
// tests of `onboard apps verify-log`, which must detect every such change;
// onboard itself never calls it. It locks the subject's row (an
// application's or an RFI request's) as an update does, so that the next
// update chains after the head stored here; a subject with no record is
// onboarding.ErrNotFound.
func (s *Store) TamperWithActivity(ctx context.Context, subjectID string,
	edit func(head *onboarding.ActivityHead, log []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity)) error {
	u, err := parseID(subjectID)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		table := "applications"
		var seq []byte
		var hash *string
		err := tx.QueryRow(ctx, `SELECT log_seq, log_hash FROM applications WHERE id = $1 FOR UPDATE`, pgUUID(u)).Scan(&seq, &hash)
		if errors.Is(err, pgx.ErrNoRows) {
			table = "rfi_requests"
			err = tx.QueryRow(ctx, `SELECT log_seq, log_hash FROM rfi_requests WHERE id = $1 FOR UPDATE`, pgUUID(u)).Scan(&seq, &hash)
		}
		if err != nil {
			return notFound(err)
		}
		head, err := scanHead(seq, hash)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `DELETE FROM activity_entries WHERE subject = $1 RETURNING seq, record`, pgUUID(u))
		if err != nil {
			return err
		}
		var log []onboarding.LoggedActivity
		for rows.Next() {
			raw := rows.RawValues()
			e, err := loggedActivity(raw[0], raw[1])
			if err != nil {
				rows.Close()
				return err
			}
			log = append(log, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		slices.SortFunc(log, func(a, b onboarding.LoggedActivity) int { return a.Seq.Compare(b.Seq) })
		head, log = edit(head, log)
		b := &pgx.Batch{}
		for _, e := range log {
			rec, err := record.Encode(&storedActivity{Activity: e.Activity, Prev: e.Prev, Hash: e.Hash})
			if err != nil {
				return err
			}
			b.Queue(`INSERT INTO activity_entries (subject, seq, record) VALUES ($1, $2, $3)
				ON CONFLICT (subject, seq) DO UPDATE SET record = excluded.record`, pgUUID(u), seqBytes(e.Seq), rec)
		}
		logSeq, logHash := headColumns(head)
		set := `log_seq = $2, log_hash = $3`
		if table == "applications" {
			set += `, version = version + 1` // cached heads are of the last version
		}
		b.Queue(`UPDATE `+table+` SET `+set+` WHERE id = $1`, pgUUID(u), logSeq, logHash)
		return sendBatch(ctx, tx, b)
	})
}
