package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
)

// errDuplicate reports a create that would overwrite an existing record or
// index entry; with random 122-bit ids it means a bug, not bad luck.
var errDuplicate = errors.New("record or index entry already exists")

func parseAppID(id string) (uuid.UUID, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return uuid.UUID{}, onboarding.ErrNotFound
	}
	return u, nil
}

// CreateApplication stores app, its index entries, its first activity
// entries and its first events (queued for the endpoints that want them) in
// one transaction, the group commit's (groupcommit.go).
func (s *Store) CreateApplication(ctx context.Context, app *onboarding.Application, ch onboarding.Changes) error {
	id, err := uuid.Parse(app.ID)
	if err != nil {
		return fmt.Errorf("create application: bad id %q: %w", app.ID, err)
	}
	rec, err := record.Encode(app)
	if err != nil {
		return err
	}
	events, err := encodeEvents(ch.Events)
	if err != nil {
		return err
	}
	outcome, err := encodeOutcome(ch.Idempotent)
	if err != nil {
		return err
	}
	ix := appIndexes(app, id)
	defer s.due.lower(eventDues(ch.Events))
	return s.grouped(ctx, func(txn *badger.Txn) (func() error, error) {
		key := appKey(id)
		if err := absent(txn, "application "+app.ID, key, ix); err != nil {
			return nil, err
		}
		return func() error {
			if err := putRecord(txn, key, rec, ix); err != nil {
				return err
			}
			if err := s.appendActivity(txn, id, ch.Log); err != nil {
				return err
			}
			if err := writeOutcome(txn, outcome); err != nil {
				return err
			}
			return s.writeEventRecords(txn, events)
		}, nil
	})
}

// Application returns the application with id, or onboarding.ErrNotFound.
func (s *Store) Application(_ context.Context, id string) (*onboarding.Application, error) {
	u, err := parseAppID(id)
	if err != nil {
		return nil, err
	}
	var app *onboarding.Application
	if err := s.view(func(txn *badger.Txn) error {
		app, err = s.readApplication(txn, u, true)
		return err
	}); err != nil {
		return nil, err
	}
	return app, nil
}

// ReadApplication calls read with the application with id, as Application
// returns it but without copying it: it may be the one the cache keeps,
// shared with every other reader, so read must not change it or keep any
// part of it once it returns. It answers read's error. A current cache
// entry (appCache) is read without a database transaction, until Close.
func (s *Store) ReadApplication(_ context.Context, id string, read func(*onboarding.Application) error) error {
	u, err := parseAppID(id)
	if err != nil {
		return err
	}
	app, count := s.apps.current(u)
	if app != nil && !s.closing.Load() {
		return read(app)
	}
	var version uint64
	if err := s.view(func(txn *badger.Txn) error {
		app, version, _, err = s.readSharedApplication(txn, u, true)
		return err
	}); err != nil {
		return err
	}
	s.apps.markRead(u, version, count)
	return read(app)
}

// UpdateApplication applies change to the stored application, rewrites the
// index entries that changed, appends the activity entries and writes the
// events (queued for the endpoints that want them), all in one transaction:
// the group commit's (groupcommit.go), shared with the other writes asked
// for meanwhile.
//
// Updates of one application are applied one after the other, each on
// what the one before it wrote, under the application's lock; those that
// queue behind one another are combined (appcombine.go): the caller that
// leads applies them in turn, each on the result of the one before, and
// they are committed together, each caller answered with the application
// as its own change left it. The application is changed and encoded on
// the leader's goroutine, outside the group's transaction, starting from
// the cached application when there is one; the group's transaction only
// checks that the record is still the version read (it is, unless
// something wrote it without the lock or the cache held an older
// version; then the changes are applied again, from a read) and writes.
// The updated application is kept in the cache, with the version its
// commit gave it, for the next update or read. ctx is checked before the
// change is applied: once applied, it is committed or fails with the
// others.
func (s *Store) UpdateApplication(ctx context.Context, id string, change func(*onboarding.Application) (onboarding.Changes, error)) (*onboarding.Application, error) {
	u, err := parseAppID(id)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &appChange{ctx: ctx, change: change, done: make(chan appAnswer, 1)}
	lead := s.hot.join(u, c)
	var a appAnswer
	if !lead {
		a = <-c.done // the answer, or the lead
		lead = a.lead
	}
	if lead {
		s.lead(u, c)
		a = <-c.done
	}
	if a.panicked != nil {
		panic(a.panicked)
	}
	return a.app, a.err
}

// errStale answers a grouped update whose record changed after it was read.
var errStale = errors.New("the record changed after it was read")

// ListApplications walks the organization's (or organization and status)
// index backwards from q.Before (listNewestFirst).
func (s *Store) ListApplications(_ context.Context, q onboarding.ListQuery) ([]*onboarding.Application, bool, error) {
	return listNewestFirst(s, listPrefix(q.OrgID, q.Status), q.Before, q.Limit, func(txn *badger.Txn, id uuid.UUID) (*onboarding.Application, error) {
		return s.readApplication(txn, id, false)
	})
}

// Activity returns the application's activity log, oldest first.
func (s *Store) Activity(_ context.Context, appID string) ([]onboarding.Activity, error) {
	u, err := parseAppID(appID)
	if err != nil {
		return nil, err
	}
	var out []onboarding.Activity
	err = s.view(func(txn *badger.Txn) error {
		for item := range scanPrefix(txn, activityPrefix(u), scanOpts{}) {
			var a onboarding.Activity
			if err := item.Value(func(b []byte) error { return record.Decode(b, &a) }); err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

func keysOf(m map[string][]byte) [][]byte {
	out := make([][]byte, 0, len(m))
	for k := range m {
		out = append(out, []byte(k))
	}
	return out
}

// PendingRegistryDocuments returns the ids of the applications whose
// registry documents are still pending, in id order. Its cost grows with the
// number pending, not with the number of applications.
func (s *Store) PendingRegistryDocuments(_ context.Context) ([]string, error) {
	var out []string
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte(prefixPendingDocs)
		for item := range scanPrefix(txn, prefix, scanOpts{keysOnly: true}) {
			id, err := uuid.FromBytes(item.Key()[len(prefix):])
			if err != nil {
				return fmt.Errorf("pending registry documents index: %w", err)
			}
			out = append(out, id.String())
		}
		return nil
	})
	return out, err
}

// ApplicationBySlug returns the application one of whose participants has
// the link slug, or onboarding.ErrNotFound.
func (s *Store) ApplicationBySlug(_ context.Context, slug string) (*onboarding.Application, error) {
	if slug == "" {
		return nil, onboarding.ErrNotFound
	}
	return recordByIndex(s, slugIndexKey(slug), func(txn *badger.Txn, id uuid.UUID) (*onboarding.Application, error) {
		return s.readApplication(txn, id, true)
	})
}
