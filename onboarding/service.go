package onboarding

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Organization is a partner organization declared in the configuration file.
type Organization struct {
	ID                 string
	Name               string
	DefaultConfig      string // id of the configuration used when create names none; may be empty
	CustomDomain       string // host name of the organization's own link domain; may be empty
	CustomDomainActive bool
	// TermsURL is the address of the organization's terms and conditions;
	// declarations marked Terms are asked only when it is set.
	TermsURL string
	Configs  []*Configuration
	// RFIAgents are the organization's document-collection agents
	// (docs/api.md), ids in canonical UUID form.
	RFIAgents []*RFIAgent
}

// DisplayName is the organization's name as applicants read it: its name,
// or its id without one.
func (o *Organization) DisplayName() string {
	if o.Name != "" {
		return o.Name
	}
	return o.ID
}

// Configuration decides what an application collects and how it is checked.
type Configuration struct {
	ID                string
	OrgID             string
	Form              *Form
	Countries         []string // ISO 3166-1 alpha-2, upper case
	CompanySelection  bool     // the applicant picks the company from a registry search
	RegistryDocuments bool     // filings are fetched from the registry for eligible applications
}

// AllowsCountry reports whether applications on c may be for country.
func (c *Configuration) AllowsCountry(country string) bool {
	for _, k := range c.Countries {
		if k == country {
			return true
		}
	}
	return false
}

// Store keeps applications, API keys and activity durably. The storage
// package implements it over Badger. Methods return ErrNotFound for missing
// records, and an error matching ErrWriteConflict when a transaction lost a
// race with a concurrent one after the Store's own retries (the caller may
// retry); every other error is unexpected.
type Store interface {
	// CreateApplication stores a new application, its first activity
	// entries and its first events, in one transaction.
	CreateApplication(ctx context.Context, app *Application, ch Changes) error
	// Application returns the application with id.
	Application(ctx context.Context, id string) (*Application, error)
	// ReadApplication calls read with the application with id without
	// copying it: read must not change it or keep any part of it once it
	// returns, since other readers may share it. It answers read's error.
	// Nothing changes an application once read has it (a new version is
	// a new application), so a reader may keep what it derives from one
	// by its address, as get-application's rendered answers are kept.
	ReadApplication(ctx context.Context, id string, read func(*Application) error) error
	// ApplicationBySlug returns the application one of whose participants
	// has the link slug.
	ApplicationBySlug(ctx context.Context, slug string) (*Application, error)
	// UpdateApplication applies change to the stored application atomically
	// and writes the activity entries and events it returns in the same
	// transaction. change may run more than once (on a write conflict) and
	// must depend only on its argument. An error from change aborts the
	// update and is returned unchanged.
	UpdateApplication(ctx context.Context, id string, change func(*Application) (Changes, error)) (*Application, error)
	// ListApplications returns up to q.Limit applications newest first, and
	// whether more follow.
	ListApplications(ctx context.Context, q ListQuery) ([]*Application, bool, error)
	// PendingRegistryDocuments returns the ids of the applications whose
	// registry documents are pending: the queue of RunRegistryDocuments.
	PendingRegistryDocuments(ctx context.Context) ([]string, error)

	// CreateAPIKey stores a new API key.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// APIKey returns the key with clientID.
	APIKey(ctx context.Context, clientID string) (*APIKey, error)
	// APIKeys returns the keys of orgID, or of every organization when orgID is empty.
	APIKeys(ctx context.Context, orgID string) ([]*APIKey, error)
	// UpdateAPIKey applies change to the stored key atomically.
	UpdateAPIKey(ctx context.Context, clientID string, change func(*APIKey) error) (*APIKey, error)

	WebhookStore
	RFIStore
	ActivityStore
}

// ListQuery selects a page of an organization's applications.
type ListQuery struct {
	OrgID  string
	Status Status    // empty: every status
	Before ulid.ULID // return only applications created before this Seq; zero: from the newest
	Limit  int
}

