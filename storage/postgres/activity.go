package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/storage/record"
)

// Activity logs (0002_records.sql: activity_entries, and the head in the
// subject's row). Every append chains the entries after the log's head,
// read with the subject's locked row, and moves the head, in the
// transaction of the change the entries record
// (onboarding/activitychain.go has the chain).

var _ onboarding.ActivityStore = (*Store)(nil)

// storedActivity is an activity entry as its record holds it: the entry
// and its link in its log's hash chain (the embedded store's layout).
type storedActivity struct {
	onboarding.Activity
	Prev string // hex, onboarding.LoggedActivity.Prev
	Hash string // hex, onboarding.LoggedActivity.Hash
}

// ulids issues the ULIDs of activity entries: each greater than any it
// issued before, from one monotonic source under a mutex.
type ulids struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

// next returns a ULID at t's millisecond, greater than any issued before
// at that millisecond.
func (u *ulids) next(t time.Time) ulid.ULID {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.entropy == nil {
		u.entropy = ulid.Monotonic(rand.Reader, 0)
	}
	return ulid.MustNew(ulid.Timestamp(t), u.entropy)
}

// successor is the ULID just above u.
func successor(u ulid.ULID) ulid.ULID {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]++
		if u[i] != 0 {
			break
		}
	}
	return u
}

// chainedLog is a change's activity entries chained after its subject's
// head, ready to write: their seqs and records, and the head after them
// (the head before when there are none).
type chainedLog struct {
	seqs, recs [][]byte
	head       *onboarding.ActivityHead
}

// chain chains log after head (nil: the log is empty so far): each entry
// gets a Seq above the log's last (from its At, or just above the last
// when the clock has not moved past it), is chained after the entry
// before it, and the head moves to the last one.
func (s *Store) chain(subject uuid.UUID, head *onboarding.ActivityHead, log []onboarding.Activity) (chainedLog, error) {
	c := chainedLog{head: head}
	if len(log) == 0 {
		return c, nil
	}
	prev, last := onboarding.ActivityChainStart(subject.String()), ulid.ULID{}
	if head != nil {
		prev, last = head.Hash, head.Seq
	}
	for i := range log {
		e := onboarding.LoggedActivity{Seq: s.ids.next(log[i].At), Activity: log[i], Prev: prev}
		if e.Seq.Compare(last) <= 0 {
			e.Seq = successor(last)
		}
		e.Hash = onboarding.ActivityHash(prev, &e)
		rec, err := record.Encode(&storedActivity{Activity: e.Activity, Prev: e.Prev, Hash: e.Hash})
		if err != nil {
			return chainedLog{}, err
		}
		c.seqs = append(c.seqs, seqBytes(e.Seq))
		c.recs = append(c.recs, rec)
		prev, last = e.Hash, e.Seq
	}
	c.head = &onboarding.ActivityHead{Seq: last, Hash: prev}
	return c, nil
}

// headColumns are head as the log_seq and log_hash columns hold it.
func headColumns(head *onboarding.ActivityHead) (seq []byte, hash *string) {
	if head == nil {
		return nil, nil
	}
	h := head.Hash
	return seqBytes(head.Seq), &h
}

// scanHead converts the log_seq and log_hash columns read into a head;
// nil when they are NULL (an empty log).
func scanHead(seq []byte, hash *string) (*onboarding.ActivityHead, error) {
	if seq == nil || hash == nil {
		return nil, nil
	}
	u, err := scanULID(seq)
	if err != nil {
		return nil, fmt.Errorf("activity head: %w", err)
	}
	return &onboarding.ActivityHead{Seq: u, Hash: *hash}, nil
}

