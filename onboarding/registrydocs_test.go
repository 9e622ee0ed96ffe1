package onboarding_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// countingStore is the real store counting the UpdateApplication calls
// (each one Badger commit) per application.
type countingStore struct {
	storetest.Store
	mu      sync.Mutex
	updates map[string]int
}

func (s *countingStore) UpdateApplication(ctx context.Context, id string, change func(*onboarding.Application) (onboarding.Changes, error)) (*onboarding.Application, error) {
	s.mu.Lock()
	if s.updates == nil {
		s.updates = map[string]int{}
	}
	s.updates[id]++
	s.mu.Unlock()
	return s.Store.UpdateApplication(ctx, id, change)
}

func (s *countingStore) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates[id]
}

// docsEnv is a Service over a counting real store and a real blob store
// with reg, its acme key, and a channel that receives a value each time the
// registry documents job has worked through its queue.
type docsEnv struct {
	svc   *onboarding.Service
	store *countingStore
	blobs string // the blob store's directory
	key   *onboarding.APIKey
	idle  chan struct{}
}

// now is the Service's clock; nil means time.Now. options, when given,
// change the Service's options last.
func newDocsEnv(tb testing.TB, reg onboarding.Registry, now func() time.Time, options ...func(*onboarding.Options)) *docsEnv {
	tb.Helper()
	dir := tb.TempDir()
	inner := storetest.Open(tb)
	e := &docsEnv{store: &countingStore{Store: inner}, blobs: filepath.Join(dir, "blobs"), idle: make(chan struct{}, 1)}
	files, err := blobs.Open(e.blobs)
	if err != nil {
		tb.Fatal(err)
	}
	opts := onboarding.Options{
		Store: e.store, Registry: reg, Blobs: blobs.NewGuard(files), PageCounter: pdf.PageCount, Now: now,
		RegistryRetries: []time.Duration{time.Millisecond, time.Millisecond},
		Organizations: []*onboarding.Organization{{ID: "acme", DefaultConfig: "std", Configs: []*onboarding.Configuration{
			{ID: "std", Form: onboarding.StandardForm(), Countries: []string{"GB"}, RegistryDocuments: true},
		}}},
		RegistryDocumentsIdle: func() {
			select {
			case e.idle <- struct{}{}:
			default: // the last one has not been read yet
			}
		},
	}
	for _, o := range options {
		o(&opts)
	}
	e.svc, err = onboarding.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	full, _, err := e.svc.CreateAPIKey(context.Background(), onboarding.KeySpec{OrgID: "acme", Name: "t"})
	if err != nil {
		tb.Fatal(err)
	}
	if e.key, err = e.svc.Authenticate(context.Background(), full); err != nil {
		tb.Fatal(err)
	}
	return e
}

// runOnce runs the registry documents job through one pass over the
// applications queued before it started, and stops it.
func (e *docsEnv) runOnce(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.svc.RunRegistryDocuments(ctx) }()
	select {
	case <-e.idle:
	case <-time.After(time.Minute):
		tb.Fatal("the registry documents job did not work through its queue within a minute")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		tb.Errorf("RunRegistryDocuments = %v, want context.Canceled", err)
	}
}

// pdfOf is a filing's content: size bytes starting like a PDF.
func pdfOf(size int) []byte {
	b := bytes.Repeat([]byte{'x'}, size)
	copy(b, "%PDF-1.4\n")
	return b
}

// threeFilings is a registry whose companies have three filings of size
// bytes each.
func threeFilings(size int) *fakeRegistry {
	content := pdfOf(size)
	return &fakeRegistry{
		filings: func(context.Context) ([]onboarding.Filing, error) {
			return []onboarding.Filing{{Ref: "a", DocumentType: "annual_accounts"}, {Ref: "b"}, {Ref: "c"}}, nil
		},
		open: func(context.Context, onboarding.Filing) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(content)), nil
		},
	}
}

// BenchmarkRegistryDocuments times the registry documents job per
// application of three 64 KiB filings, over a real store and blob store
// (the applications are created, untimed, before the job starts).
func BenchmarkRegistryDocuments(b *testing.B) {
	e := newDocsEnv(b, threeFilings(64<<10), nil)
	ids := make([]string, b.N)
	for i := range ids {
		res, err := createGB(e.svc, e.key)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = res.Application.ID
	}
	b.ResetTimer()
	e.runOnce(b)
	b.StopTimer()
	for _, id := range ids[:min(len(ids), 3)] {
		app, err := e.store.Application(context.Background(), id)
		if err != nil {
			b.Fatal(err)
		}
		if app.RegistryDocumentsStatus != onboarding.RegistryDocumentsComplete || len(app.RegistryDocuments) != 3 {
			b.Fatalf("application %s: registry documents %s, %d of them; want complete, 3", id, app.RegistryDocumentsStatus, len(app.RegistryDocuments))
		}
	}
}