// Options configures a Service.
type Options struct {
	Store         Store
	Registry      Registry
	Mailer        Mailer // nil: invites are not sent and create returns a warning
	Organizations []*Organization
	// PublicURL is the base of applicant links, without a trailing slash.
	PublicURL string
	// Environment is the server's, "sandbox" or "production": API keys
	// are created for it and work only in it, so sandbox and
	// production use separate keys. Empty in tests that do not care.
	Environment string
	Now         func() time.Time // default time.Now
	Logger      *slog.Logger     // default: discard
	Random      io.Reader        // source of secrets and ids; default crypto/rand
	// RegistryBudget bounds the registry work of one request;
	// DefaultRegistryBudget when zero.
	RegistryBudget time.Duration
	// RegistryRetries are the pauses between attempts of a background
	// registry call that found the registry unavailable; nil means the
	// defaults (2 s, 10 s, 45 s), an empty non-nil slice no retries.
	RegistryRetries []time.Duration
	// RegistryDocumentsIdle, when set, is called by RunRegistryDocuments
	// each time it has worked through its queue and is about to wait for
	// more work. It is a seam for tests, which synchronise on the job with
	// it; it must return promptly.
	RegistryDocumentsIdle func()
	// RegistryDocumentsYield is how long, at most, the registry documents
	// job waits before each application while requests are being served
	// (foreground.go); DefaultRegistryDocumentsYield when zero, never when
	// negative.
	RegistryDocumentsYield time.Duration
	// Blobs stores registry documents and uploads; Links signs their
	// download URLs.
	Blobs Blobs
	Links LinkSigner
	// SessionKey is the secret of applicant access, at least 32 random
	// bytes: it keys the hashes of email verification codes (the server
	// signs form sessions with the same secret). Without one the form
	// cannot be opened.
	SessionKey []byte
	// MaxUploadBytes bounds one uploaded document; DefaultMaxUploadBytes
	// when zero.
	MaxUploadBytes int64
	// PageCounter counts the pages of uploaded PDFs for the max_pages rule
	// of strict document fields; required, so that no Service skips it.
	PageCounter PageCounter
	// Webhooks sends webhook deliveries and checks endpoint URLs; without
	// one, endpoints cannot be added and the delivery pool does not run.
	Webhooks WebhookTransport
	// RetrySchedule is the pause before each delivery attempt, the first
	// usually zero; DefaultRetrySchedule when empty.
	RetrySchedule []time.Duration
	// WebhookTimeout bounds one attempt (the transport enforces it; the
	// Service sizes its leases by it); DefaultWebhookTimeout when zero.
	WebhookTimeout time.Duration
	// WebhookWorkers bounds the attempts in flight; DefaultWebhookWorkers
	// when zero.
	WebhookWorkers int
	// WebhooksYield is how long, at most, the webhook deliverer waits
	// before each claim of deliveries while requests are being served
	// (foreground.go); DefaultWebhooksYield when zero, never when negative.
	WebhooksYield time.Duration
	// RFIExpiryIdle, when set, is called by RunRFIExpiry each time it has
	// expired every request due and is about to wait: a seam for tests,
	// which synchronise on the sweep with it; it must return promptly.
	RFIExpiryIdle func()
	// AppendView encodes an application view as the API's JSON: the data
	// of application events and the lines of NDJSON exports. nil means
	// the reflecting encoder (AppendViewByReflection); a server wires the
	// HTTP layer's hand-written one, which is faster, to the same bytes.
	AppendView AppendViewFunc
}

// AppendViewFunc appends v's encoding as the API's JSON to dst and returns
// the extended slice. It must write exactly the bytes of
// AppendViewByReflection and fail where that fails (a number JSON cannot
// hold, a raw value that is not valid JSON).
type AppendViewFunc func(dst []byte, v *ApplicationView) ([]byte, error)

// DefaultMaxUploadBytes is the upload limit when none is configured.
const DefaultMaxUploadBytes = 25 << 20

// Service is onboard's use-cases: everything the API, the CLI and the
// applicant's form do goes through it.
type Service struct {
	store     Store
	registry  Registry
	mailer    Mailer
	orgs      map[string]*Organization
	configs   map[string]*Configuration
	publicURL string
	// environment is Options.Environment.
	environment string
	now         func() time.Time
	log         *slog.Logger
	random      io.Reader

	registryBudget  time.Duration
	registryRetries []time.Duration
	docsIdle        func() // see Options.RegistryDocumentsIdle; may be nil
	docsYield       time.Duration
	fg              foreground
	blobs           Blobs
	links           LinkSigner
	docsWake        chan struct{}
	webhooksWake    chan struct{}
	webhooks        WebhookTransport
	retrySchedule   []time.Duration
	webhookTimeout  time.Duration
	webhookWorkers  int
	hooksYield      time.Duration
	sessionKey      []byte
	maxUpload       int64
	pageCounter     PageCounter
	rfiForm         *Form // the standard form, whose document fields RFI agents ask for
	rfiExpiryWake   chan time.Time
	rfiExpiryIdle   func()
	// appendView is Options.AppendView, AppendViewByReflection when unset.
	appendView AppendViewFunc
	// viewScratch holds *[]byte buffers that applicationEvents encodes
	// event data into.
	viewScratch sync.Pool

	seqMu   sync.Mutex
	seq     *ulid.MonotonicEntropy
	seqLast ulid.ULID // the last ULID nextSeq issued

	usedMu sync.Mutex
	used   map[string]time.Time // client id → last time LastUsedAt was written

	// keys caches API keys by client id. Every change to a key goes through
	// this Service (the admin socket runs in the serving process), which
	// refreshes the entry, so the cache is never stale for authentication.
	keys sync.Map
}

