package onboarding

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// registryDocumentsBatchAge bounds how long a stored filing waits for the
// commit that records it: a pass that is still fetching by then records
// what it has (one more commit) and goes on. The orphan blob sweep removes
// unreferenced blobs older than an hour (orphanGrace in blobsweep.go), so
// a blob must be recorded well within that; a pass of many filings behind
// a slow registry can take longer.
const registryDocumentsBatchAge = 10 * time.Minute

// fetchedDocuments are filings of one application stored as blobs of one
// batch and not yet recorded.
type fetchedDocuments struct {
	blobs BlobBatch
	docs  []RegistryDocument
	since time.Time // when the first of docs was stored
}

// newFetched starts an empty set of fetched documents, with a new batch of
// blobs.
func (s *Service) newFetched() *fetchedDocuments {
	return &fetchedDocuments{blobs: s.blobBatch()}
}

// add notes d, whose blob was stored at now.
func (f *fetchedDocuments) add(d RegistryDocument, now time.Time) {
	if len(f.docs) == 0 {
		f.since = now
	}
	f.docs = append(f.docs, d)
}

// older reports whether the first of the documents was stored age or
// longer before now.
func (f *fetchedDocuments) older(now time.Time, age time.Duration) bool {
	return len(f.docs) > 0 && now.Sub(f.since) >= age
}

// registryOutcome is what fetching an application's registry documents
// came to: its status, and the detail of its activity entry.
type registryOutcome struct {
	status RegistryDocumentsStatus
	detail string
}

// errNotFetching aborts the commit of registry documents for an application
// that no longer waits for them.
var errNotFetching = errors.New("registry documents: the application no longer waits for these")

// recordRegistryDocuments records the fetched documents of the company with
// number on application id and, unless outcome is nil, the outcome (the
// status, its activity entry, and the application.registry_documents_updated
// event that the status change emits), all in one commit. Nothing is
// recorded when the application no longer waits for that company's
// documents (fetchingFor): the applicant changed the company while they
// were fetched. The store drops an application with an outcome from the
// queue in the same commit.
//
// The fetched blobs are made durable (the batch's Sync) before the commit,
// so that no record ever refers to a blob a crash could lose; the blobs the
// commit does not refer to (a stale application, a filing recorded
// meanwhile, a failed commit) are removed after it. It reports whether
// everything was recorded; failures are logged, and leave the application
// pending for a later pass.
func (s *Service) recordRegistryDocuments(ctx context.Context, log *slog.Logger, id, number string, fetched *fetchedDocuments, outcome *registryOutcome) bool {
	docs := fetched.docs
	if len(docs) == 0 && outcome == nil {
		return true
	}
	var recorded map[string]bool // blob ids of the documents added
	err := fetched.blobs.Sync()
	if err == nil {
		now := s.now().UTC()
		_, err = s.updateApplication(context.WithoutCancel(ctx), id, func(a *Application) ([]Activity, error) {
			recorded = map[string]bool{} // change may run more than once
			if !fetchingFor(a, number) {
				return nil, errNotFetching
			}
			have := make(map[string]bool, len(a.RegistryDocuments))
			for _, d := range a.RegistryDocuments {
				have[d.Ref] = true
			}
			for _, d := range docs {
				if !have[d.Ref] {
					a.RegistryDocuments = append(a.RegistryDocuments, d)
					have[d.Ref], recorded[d.BlobID] = true, true
				}
			}
			if len(recorded) > 0 || outcome != nil {
				a.UpdatedAt = now // a partner syncing on updated_at sees them
			}
			if outcome == nil {
				return nil, nil
			}
			a.RegistryDocumentsStatus = outcome.status
			return []Activity{{At: now, Action: ActionRegistryDocuments, Actor: Actor{Type: ActorSystem}, Detail: string(outcome.status) + ": " + outcome.detail}}, nil
		})
	}
	if err != nil {
		recorded = nil
	}
	for _, d := range docs {
		if !recorded[d.BlobID] {
			s.removeUnusedBlob(d.BlobID)
		}
	}
	fetched.docs = nil
	switch {
	case errors.Is(err, errNotFetching):
		log.Info("registry documents: the application no longer waits for this company's documents")
		return false
	case err != nil:
		log.Error("registry documents: record", "documents", len(docs), "err", err)
		return false
	case outcome != nil:
		log.Info("registry documents fetched", "status", outcome.status, "detail", outcome.detail)
	}
	return true
}

// fetchFiling fetches one filing of a company of country into a blob of
// batch and returns its registry document, not yet recorded.
func (s *Service) fetchFiling(ctx context.Context, batch BlobBatch, country string, f Filing) (RegistryDocument, error) {
	rc, err := s.registry.OpenFiling(ctx, country, f)
	if err != nil {
		return RegistryDocument{}, err
	}
	blobID, _, err := batch.Put(ctx, rc, maxRegistryDocument)
	rc.Close()
	if err != nil {
		return RegistryDocument{}, err
	}
	docID, err := newUUID(s.random)
	if err != nil {
		s.removeUnusedBlob(blobID)
		return RegistryDocument{}, err
	}
	now := s.now().UTC()
	return RegistryDocument{
		ID: docID, Ref: f.Ref, Source: SourceUKRegistry, DocumentType: f.DocumentType,
		FilingDate: f.FilingDate, FetchedAt: &now, BlobID: blobID, FileName: f.FileName,
	}, nil
}

// removeUnusedBlob removes a blob the job stored but no record refers to;
// one left behind is the orphan blob sweep's.
func (s *Service) removeUnusedBlob(id string) {
	if err := s.blobs.Delete(id); err != nil {
		s.log.Warn("registry documents: remove unused blob", "blob_id", id, "err", err)
	}
}
