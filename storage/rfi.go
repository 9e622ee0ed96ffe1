package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
)

// RFI requests (keys.go): the r/ record, its listing and slug indexes, and
// its entry in the expiry queue, all written in the transaction that writes
// the record, with the activity entries and events of the change.

var _ onboarding.RFIStore = (*Store)(nil)

// CreateRFIRequest stores r, its index entries, its expiry-queue entry
// (when it is active), its first activity entries and its first events
// (queued for the endpoints that want them) in one transaction.
func (s *Store) CreateRFIRequest(ctx context.Context, r *onboarding.RFIRequest, ch onboarding.Changes) error {
	id, err := uuid.Parse(r.ID)
	if err != nil {
		return fmt.Errorf("create rfi request: bad id %q: %w", r.ID, err)
	}
	rec, err := record.Encode(r)
	if err != nil {
		return err
	}
	outcome, err := encodeOutcome(ch.Idempotent)
	if err != nil {
		return err
	}
	ix := rfiIndexes(r, id)
	defer s.due.lower(eventDues(ch.Events))
	return s.update(ctx, func(txn *badger.Txn) error {
		key := rfiKey(id)
		if err := insertRecord(txn, "rfi request "+r.ID, key, rec, ix, rfiQueuedKey(id)); err != nil {
			return err
		}
		if err := requeueRFI(txn, id, nil, r); err != nil {
			return err
		}
		if err := s.appendActivity(txn, id, ch.Log); err != nil {
			return err
		}
		if err := writeOutcome(txn, outcome); err != nil {
			return err
		}
		return s.writeEvents(txn, ch.Events)
	})
}