// New returns a Service. It fails when the organizations are inconsistent.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("onboarding: a Store is required")
	}
	if opts.PageCounter == nil {
		return nil, errors.New("onboarding: a PageCounter is required")
	}
	s := &Service{
		store:       opts.Store,
		registry:    opts.Registry,
		mailer:      opts.Mailer,
		orgs:        make(map[string]*Organization),
		configs:     make(map[string]*Configuration),
		publicURL:   strings.TrimRight(opts.PublicURL, "/"),
		environment: opts.Environment,
		now:         opts.Now,
		log:         opts.Logger,
		random:      opts.Random,
		used:        make(map[string]time.Time),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.random == nil {
		s.random = rand.Reader
	}
	if s.registry == nil {
		s.registry = noRegistry{}
	}
	s.blobs, s.links = opts.Blobs, opts.Links
	s.sessionKey = opts.SessionKey
	s.pageCounter = opts.PageCounter
	s.maxUpload = opts.MaxUploadBytes
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	s.docsWake = make(chan struct{}, 1)
	s.rfiForm = StandardForm()
	s.rfiExpiryWake = make(chan time.Time, 1)
	s.rfiExpiryIdle = opts.RFIExpiryIdle
	s.appendView = opts.AppendView
	if s.appendView == nil {
		s.appendView = AppendViewByReflection
	}
	s.webhooksWake = make(chan struct{}, 1)
	s.webhooks = opts.Webhooks
	s.retrySchedule = opts.RetrySchedule
	if len(s.retrySchedule) == 0 {
		s.retrySchedule = DefaultRetrySchedule()
	}
	s.webhookTimeout = cmp.Or(opts.WebhookTimeout, DefaultWebhookTimeout)
	s.webhookWorkers = cmp.Or(opts.WebhookWorkers, DefaultWebhookWorkers)
	s.hooksYield = cmp.Or(opts.WebhooksYield, DefaultWebhooksYield)
	s.registryRetries = opts.RegistryRetries
	s.docsIdle = opts.RegistryDocumentsIdle
	s.docsYield = cmp.Or(opts.RegistryDocumentsYield, DefaultRegistryDocumentsYield)
	if s.registryRetries == nil {
		s.registryRetries = defaultRegistryRetries
	}
	s.registryBudget = opts.RegistryBudget
	if s.registryBudget <= 0 {
		s.registryBudget = DefaultRegistryBudget
	}
	s.seq = ulid.Monotonic(s.random, 0)
	for _, o := range opts.Organizations {
		if _, dup := s.orgs[o.ID]; dup {
			return nil, fmt.Errorf("onboarding: duplicate organization %q", o.ID)
		}
		s.orgs[o.ID] = o
		for _, c := range o.Configs {
			if _, dup := s.configs[c.ID]; dup {
				return nil, fmt.Errorf("onboarding: duplicate configuration %q", c.ID)
			}
			if c.Form == nil {
				return nil, fmt.Errorf("onboarding: configuration %q has no form", c.ID)
			}
			c.OrgID = o.ID
			s.configs[c.ID] = c
		}
	}
	return s, nil
}

// nextSeq returns a ULID strictly greater than every one issued before by
// this Service: the creation order of applications and of events. When the
// wall clock has not moved past the last ULID's millisecond (or stepped
// back), the new one keeps that millisecond and the monotonic entropy
// increments, so ids never go backwards.
func (s *Service) nextSeq(now time.Time) (ulid.ULID, error) {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	ms := max(ulid.Timestamp(now), s.seqLast.Time())
	id, err := ulid.New(ms, s.seq)
	if err != nil {
		return ulid.ULID{}, fmt.Errorf("new ulid: %w", err)
	}
	s.seqLast = id
	return id, nil
}

// noRegistry is the Registry of a Service built without one: it supports
// nothing for any country, and any operation fails.
type noRegistry struct{}

func (noRegistry) Supports(string, Feature) bool { return false }
func (noRegistry) VerifyCompany(context.Context, string, string, string) (Company, error) {
	return Company{}, ErrRegistryFailed
}
func (noRegistry) NormalizeNumber(string, string) (string, error) {
	return "", ErrRegistryFailed
}
func (noRegistry) SearchCompanies(context.Context, string, string, int) ([]CompanyMatch, error) {
	return nil, ErrRegistryFailed
}
func (noRegistry) Parties(context.Context, string, string) (Parties, error) {
	return Parties{}, ErrRegistryFailed
}
func (noRegistry) Filings(context.Context, string, string) ([]Filing, error) {
	return nil, ErrRegistryFailed
}
func (noRegistry) OpenFiling(context.Context, string, Filing) (io.ReadCloser, error) {
	return nil, ErrRegistryFailed
}