// TestRegistryDocumentsOneCommit checks that the job records an
// application's registry documents and their outcome in one commit: the
// documents, the status, the activity entry and the
// application.registry_documents_updated event (whose data lists the
// documents) land together, every document's file on disk. An application
// whose registry goes down midway keeps what was fetched, recorded in one
// commit too; one whose filings take long has them recorded before the
// orphan blob sweep could take them.
func TestRegistryDocumentsOneCommit(t *testing.T) {
	flaky := threeFilings(1 << 10)
	ok := flaky.open
	flaky.open = func(ctx context.Context, f onboarding.Filing) (io.ReadCloser, error) {
		if f.Ref == "b" {
			return nil, unavailable
		}
		return ok(ctx, f)
	}
	// slow is a registry whose every filing takes six minutes to fetch.
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	slow := threeFilings(1 << 10)
	slow.open = func(ctx context.Context, f onboarding.Filing) (io.ReadCloser, error) {
		mu.Lock()
		now = now.Add(6 * time.Minute)
		mu.Unlock()
		return ok(ctx, f)
	}
	tests := []struct {
		name     string
		reg      *fakeRegistry
		clock    func() time.Time
		commits  int
		status   onboarding.RegistryDocumentsStatus
		refs     []string
		finished int // activity entries and events of the outcome
	}{
		{"all stored", threeFilings(1 << 10), nil, 1, onboarding.RegistryDocumentsComplete, []string{"a", "b", "c"}, 1},
		{"registry down at the second", flaky, nil, 1, onboarding.RegistryDocumentsPending, []string{"a"}, 0},
		// The first filing has waited ten minutes after the third: the three
		// are recorded then, lest the orphan blob sweep take them, and the
		// outcome after.
		{"slow registry", slow, clock, 2, onboarding.RegistryDocumentsComplete, []string{"a", "b", "c"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDocsEnv(t, tt.reg, tt.clock)
			ctx := context.Background()
			res, err := createGB(e.svc, e.key)
			if err != nil {
				t.Fatal(err)
			}
			id := res.Application.ID
			before := e.store.count(id)
			e.runOnce(t)
			if n := e.store.count(id) - before; n != tt.commits {
				t.Errorf("the job committed %d changes of the application, want %d", n, tt.commits)
			}
			app, err := e.store.Application(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			refs := []string{}
			for _, d := range app.RegistryDocuments {
				refs = append(refs, d.Ref)
				if _, err := os.Stat(filepath.Join(e.blobs, d.BlobID[0:2], d.BlobID[2:4], d.BlobID)); err != nil {
					t.Errorf("document %s: %v", d.Ref, err)
				}
			}
			if diff := cmp.Diff(tt.refs, refs); diff != "" {
				t.Errorf("registry documents (-want +got):\n%s", diff)
			}
			if app.RegistryDocumentsStatus != tt.status {
				t.Errorf("registry documents status %q, want %q", app.RegistryDocumentsStatus, tt.status)
			}
			// Every case recorded documents: updated_at says when.
			if !app.UpdatedAt.After(res.Application.UpdatedAt) {
				t.Errorf("updated_at %v, not after the create's %v", app.UpdatedAt, res.Application.UpdatedAt)
			}
			acts, err := storetest.Activity(ctx, e.store, id)
			if err != nil {
				t.Fatal(err)
			}
			finished := 0
			for _, a := range acts {
				if a.Action == onboarding.ActionRegistryDocuments {
					finished++
				}
			}
			if finished != tt.finished {
				t.Errorf("%d %s activity entries, want %d", finished, onboarding.ActionRegistryDocuments, tt.finished)
			}
			events, _, err := e.store.Events(ctx, onboarding.EventQuery{OrgID: "acme", Type: onboarding.EventApplicationRegistryDocumentsUpdated, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != tt.finished {
				t.Fatalf("%d %s events, want %d", len(events), onboarding.EventApplicationRegistryDocumentsUpdated, tt.finished)
			}
			for _, ev := range events {
				var body struct {
					Data struct {
						Documents []struct {
							DocumentType string `json:"document_type"`
						} `json:"registry_documents"`
						Status    onboarding.RegistryDocumentsStatus `json:"registry_documents_status"`
						UpdatedAt string                             `json:"updated_at"`
					} `json:"data"`
				}
				if err := json.Unmarshal(ev.Body, &body); err != nil {
					t.Fatal(err)
				}
				if len(body.Data.Documents) != len(tt.refs) || body.Data.Status != tt.status {
					t.Errorf("event data: %d documents, status %q; want %d, %q", len(body.Data.Documents), body.Data.Status, len(tt.refs), tt.status)
				}
				if want := onboarding.Timestamp(app.UpdatedAt); body.Data.UpdatedAt != want {
					t.Errorf("event data: updated_at %s, want the application's %s", body.Data.UpdatedAt, want)
				}
			}
			// Every stored file is a document of the application.
			if n := countFiles(t, e.blobs); n != len(tt.refs) {
				t.Errorf("%d files stored, want %d", n, len(tt.refs))
			}
		})
	}
}

// countFiles counts the blobs in the blob store kept in dir (not counting
// tmp/).
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
