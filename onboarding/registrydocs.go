package onboarding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Registry document fetching: after create, a background job
// fetches the filing history of every registry-eligible application and
// stores each filing's PDF as a blob. The queue is the store's index of
// applications whose registry_documents_status is `pending`, written in the
// same transaction as the application, so the job survives a restart: on
// start it resumes every pending application, skipping the filings already
// stored. An application's filings are stored as blobs first and recorded
// with the outcome in one commit (see fetchRegistryDocuments).

// DefaultRegistryRetries are the pauses between attempts of one registry
// call in the background when the registry is down, throttling or timing
// out: four attempts in all, over about a minute.
var defaultRegistryRetries = []time.Duration{2 * time.Second, 10 * time.Second, 45 * time.Second}

// maxRegistryDocument caps one stored filing.
const maxRegistryDocument = 50 << 20

// Pacing of the job. It looks at the queue every registryDocumentsRescan
// without being woken (catching dropped wake-ups). When the registry stays
// unavailable through every retry, the application stays pending and is
// tried again after registryDocumentsRetryLater, until it is
// registryDocumentsMaxAge old: then what was stored is final.
const (
	registryDocumentsRescan     = time.Minute
	registryDocumentsRetryLater = 10 * time.Minute
	registryDocumentsMaxAge     = 24 * time.Hour
)

// Activity actions of the registry documents job.
const (
	ActionRegistryDocuments = "registry_documents.finished"
)

// RegistryDocumentLinkTTL is how long a registry document's download_url
// works.
const RegistryDocumentLinkTTL = 60 * time.Second

// RunRegistryDocuments fetches the registry documents of pending
// applications until ctx ends: first every application left pending by an
// earlier run, then each new one as create queues it. Applications are
// fetched one at a time, which keeps within the registry's etiquette, and
// each only once no request is being served or the job's yield has passed
// (foreground.go). An
// application interrupted by ctx stays pending and is resumed by the next
// run. It returns ctx's error, or an error at once when the Service has no
// blob store or its registry cannot fetch the filings of UK companies.
func (s *Service) RunRegistryDocuments(ctx context.Context) error {
	// Only UK companies get registry documents (RegistryEligible).
	if !s.registry.Supports(registryDocumentsCountry, FeatureFilings) {
		return errors.New("registry documents: the registry cannot fetch filings")
	}
	if s.blobs == nil {
		return errors.New("registry documents: no blob store")
	}
	ctx = Background(ctx)
	tick := time.NewTicker(registryDocumentsRescan)
	defer tick.Stop()
	later := make(map[string]time.Time) // application id → not before
	for {
		ids, err := s.store.PendingRegistryDocuments(ctx)
		if err != nil {
			s.log.Error("registry documents: list pending", "err", err)
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.now().Before(later[id]) {
				continue
			}
			delete(later, id)
			s.giveWay(ctx, s.docsYield)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.fetchRegistryDocuments(ctx, id) {
				later[id] = s.now().Add(registryDocumentsRetryLater)
			}
		}
		if s.docsIdle != nil {
			s.docsIdle()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.docsWake:
		case <-tick.C:
		}
	}
}

// wakeRegistryDocuments tells a running job that an application was queued.
func (s *Service) wakeRegistryDocuments() {
	select {
	case s.docsWake <- struct{}{}:
	default: // a wake-up is already waiting
	}
}

