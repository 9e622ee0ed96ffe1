package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path/filepath"
	"sync"
	"time"

	"onboard/bench"
	"onboard/config"
	"onboard/metrics"
	"onboard/onboarding"
)

// benchServer is the server onboard bench measures: serve's composition,
// in this process, on a loopback port and a fresh data directory.
type benchServer struct {
	base string // http://127.0.0.1:port
	key  string // an API key with every scope
	org  string // the organization of key
	app  *app
	dir  string // the data directory

	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// URL is the server's base URL.
func (b *benchServer) URL() string { return b.base }

// Key is the API key the bench uses.
func (b *benchServer) Key() string { return b.key }

// benchConfig is the configuration of the bench server: the embedded
// sandbox defaults (fixtures registry, sandbox outbox, test helpers) on
// dataDir, listening at addr, without the API's rate limit.
func benchConfig(dataDir, addr string) (config.Config, error) {
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Listen = addr
	cfg.PublicURL = "http://" + addr
	cfg.Limits.RatePerSecond = 0
	// A second configuration of the organization, without registry
	// documents: applications created with it leave the registry
	// documents job idle (the quiet creates of benchCreates).
	org := &cfg.Organizations[0]
	quiet := org.Configs[0]
	quiet.ID, quiet.RegistryDocuments = bench.QuietConfig, false
	org.Configs = append(org.Configs, quiet)
	if err := cfg.Validate(); err != nil {
		return config.Config{}, fmt.Errorf("invalid bench configuration:\n%w", err)
	}
	return cfg, nil
}

// startBenchServer starts the server as serve does (background jobs
// included; no admin socket) and creates its API key. Its request log is
// formatted as serve's and discarded.
func startBenchServer(dataDir string) (*benchServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg, err := benchConfig(dataDir, ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	log := newLogger("text", io.Discard)
	metrics := metrics.New()
	a, err := openMeteredApp(cfg, log, metrics)
	if err != nil {
		ln.Close()
		return nil, err
	}
	metrics.WatchStore(a.store)
	key, _, err := a.svc.CreateAPIKey(context.Background(), onboarding.KeySpec{OrgID: cfg.Organizations[0].ID, Name: "onboard bench"})
	if err != nil {
		ln.Close()
		a.store.Close()
		return nil, err
	}
	workers := newJobs(log)
	srv := newAPIServer(cfg, a, log, metrics, nil, workers)
	ctx, cancel := context.WithCancel(context.Background())
	b := &benchServer{base: cfg.PublicURL, key: key, org: cfg.Organizations[0].ID, app: a, dir: dataDir, cancel: cancel, done: make(chan error, 1)}
	go func() { b.done <- serveWithJobs(ctx, srv, a, workers, ln, nil, cfg.Limits.MaxMappedBytes) }()
	return b, nil
}

// Stop shuts the server down, lets its jobs finish and closes the store.
// Calls after the first return the first's error.
func (b *benchServer) Stop() error {
	b.stopOnce.Do(func() {
		b.cancel()
		err := <-b.done
		b.stopErr = errors.Join(err, b.app.store.Close())
	})
	return b.stopErr
}

// Settle waits, for at most limit, until the server's registry documents
// job has no application left to fetch documents for (creates queue a
// fetch each), and then until the database has no level due for
// compaction: what an operation left behind (a backlog of fetches, tables
// to compact) would weigh on the operation measured after it, while the
// ceilings are measured on a database with neither. It answers how long
// it waited and whether both ended.
func (b *benchServer) Settle(limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		pending, err := b.app.store.PendingRegistryDocuments(context.Background())
		if err != nil {
			return time.Since(start), false, err
		}
		if len(pending) == 0 && !b.app.badger.CompactionDue() {
			return time.Since(start), true, nil
		}
		if time.Since(start) > limit {
			return time.Since(start), false, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PendingDocuments is how many applications wait for their registry
// documents.
func (b *benchServer) PendingDocuments() (int, error) {
	ids, err := b.app.store.PendingRegistryDocuments(context.Background())
	return len(ids), err
}

// StoredBlobs is how many files the blob store holds (registry documents
// and uploads), not counting those being written.
func (b *benchServer) StoredBlobs() (int, error) {
	root := filepath.Join(b.dir, "blobs")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path == filepath.Join(root, "tmp"):
			return filepath.SkipDir
		case d.Type().IsRegular():
			n++
		}
		return nil
	})
	return n, err
}

// AddEndpoint registers a webhook endpoint for every event of the bench
// organization, at url, and answers its id.
func (b *benchServer) AddEndpoint(url string) (string, error) {
	_, ep, err := b.app.svc.AddEndpoint(context.Background(), onboarding.EndpointSpec{OrgID: b.org, URL: url, Description: "onboard bench"})
	if err != nil {
		return "", err
	}
	return ep.ID, nil
}

// RemoveEndpoint removes a webhook endpoint; its queued deliveries are
// dropped. The removal reads the endpoint's queue in one transaction,
// which conflicts with the delivery job's claims while it works through
// the queue: it is tried again, for at most removeLimit.
func (b *benchServer) RemoveEndpoint(id string) error {
	deadline := time.Now().Add(removeLimit)
	for {
		err := b.app.svc.RemoveEndpoint(context.Background(), id)
		if err == nil || !errors.Is(err, onboarding.ErrWriteConflict) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeLimit bounds the attempts to remove a webhook endpoint.
const removeLimit = time.Minute
