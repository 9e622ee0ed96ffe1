package storage

import (
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// BlobReferences returns the set of blobs that the application and RFI
// request records refer to, read in one transaction: one consistent
// snapshot of the records.
func (s *Store) BlobReferences(ctx context.Context) (map[string]bool, error) {
	set := map[string]bool{}
	err := s.db.View(func(txn *badger.Txn) error {
		for _, prefix := range []string{prefixApp, prefixRFI} {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix), PrefetchValues: true, PrefetchSize: 64})
			for it.Rewind(); it.Valid(); it.Next() {
				if err := ctx.Err(); err != nil {
					it.Close()
					return err
				}
				item := it.Item()
				if err := item.Value(func(v []byte) error { return noteBlobRefs(set, item.Key(), v) }); err != nil {
					it.Close()
					return fmt.Errorf("key %q: %w", item.Key(), err)
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob references: %w", err)
	}
	return set, nil
}
