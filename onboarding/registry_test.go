package onboarding_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// fakeRegistry is a GB registry whose answers each test sets. It verifies
// companies and gives parties and filings, unless listed in without, but
// does not search.
type fakeRegistry struct {
	without []onboarding.Feature
	verify  func(ctx context.Context) (onboarding.Company, error)
	parties func(ctx context.Context) (onboarding.Parties, error)
	filings func(ctx context.Context) ([]onboarding.Filing, error)
	open    func(ctx context.Context, f onboarding.Filing) (io.ReadCloser, error)

	mu      sync.Mutex
	calls   map[string]int
	numbers []string // numbers Filings was asked for
}

func (r *fakeRegistry) count(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[what]++
}

func (r *fakeRegistry) Supports(c string, f onboarding.Feature) bool {
	return c == "GB" && f != onboarding.FeatureSearch && !slices.Contains(r.without, f)
}
func (r *fakeRegistry) VerifyCompany(ctx context.Context, _, _, _ string) (onboarding.Company, error) {
	r.count("verify")
	if r.verify != nil {
		return r.verify(ctx)
	}
	return onboarding.Company{Country: "GB", Number: "10000001", Name: "NORTHWIND TRADING LIMITED", Status: "active", Source: "uk_registry"}, nil
}
func (r *fakeRegistry) NormalizeNumber(_, number string) (string, error) { return number, nil }
func (r *fakeRegistry) SearchCompanies(context.Context, string, string, int) ([]onboarding.CompanyMatch, error) {
	return nil, errors.New("fakeRegistry does not search")
}
func (r *fakeRegistry) Parties(ctx context.Context, _, _ string) (onboarding.Parties, error) {
	r.count("parties")
	if r.parties != nil {
		return r.parties(ctx)
	}
	return onboarding.Parties{}, nil
}
func (r *fakeRegistry) Filings(ctx context.Context, _, number string) ([]onboarding.Filing, error) {
	r.count("filings")
	r.mu.Lock()
	r.numbers = append(r.numbers, number)
	r.mu.Unlock()
	return r.filings(ctx)
}
func (r *fakeRegistry) OpenFiling(ctx context.Context, _ string, f onboarding.Filing) (io.ReadCloser, error) {
	r.count("open " + f.Ref)
	return r.open(ctx, f)
}

var (
	unavailable = onboarding.ErrRegistryUnavailable("UK company registry")
	filingPDF   = "%PDF-1.4 test document"
)

