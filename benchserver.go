package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"onboard/onboarding"
)

// benchServer is the server onboard bench measures: serve's composition,
// in this process, on a loopback port and a fresh data directory.
type benchServer struct {
	base string // http://127.0.0.1:port
	key  string // an API key with every scope
	app  *app

	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// benchConfig is the configuration of the bench server: the embedded
// sandbox defaults (fixtures registry, sandbox outbox, test helpers) on
// dataDir, listening at addr, without the API's rate limit.
func benchConfig(dataDir, addr string) (Config, error) {
	cfg := DefaultConfig()
	cfg.DataDir = dataDir
	cfg.Listen = addr
	cfg.PublicURL = "http://" + addr
	cfg.Limits.RatePerSecond = 0
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("invalid bench configuration:\n%w", err)
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
	metrics := newServeMetrics()
	a, err := openMeteredApp(cfg, log, metrics)
	if err != nil {
		ln.Close()
		return nil, err
	}
	metrics.watchStore(a.store, outboxRefresh)
	key, _, err := a.svc.CreateAPIKey(context.Background(), onboarding.KeySpec{OrgID: cfg.Organizations[0].ID, Name: "onboard bench"})
	if err != nil {
		ln.Close()
		a.store.Close()
		return nil, err
	}
	workers := newJobs(log)
	srv := newAPIServer(cfg, a, log, metrics, nil, workers)
	ctx, cancel := context.WithCancel(context.Background())
	b := &benchServer{base: cfg.PublicURL, key: key, app: a, cancel: cancel, done: make(chan error, 1)}
	go func() { b.done <- serveWithJobs(ctx, srv, a, workers, ln, nil) }()
	return b, nil
}

// stop shuts the server down, lets its jobs finish and closes the store.
// Calls after the first return the first's error.
func (b *benchServer) stop() error {
	b.stopOnce.Do(func() {
		b.cancel()
		err := <-b.done
		b.stopErr = errors.Join(err, b.app.store.Close())
	})
	return b.stopErr
}

// settle waits, for at most limit, until the server's registry documents
// job has no application left to fetch documents for: creates queue a
// fetch each, and a backlog left by the seeding would weigh on the
// operations measured after it. It answers how long it waited and whether
// the queue emptied.
func (b *benchServer) settle(limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		pending, err := b.app.store.PendingRegistryDocuments(context.Background())
		if err != nil || len(pending) == 0 {
			return time.Since(start), err == nil, err
		}
		if time.Since(start) > limit {
			return time.Since(start), false, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}
