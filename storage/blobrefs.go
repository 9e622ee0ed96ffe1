package storage

import (
	"bytes"
	"context"
	"fmt"
	"onboard/storage/record"

	"github.com/dgraph-io/badger/v4"
)

// BlobReferences returns the set of blobs that the application and RFI
// request records refer to, read in one transaction: one consistent
// snapshot of the records.
func (s *Store) BlobReferences(ctx context.Context) (map[string]bool, error) {
	set := map[string]bool{}
	err := s.view(func(txn *badger.Txn) error {
		for _, prefix := range []string{prefixApp, prefixRFI} {
			for item := range scanPrefix(txn, []byte(prefix), scanOpts{prefetch: 64}) {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := item.Value(func(v []byte) error { return noteBlobRefs(set, item.Key(), v) }); err != nil {
					return fmt.Errorf("key %q: %w", item.Key(), err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob references: %w", err)
	}
	return set, nil
}

// noteBlobRefs adds to set the blobs the record at key (with value) refers
// to: an application's or an RFI request's; other records refer to none.
// It decodes only the members that name blobs (appBlobRefs, rfiBlobRefs),
// skipping the rest of the record: a sweep or a backup reads every record,
// so what each read skips adds up.
func noteBlobRefs(set map[string]bool, key, value []byte) error {
	switch {
	case bytes.HasPrefix(key, []byte(prefixApp)):
		var a appBlobRefs
		if err := record.Decode(value, &a); err != nil {
			return err
		}
		a.note(set)
	case bytes.HasPrefix(key, []byte(prefixRFI)):
		var r rfiBlobRefs
		if err := record.Decode(value, &r); err != nil {
			return err
		}
		noteDocumentBlobs(set, r.Documents)
	}
	return nil
}

// appBlobRefs is the part of an onboarding.Application that names blobs,
// with the same member names: what Application.BlobIDs returns.
// TestBlobRefsCoverEveryBlobID fails when a blob id is added to
// Application or RFIRequest elsewhere.
type appBlobRefs struct {
	Data struct {
		Documents map[string]blobRef
		People    []struct{ Documents map[string]blobRef }
		Entities  []struct{ Documents map[string]blobRef }
	}
	RegistryDocuments []blobRef
}

// rfiBlobRefs is the part of an onboarding.RFIRequest that names blobs.
type rfiBlobRefs struct {
	Documents map[string]blobRef
}

// blobRef is the blob id of an onboarding.Document or
// onboarding.RegistryDocument.
type blobRef struct{ BlobID string }

func (a *appBlobRefs) note(set map[string]bool) {
	noteDocumentBlobs(set, a.Data.Documents)
	for _, p := range a.Data.People {
		noteDocumentBlobs(set, p.Documents)
	}
	for _, e := range a.Data.Entities {
		noteDocumentBlobs(set, e.Documents)
	}
	for _, d := range a.RegistryDocuments {
		if d.BlobID != "" {
			set[d.BlobID] = true
		}
	}
}

func noteDocumentBlobs(set map[string]bool, docs map[string]blobRef) {
	for _, d := range docs {
		if d.BlobID != "" {
			set[d.BlobID] = true
		}
	}
}