// registryService is a Service over a real store with reg and a blob store,
// an acme key, and a channel that receives a value each time the registry
// documents job has worked through its queue (one unread value is kept).
func registryService(t *testing.T, reg onboarding.Registry, budget time.Duration, now ...func() time.Time) (*onboarding.Service, storetest.Store, *onboarding.APIKey, <-chan struct{}) {
	t.Helper()
	store := storetest.Open(t)
	files, err := blobs.Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	idle := make(chan struct{}, 1)
	var clock func() time.Time
	if len(now) > 0 {
		clock = now[0]
	}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Registry: reg, RegistryBudget: budget, Blobs: files, Now: clock, PageCounter: pdf.PageCount,
		RegistryRetries: []time.Duration{time.Millisecond, time.Millisecond},
		Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: "std", Configs: []*onboarding.Configuration{
			{ID: "std", Form: onboarding.StandardForm(), Countries: []string{"GB"}, RegistryDocuments: true},
		}}},
		RegistryDocumentsIdle: func() {
			select {
			case idle <- struct{}{}:
			default: // the test has not read the last one yet
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := svc.CreateAPIKey(context.Background(), onboarding.KeySpec{OrgID: "acme", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	k, err := svc.Authenticate(context.Background(), full)
	if err != nil {
		t.Fatal(err)
	}
	return svc, store, k, idle
}

// waitIdle waits (at most 10 seconds) until the registry documents job has
// worked through its queue.
func waitIdle(t *testing.T, idle <-chan struct{}) {
	t.Helper()
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the registry documents job did not work through its queue within 10s")
	}
}

func createGB(svc *onboarding.Service, k *onboarding.APIKey) (*onboarding.CreateResult, error) {
	return svc.CreateApplication(context.Background(), k, onboarding.CreateRequest{
		PrimaryContact: &onboarding.ContactInput{Email: "a@example.com"}, Country: "GB",
		CompanyNumber: "10000001", CompanyName: "Northwind Trading Ltd",
	})
}

// TestCreateRegistryBudget checks that create's registry work is bounded as a
// whole: a hanging registry answers 503 in time, and officers that hang
// after a good company check leave a verified application without people.
func TestCreateRegistryBudget(t *testing.T) {
	const budget = 300 * time.Millisecond
	hang := func(ctx context.Context) error { <-ctx.Done(); return unavailable }
	tests := []struct {
		name       string
		reg        *fakeRegistry
		wantErr    *onboarding.Error
		wantPeople int
	}{
		{"profile hangs", &fakeRegistry{verify: func(ctx context.Context) (onboarding.Company, error) {
			return onboarding.Company{}, hang(ctx)
		}}, unavailable, 0},
		{"officers hang", &fakeRegistry{parties: func(ctx context.Context) (onboarding.Parties, error) {
			return onboarding.Parties{}, hang(ctx)
		}}, nil, 0},
		{"officers fail", &fakeRegistry{parties: func(context.Context) (onboarding.Parties, error) {
			return onboarding.Parties{}, onboarding.ErrRegistryFailed
		}}, nil, 0},
		{"officers answer", &fakeRegistry{parties: func(context.Context) (onboarding.Parties, error) {
			return onboarding.Parties{People: []onboarding.RegistryPerson{{Roles: []onboarding.PersonRole{"director"}, FullName: "Jane Smith", FirstName: "Jane", LastName: "Smith"}}}, nil
		}}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, store, k, _ := registryService(t, tt.reg, budget)
			start := time.Now()
			res, err := createGB(svc, k)
			elapsed := time.Since(start)
			if diff := cmp.Diff(tt.wantErr, onboarding.AsError(err)); diff != "" {
				t.Fatalf("create error (-want +got):\n%s", diff)
			}
			if elapsed > budget+time.Second {
				t.Errorf("create took %v with a registry budget of %v", elapsed, budget)
			}
			if err != nil {
				return
			}
			if len(res.Application.Data.People) != tt.wantPeople {
				t.Errorf("people = %+v, want %d", res.Application.Data.People, tt.wantPeople)
			}
			acts, err := storetest.Activity(context.Background(), store, res.Application.ID)
			if err != nil {
				t.Fatal(err)
			}
			noted := false
			for _, a := range acts {
				noted = noted || a.Action == onboarding.ActionRegistryPartiesUnavailable
			}
			if wantNote := strings.HasPrefix(tt.name, "officers h") || strings.HasPrefix(tt.name, "officers f"); noted != wantNote {
				t.Errorf("activity %+v: parties-unavailable entry %v, want %v", acts, noted, wantNote)
			}
		})
	}
}

// TestRegistryDocumentsJob covers the job's outcomes and retries with a fake
// registry.
func TestRegistryDocumentsJob(t *testing.T) {
	three := []onboarding.Filing{{Ref: "a", DocumentType: "annual_accounts"}, {Ref: "b"}, {Ref: "c"}}
	ok := func(context.Context, onboarding.Filing) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(filingPDF)), nil
	}
	flaky := func(failures int, err error) func(context.Context, onboarding.Filing) (io.ReadCloser, error) {
		var mu sync.Mutex
		seen := map[string]int{}
		return func(ctx context.Context, f onboarding.Filing) (io.ReadCloser, error) {
			mu.Lock()
			seen[f.Ref]++
			n := seen[f.Ref]
			mu.Unlock()
			if f.Ref == "b" && n <= failures {
				return nil, err
			}
			return ok(ctx, f)
		}
	}
	tests := []struct {
		name      string
		filings   func(context.Context) ([]onboarding.Filing, error)
		open      func(context.Context, onboarding.Filing) (io.ReadCloser, error)
		status    onboarding.RegistryDocumentsStatus
		docs      int
		callsOf   string
		wantCalls int
		age       time.Duration // how long after create the job runs
	}{
		{"all stored", func(context.Context) ([]onboarding.Filing, error) { return three, nil }, ok, "complete", 3, "open b", 1, 0},
		{"no filings", func(context.Context) ([]onboarding.Filing, error) { return nil, nil }, ok, "complete", 0, "filings", 1, 0},
		{"transient failure retried", func(context.Context) ([]onboarding.Filing, error) { return three, nil },
			flaky(2, unavailable), "complete", 3, "open b", 3, 0},
		// The registry stays down through every retry: a recent application
		// stays pending for a later pass (stopping at the failing filing); a
		// day-old one keeps what it has.
		{"transient failure exhausted", func(context.Context) ([]onboarding.Filing, error) { return three, nil },
			flaky(5, unavailable), "pending", 1, "open b", 3, 0},
		{"transient failure exhausted, a day later", func(context.Context) ([]onboarding.Filing, error) { return three, nil },
			flaky(5, unavailable), "partial", 2, "open b", 3, 25 * time.Hour},
		{"permanent failure not retried", func(context.Context) ([]onboarding.Filing, error) { return three, nil },
			flaky(5, onboarding.ErrRegistryFailed), "partial", 2, "open b", 1, 0},
		{"every document fails", func(context.Context) ([]onboarding.Filing, error) { return three, nil },
			func(context.Context, onboarding.Filing) (io.ReadCloser, error) {
				return nil, onboarding.ErrRegistryFailed
			}, "failed", 0, "open a", 1, 0},
		{"not a PDF stream error", func(context.Context) ([]onboarding.Filing, error) { return three[:1], nil },
			func(context.Context, onboarding.Filing) (io.ReadCloser, error) {
				return io.NopCloser(io.MultiReader(strings.NewReader("%PDF"), errReader{})), nil
			}, "failed", 0, "open a", 1, 0},
		{"filing history down", func(context.Context) ([]onboarding.Filing, error) { return nil, unavailable }, ok, "pending", 0, "filings", 3, 0},
		{"filing history down, a day later", func(context.Context) ([]onboarding.Filing, error) { return nil, unavailable }, ok, "failed", 0, "filings", 3, 25 * time.Hour},
		{"filing history broken", func(context.Context) ([]onboarding.Filing, error) { return nil, onboarding.ErrRegistryFailed }, ok, "failed", 0, "filings", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := &fakeRegistry{filings: tt.filings, open: tt.open}
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			svc, store, k, idle := registryService(t, reg, time.Second, clock)
			res, err := createGB(svc, k)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			now = now.Add(tt.age)
			mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- svc.RunRegistryDocuments(ctx) }()
			calls := func() int { reg.mu.Lock(); defer reg.mu.Unlock(); return reg.calls[tt.callsOf] }
			// The application was queued before the job started, so the
			// job's first pass handles it. The job is stopped after that
			// pass and only then checked: whatever it did is counted.
			waitIdle(t, idle)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("RunRegistryDocuments = %v, want context.Canceled", err)
			}
			app, err := store.Application(context.Background(), res.Application.ID)
			if err != nil {
				t.Fatal(err)
			}
			if app.RegistryDocumentsStatus != tt.status || len(app.RegistryDocuments) != tt.docs {
				t.Errorf("status %q with %d documents, want %q with %d", app.RegistryDocumentsStatus, len(app.RegistryDocuments), tt.status, tt.docs)
			}
			if got := calls(); got != tt.wantCalls {
				t.Errorf("%s called %d times, want %d", tt.callsOf, got, tt.wantCalls)
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestRunRegistryDocumentsNeedsItsParts checks the job refuses to start
// without a filings-capable registry or a blob store.
func TestRunRegistryDocumentsNeedsItsParts(t *testing.T) {
	svc, _ := newService(t, nil)
	if err := svc.RunRegistryDocuments(context.Background()); err == nil {
		t.Error("RunRegistryDocuments without a registry or blob store succeeded")
	}
}

// TestRegistryFeaturesAskedFirst checks that the Service calls an optional
// registry operation only for a country whose registry supports it.
func TestRegistryFeaturesAskedFirst(t *testing.T) {
	reg := &fakeRegistry{without: []onboarding.Feature{onboarding.FeatureParties, onboarding.FeatureFilings}}
	svc, _, k, _ := registryService(t, reg, time.Second)
	res, err := createGB(svc, k)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Application.Data.People); n != 0 {
		t.Errorf("people = %d, want none from a registry without parties", n)
	}
	_, err = svc.SearchCompanies(context.Background(), "GB", "north")
	if diff := cmp.Diff(onboarding.ErrSearchNotAvailable("GB"), onboarding.AsError(err)); diff != "" {
		t.Errorf("SearchCompanies(GB) error (-want +got):\n%s", diff)
	}
	if err := svc.RunRegistryDocuments(context.Background()); err == nil {
		t.Error("RunRegistryDocuments with a registry without filings succeeded")
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if diff := cmp.Diff(map[string]int{"verify": 1}, reg.calls); diff != "" {
		t.Errorf("registry calls (-want +got):\n%s", diff)
	}
}

// TestRegistryDocumentsUseTheVerifiedNumber changes company_number before the
// job runs: the documents still come from the company the registry verified.
func TestRegistryDocumentsUseTheVerifiedNumber(t *testing.T) {
	reg := &fakeRegistry{filings: func(context.Context) ([]onboarding.Filing, error) { return nil, nil }}
	svc, _, k, idle := registryService(t, reg, time.Second)
	res, err := createGB(svc, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.UpdateFields(context.Background(), k, res.Application.ID, []onboarding.FieldUpdate{{ID: "company_number", Value: json.RawMessage(`"99999999"`)}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.RunRegistryDocuments(ctx) }()
	waitIdle(t, idle) // its first pass handled the application, queued before it started
	cancel()
	<-done
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if diff := cmp.Diff([]string{"10000001"}, reg.numbers); diff != "" {
		t.Errorf("filings fetched for (-want +got):\n%s", diff)
	}
}
