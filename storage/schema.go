package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
)

// schemaVersion is written to a new database and checked on every open;
// older versions are migrated (checkSchema), one version at a time.
//
//	1: the first release
//	2: adds the xr/ index of applications with pending registry documents
//	3: drops the xp/ index of pre-auth code hashes, which nothing read
//	4: marks the API keys created without a scope list AllScopes; adds the
//	   event, endpoint, delivery queue and delivery log families (keys.go),
//	   which need no migration
//	5: chains every activity log: each v/ entry stores its hash and the one
//	   before it, and every log has a vh/ head (chainActivityLogs)
const schemaVersion = "5"

// migrationBatch bounds the keys one migration transaction deletes or reads, keeping
// it well within Badger's transaction size limit.
const migrationBatch = 1000

// checkSchema stamps a new database with schemaVersion and migrates an
// older one a version at a time. Each step records the version it reaches
// only once its changes are committed, so a migration interrupted by a
// crash runs its unfinished step again on the next open.
func (s *Store) checkSchema() error {
	ctx := context.Background()
	v, found, err := s.schema()
	if err != nil {
		return err
	}
	if !found {
		return s.setSchema(ctx, schemaVersion)
	}
	switch v {
	case schemaVersion:
		return nil
	case "1":
		if err := s.update(ctx, func(txn *badger.Txn) error {
			if err := indexPendingDocuments(txn); err != nil {
				return err
			}
			return txn.Set([]byte(keySchema), []byte("2"))
		}); err != nil {
			return fmt.Errorf("migrate schema 1 to 2: %w", err)
		}
		fallthrough
	case "2":
		if err := s.dropRetiredPreAuthIndex(ctx); err != nil {
			return fmt.Errorf("migrate schema 2 to 3: %w", err)
		}
		if err := s.setSchema(ctx, "3"); err != nil {
			return fmt.Errorf("migrate schema 2 to 3: %w", err)
		}
		fallthrough
	case "3":
		if err := s.markAllScopeKeys(ctx); err != nil {
			return fmt.Errorf("migrate schema 3 to 4: %w", err)
		}
		if err := s.setSchema(ctx, "4"); err != nil {
			return fmt.Errorf("migrate schema 3 to 4: %w", err)
		}
		fallthrough
	case "4":
		if err := s.chainActivityLogs(ctx); err != nil {
			return fmt.Errorf("migrate schema 4 to 5: %w", err)
		}
		return s.setSchema(ctx, "5")
	}
	return fmt.Errorf("data directory has schema version %q; this onboard reads version %s", v, schemaVersion)
}

// schema returns the data directory's schema version; found is false for a
// new data directory.
func (s *Store) schema() (version string, found bool, err error) {
	err = s.view(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(keySchema))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		version, found = string(v), true
		return err
	})
	return version, found, err
}

func (s *Store) setSchema(ctx context.Context, version string) error {
	return s.update(ctx, func(txn *badger.Txn) error {
		return txn.Set([]byte(keySchema), []byte(version))
	})
}

// indexPendingDocuments writes the xr/ entry of every application whose
// registry documents are pending (schema 1 → 2): version 1 stored such
// applications without queueing them.
func indexPendingDocuments(txn *badger.Txn) error {
	prefix := []byte(prefixApp)
	var pending [][]byte
	for item := range scanPrefix(txn, prefix, scanOpts{}) {
		var app onboarding.Application
		if err := item.Value(func(b []byte) error { return record.Decode(b, &app) }); err != nil {
			return err
		}
		if app.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending {
			id, err := uuid.FromBytes(item.Key()[len(prefix):])
			if err != nil {
				return err
			}
			pending = append(pending, pendingDocsKey(id))
		}
	}
	for _, k := range pending {
		if err := txn.Set(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// dropRetiredPreAuthIndex deletes every xp/ key (schema 2 → 3), at most
// migrationBatch per transaction so that any number of them fits.
func (s *Store) dropRetiredPreAuthIndex(ctx context.Context) error {
	prefix := []byte(prefixRetiredPreAuthIndex)
	for {
		deleted := 0
		err := s.update(ctx, func(txn *badger.Txn) error {
			var keys [][]byte
			for item := range scanPrefix(txn, prefix, scanOpts{keysOnly: true}) {
				if len(keys) >= migrationBatch {
					break
				}
				keys = append(keys, item.KeyCopy(nil))
			}
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			deleted = len(keys)
			return nil
		})
		if err != nil || deleted == 0 {
			return err
		}
	}
}

// scopesBeforeSchema4 returns the scopes of onboard before schema 4: every
// key stored before then that carries all of them was created without a
// scope list.
func scopesBeforeSchema4() []onboarding.Scope {
	return []onboarding.Scope{
		onboarding.ScopeApplicationsCreate, onboarding.ScopeApplicationsRead,
		onboarding.ScopeApplicationsWrite, onboarding.ScopeRFICreate,
	}
}

// markAllScopeKeys sets AllScopes on every API key that carries all of
// scopesBeforeSchema4() (schema 3 → 4), so that a key created with every
// scope keeps every scope later versions add. It reads at most
// migrationBatch keys per transaction, resuming after the last one read.
func (s *Store) markAllScopeKeys(ctx context.Context) error {
	prefix := []byte(prefixKey)
	old := scopesBeforeSchema4()
	after := []byte(nil)
	for {
		var last []byte
		err := s.update(ctx, func(txn *badger.Txn) error {
			last = nil
			type rec struct {
				key []byte
				k   onboarding.APIKey
			}
			var marked []rec
			read := 0
			for item := range scanPrefix(txn, prefix, scanOpts{after: after}) {
				if read >= migrationBatch {
					break
				}
				key := item.KeyCopy(nil)
				read++
				last = key
				var k onboarding.APIKey
				if err := item.Value(func(b []byte) error { return record.Decode(b, &k) }); err != nil {
					return err
				}
				if !k.AllScopes && hasScopes(&k, old) {
					k.AllScopes = true
					marked = append(marked, rec{key, k})
				}
			}
			for _, m := range marked {
				if err := setRecord(txn, m.key, &m.k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || last == nil {
			return err
		}
		after = last
	}
}

// hasScopes reports whether k lists every one of scopes.
func hasScopes(k *onboarding.APIKey, scopes []onboarding.Scope) bool {
	for _, sc := range scopes {
		if !slices.Contains(k.Scopes, sc) {
			return false
		}
	}
	return true
}