// fetchRegistryDocuments runs the job for one application: list its
// filings, store each PDF not yet stored, and record the outcome:
// `complete` when every filing with a document was stored (or there were
// none), `partial` when some could not be, `failed` when the filing history
// could not be read or no document could be stored. When the registry was
// unavailable through every retry and the application is younger than
// registryDocumentsMaxAge, it records no outcome and reports that the
// application should be tried again later (what was stored is kept).
//
// The filings are stored as blobs first and recorded afterwards, all with
// the outcome in one commit (recordRegistryDocuments): the job shares
// Badger's commits with create, and one commit per application rather than
// one per filing keeps its share small. A pass that stops early
// (ctx ends, or the registry is down) records what it stored so far,
// without an outcome, in one commit too. A crash before the commit loses
// nothing that was recorded: the application is still pending, so the next
// run fetches its filings again (RunRegistryDocuments starts with every
// pending application), and the blobs the lost pass stored are named by no
// record, so the orphan blob sweep (blobsweep.go, which keeps only the
// blobs storage.Store.BlobReferences finds in a record) removes them once
// they are older than its grace period.
func (s *Service) fetchRegistryDocuments(ctx context.Context, id string) (retryLater bool) {
	app, err := s.store.Application(ctx, id)
	if err != nil {
		s.log.Error("registry documents: load application", "application_id", id, "err", err)
		return true
	}
	if app.RegistryDocumentsStatus != RegistryDocumentsPending {
		return false
	}
	patient := s.now().Sub(app.CreatedAt) < registryDocumentsMaxAge
	number := registryDocumentsNumber(app)
	log := s.log.With("application_id", id, "country", app.Country, "company_number", number)

	var list []Filing
	err = s.retryRegistry(ctx, func() (err error) {
		list, err = s.registry.Filings(ctx, app.Country, number)
		return err
	})
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		if patient && transient(err) {
			log.Warn("registry documents: registry unavailable; trying again later", "err", err)
			return true
		}
		log.Warn("registry documents: filing history unavailable", "err", err)
		s.recordRegistryDocuments(ctx, log, id, number, s.newFetched(), &registryOutcome{RegistryDocumentsFailed, "the filing history could not be read"})
		return false
	}
	stored := make(map[string]bool, len(app.RegistryDocuments))
	for _, d := range app.RegistryDocuments {
		stored[d.Ref] = true
	}
	fetched := s.newFetched()
	failed := 0
	for _, f := range list {
		if stored[f.Ref] {
			continue
		}
		var doc RegistryDocument
		err := s.retryRegistry(ctx, func() (err error) {
			doc, err = s.fetchFiling(ctx, fetched.blobs, app.Country, f)
			return err
		})
		if ctx.Err() != nil {
			s.recordRegistryDocuments(ctx, log, id, number, fetched, nil)
			return false
		}
		if err != nil && patient && transient(err) {
			// The registry is down: stop this pass rather than wait out
			// every remaining filing; the next pass resumes here.
			log.Warn("registry documents: registry unavailable; trying again later", "filing", f.Ref, "err", err)
			s.recordRegistryDocuments(ctx, log, id, number, fetched, nil)
			return true
		}
		if err != nil {
			failed++
			log.Warn("registry documents: filing not stored", "filing", f.Ref, "document_type", f.DocumentType, "err", err)
			continue
		}
		fetched.add(doc, s.now())
		if fetched.older(s.now(), registryDocumentsBatchAge) {
			// Record what has waited long enough, before the orphan blob
			// sweep could take its blobs for leftovers.
			if !s.recordRegistryDocuments(ctx, log, id, number, fetched, nil) {
				return false
			}
			fetched = s.newFetched()
		}
	}
	status, detail := RegistryDocumentsComplete, fmt.Sprintf("%d documents", len(list))
	switch {
	case failed > 0 && failed == len(list):
		status, detail = RegistryDocumentsFailed, fmt.Sprintf("none of %d documents could be fetched", len(list))
	case failed > 0:
		status, detail = RegistryDocumentsPartial, fmt.Sprintf("%d of %d documents fetched", len(list)-failed, len(list))
	}
	s.recordRegistryDocuments(ctx, log, id, number, fetched, &registryOutcome{status, detail})
	return false
}

// registryDocumentsNumber is the company number whose filings application
// a gets: the one the registry verified or, for an application stored
// before RegistryNumber existed, its company_number.
func registryDocumentsNumber(a *Application) string {
	number := a.RegistryNumber
	if number == "" {
		_ = json.Unmarshal(a.Data.Fields["company_number"], &number)
	}
	return number
}

// fetchingFor reports whether application a still waits for the registry
// documents of the company with number: the applicant may have changed
// the company (ChangeCompany) while they were fetched, and the old
// company's filings must not land on it.
func fetchingFor(a *Application, number string) bool {
	return a.RegistryDocumentsStatus == RegistryDocumentsPending && registryDocumentsNumber(a) == number
}

// transient reports whether err says the registry is down, throttling or
// timing out: worth another try later.
func transient(err error) bool {
	e := AsError(err)
	return e != nil && e.Kind == KindUnavailable
}

// retryRegistry runs call until it succeeds, fails for a reason a retry
// cannot fix, or has been tried once more than there are pauses. Only a
// registry that is down, throttling or timing out (KindUnavailable) is
// retried.
func (s *Service) retryRegistry(ctx context.Context, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil || attempt >= len(s.registryRetries) || ctx.Err() != nil {
			return err
		}
		if !transient(err) {
			return err
		}
		t := time.NewTimer(s.registryRetries[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// RegistryDocumentURL is a fresh signed download link for a registry
// document, or "" when the Service signs no links or the document has no
// file.
func (s *Service) RegistryDocumentURL(d RegistryDocument) string {
	l, ok := s.registryDocumentLink(&d)
	if !ok {
		return ""
	}
	return s.SignLink(l)
}

// registryDocumentLink is what RegistryDocumentURL signs, and false when it
// answers "".
func (s *Service) registryDocumentLink(d *RegistryDocument) (UnsignedLink, bool) {
	if s.links == nil || d.BlobID == "" {
		return UnsignedLink{}, false
	}
	name := d.FileName
	if name == "" {
		name = d.DocumentType + ".pdf"
	}
	return UnsignedLink{blobID: d.BlobID, download: Download{FileName: name, ContentType: "application/pdf"}, ttl: RegistryDocumentLinkTTL}, true
}