// loggedActivity decodes an activity_entries row.
func loggedActivity(seq, rec []byte) (onboarding.LoggedActivity, error) {
	u, err := scanULID(seq)
	if err != nil {
		return onboarding.LoggedActivity{}, fmt.Errorf("activity entry: %w", err)
	}
	var st storedActivity
	if err := record.Decode(rec, &st); err != nil {
		return onboarding.LoggedActivity{}, fmt.Errorf("activity entry %s: %w", u, err)
	}
	return onboarding.LoggedActivity{Seq: u, Activity: st.Activity, Prev: st.Prev, Hash: st.Hash}, nil
}

// ActivityAfter returns up to limit entries of the subject's log after
// after (zero: from the first), oldest first, and whether more follow: an
// index scan from after, so its cost does not grow with the log.
func (s *Store) ActivityAfter(ctx context.Context, subjectID string, after ulid.ULID, limit int) ([]onboarding.LoggedActivity, bool, error) {
	u, err := parseID(subjectID)
	if err != nil {
		return nil, false, err
	}
	from := []byte{} // below every seq
	if after != (ulid.ULID{}) {
		from = seqBytes(after)
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, record FROM activity_entries
		WHERE subject = $1 AND seq > $2 ORDER BY seq LIMIT $3`, pgUUID(u), from, pageLimit(limit))
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	page := make([]onboarding.LoggedActivity, 0, max(min(limit, 1000), 0))
	more := false
	for rows.Next() {
		if limit >= 0 && len(page) == limit {
			more = true
			break
		}
		raw := rows.RawValues()
		e, err := loggedActivity(raw[0], raw[1])
		if err != nil {
			return nil, false, err
		}
		page = append(page, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return page, more, nil
}

// ActivityLog reads the subject's head and entries from one snapshot (a
// read-only REPEATABLE READ transaction) and hands them to walk; the
// entries are decoded one at a time as walk ranges over them.
func (s *Store) ActivityLog(ctx context.Context, subjectID string, walk func(*onboarding.ActivityHead, iter.Seq2[*onboarding.LoggedActivity, error]) error) error {
	u, err := parseID(subjectID)
	if err != nil {
		return err
	}
	return s.snapshot(ctx, func(tx pgx.Tx) error {
		head, err := s.activityHead(ctx, tx, u)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT seq, record FROM activity_entries WHERE subject = $1 ORDER BY seq`, pgUUID(u))
		if err != nil {
			return err
		}
		defer rows.Close()
		entries := func(yield func(*onboarding.LoggedActivity, error) bool) {
			for rows.Next() {
				raw := rows.RawValues()
				e, err := loggedActivity(raw[0], raw[1])
				if !yield(&e, err) || err != nil {
					return
				}
			}
			if err := rows.Err(); err != nil {
				yield(nil, err)
			}
		}
		return walk(head, entries)
	})
}

// activityHead reads the head of subject's log, from the row of the
// application or RFI request it belongs to; nil when the log is empty or
// there is no such record.
func (s *Store) activityHead(ctx context.Context, tx pgx.Tx, subject uuid.UUID) (*onboarding.ActivityHead, error) {
	var seq []byte
	var hash *string
	err := tx.QueryRow(ctx, `SELECT log_seq, log_hash FROM applications WHERE id = $1
		UNION ALL SELECT log_seq, log_hash FROM rfi_requests WHERE id = $1`, pgUUID(subject)).Scan(&seq, &hash)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		return nil, err
	}
	return scanHead(seq, hash)
}

// snapshot runs fn in a read-only REPEATABLE READ transaction: every read
// of fn sees one snapshot of the database.
func (s *Store) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// Activity returns the subject's activity entries alone, oldest first.
func (s *Store) Activity(ctx context.Context, subjectID string) ([]onboarding.Activity, error) {
	u, err := parseID(subjectID)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, record FROM activity_entries WHERE subject = $1 ORDER BY seq`, pgUUID(u))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []onboarding.Activity
	for rows.Next() {
		raw := rows.RawValues()
		e, err := loggedActivity(raw[0], raw[1])
		if err != nil {
			return nil, err
		}
		out = append(out, e.Activity)
	}
	return out, rows.Err()
}