// RFIRequest returns the RFI request with id, or onboarding.ErrNotFound.
func (s *Store) RFIRequest(_ context.Context, id string) (*onboarding.RFIRequest, error) {
	u, err := parseAppID(id)
	if err != nil {
		return nil, err
	}
	var r onboarding.RFIRequest
	if err := s.view(func(txn *badger.Txn) error { return getRecord(txn, rfiKey(u), &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}

// RFIRequestBySlug returns the RFI request one of whose participants has
// the link slug, or onboarding.ErrNotFound.
func (s *Store) RFIRequestBySlug(_ context.Context, slug string) (*onboarding.RFIRequest, error) {
	if slug == "" {
		return nil, onboarding.ErrNotFound
	}
	return recordByIndex(s, rfiSlugIndexKey(slug), recordAt[onboarding.RFIRequest](rfiKey))
}

// UpdateRFIRequest applies change to the stored RFI request, rewrites the
// index entries that changed, keeps its expiry-queue entry in step with its
// status (requeueRFI), appends the activity entries and writes the events
// (queued for the endpoints that want them), all in one transaction retried
// on write conflicts. Updates of one request queue on the Store's per-id
// locks, which it shares with the applications (ids are UUIDs).
func (s *Store) UpdateRFIRequest(ctx context.Context, id string, change func(*onboarding.RFIRequest) (onboarding.Changes, error)) (*onboarding.RFIRequest, error) {
	u, err := parseAppID(id)
	if err != nil {
		return nil, err
	}
	lock := s.appLock(u)
	lock.Lock()
	defer lock.Unlock()
	var result *onboarding.RFIRequest
	var dues dueWrites // of the last attempt's events
	err = s.update(ctx, func(txn *badger.Txn) error {
		dues = dueWrites{}
		key := rfiKey(u)
		var r onboarding.RFIRequest
		if err := getRecord(txn, key, &r); err != nil {
			return err
		}
		oldIx := rfiIndexes(&r, u)
		old := r
		ch, err := change(&r)
		if err != nil {
			return err
		}
		if r.ID != old.ID || r.OrgID != old.OrgID || r.Seq != old.Seq {
			return fmt.Errorf("update rfi request %s: id, organization and sequence are immutable", id)
		}
		if err := setRecord(txn, key, &r); err != nil {
			return err
		}
		if err := rewriteIndexes(txn, oldIx, rfiIndexes(&r, u)); err != nil {
			return err
		}
		if err := requeueRFI(txn, u, &old, &r); err != nil {
			return err
		}
		if err := s.appendActivity(txn, u, ch.Log); err != nil {
			return err
		}
		outcome, err := encodeOutcome(ch.Idempotent)
		if err != nil {
			return err
		}
		if err := writeOutcome(txn, outcome); err != nil {
			return err
		}
		dues = eventDues(ch.Events)
		if err := s.writeEvents(txn, ch.Events); err != nil {
			return err
		}
		result = &r
		return nil
	})
	s.due.lower(dues)
	if err != nil {
		return nil, err
	}
	return result, nil
}

// requeueRFI keeps the expiry queue in step with r, which the transaction
// writes as request id's record (old is the record it replaces, nil on
// create). An active request keeps exactly one xrx/ entry, named by its
// xrq/ key, and a request that is not active has none. The entry is at
// r.ExpiresAt, except while a claim holds it: then it is at the lease's
// end, and stays there as long as ExpiresAt does not change, so that an
// unrelated update does not end the lease. Claims write xrq/ too, so an
// update and a claim of the same request conflict and one of them retries.
func requeueRFI(txn *badger.Txn, id uuid.UUID, old, r *onboarding.RFIRequest) error {
	qk := rfiQueuedKey(id)
	var cur []byte
	switch item, err := txn.Get(qk); {
	case err == nil:
		if cur, err = item.ValueCopy(nil); err != nil {
			return err
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		return err
	}
	if r.Status != onboarding.RFIActive {
		if cur == nil {
			return nil
		}
		if err := txn.Delete(cur); err != nil {
			return err
		}
		return txn.Delete(qk)
	}
	if cur != nil && old != nil && old.ExpiresAt.Equal(r.ExpiresAt) {
		return nil // at ExpiresAt already, or leased
	}
	want := rfiExpiryKey(r.ExpiresAt, id)
	if cur != nil {
		if bytes.Equal(cur, want) {
			return nil
		}
		if err := txn.Delete(cur); err != nil {
			return err
		}
	}
	if err := txn.Set(want, nil); err != nil {
		return err
	}
	return txn.Set(qk, want)
}

// ListRFIRequests walks the organization's (or organization and status)
// RFI index backwards from q.Before (listNewestFirst).
func (s *Store) ListRFIRequests(_ context.Context, q onboarding.RFIListQuery) ([]*onboarding.RFIRequest, bool, error) {
	return listNewestFirst(s, rfiListPrefix(q.OrgID, q.Status), q.Before, q.Limit, recordAt[onboarding.RFIRequest](rfiKey))
}

// ClaimRFIExpiries walks the expiry queue from its start, earliest first,
// and moves up to c.Limit entries due at or before c.Now to c.Now+c.Lease,
// with c.Owner as their value, returning their requests' ids. next is the
// due time of the first entry after those taken: later than c.Now, or,
// when c.Limit cut the claim short, the due time of the first request
// left waiting.
//
// It is one transaction, which reads every entry it walks: a claim and an
// update of the same request conflict (requeueRFI), and so would two claims
// that meet the same entry, though the claims of this process (the only one
// that opens the database) queue on a lock instead, as they would
// otherwise mostly conflict.
//
// The walk starts at the front of xrx/, which entries leave as they are
// claimed or expired: unlike the delivery queue (duefloor.go) no floor
// skips their deleted versions, a cost bounded by the requests expired
// since the last compaction.
func (s *Store) ClaimRFIExpiries(ctx context.Context, c onboarding.Claim) ([]string, time.Time, error) {
	s.rfiClaims.Lock()
	defer s.rfiClaims.Unlock()
	var ids []string
	var next time.Time
	err := s.update(ctx, func(txn *badger.Txn) error {
		ids, next = nil, time.Time{}
		type entry struct {
			key []byte
			id  uuid.UUID
		}
		var due []entry
		for item := range scanPrefix(txn, []byte(prefixRFIExpiry), scanOpts{keysOnly: true}) {
			k := item.KeyCopy(nil)
			at, id, err := parseRFIExpiryKey(k)
			if err != nil {
				return err
			}
			if at.After(c.Now) || len(due) >= c.Limit {
				next = at
				break
			}
			due = append(due, entry{k, id})
		}
		until := c.Now.Add(c.Lease)
		for _, e := range due {
			to := rfiExpiryKey(until, e.id)
			if !bytes.Equal(to, e.key) {
				if err := txn.Delete(e.key); err != nil {
					return err
				}
			}
			if err := txn.Set(to, []byte(c.Owner)); err != nil {
				return err
			}
			if err := txn.Set(rfiQueuedKey(e.id), to); err != nil {
				return err
			}
			ids = append(ids, e.id.String())
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return ids, next, nil
}
