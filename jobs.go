package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"onboard/server"
)

// The background jobs of `onboard serve`, as GET /readyz names them.
const (
	jobRegistryDocuments = "registry_documents"
	jobWebhookDelivery   = "webhook_delivery"
	jobRFIExpiry         = "rfi_expiry"
	jobBlobSweep         = "blob_sweep"
)

// jobs runs serve's background jobs and knows, for GET /readyz, which are
// running and why the others stopped.
type jobs struct {
	log *slog.Logger
	wg  sync.WaitGroup

	mu      sync.Mutex
	running map[string]bool
	stopped map[string]string // job → why it stopped
}

func newJobs(log *slog.Logger) *jobs {
	return &jobs{log: log, running: map[string]bool{}, stopped: map[string]string{}}
}

// start runs job name in a goroutine until run returns. It counts as
// running from this call on, so that a server started after it is ready
// at once. A job that stops with an error other than its context's end
// logs it.
func (j *jobs) start(name string, run func() error) {
	j.mu.Lock()
	j.running[name] = true
	delete(j.stopped, name)
	j.mu.Unlock()
	j.wg.Go(func() {
		err := run()
		why := "returned"
		if err != nil {
			why = err.Error()
			if !errors.Is(err, context.Canceled) {
				j.log.Error(strings.ReplaceAll(name, "_", " ")+" job stopped", "err", err)
			}
		}
		j.mu.Lock()
		delete(j.running, name)
		j.stopped[name] = why
		j.mu.Unlock()
	})
}

// wait waits until every job started has returned.
func (j *jobs) wait() { j.wg.Wait() }

// probe is the GET /readyz check of job name: it passes while the job runs.
func (j *jobs) probe(name string) server.Probe {
	return server.Probe{Name: name, Check: func(context.Context) error {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.running[name] {
			return nil
		}
		if why, ok := j.stopped[name]; ok {
			return fmt.Errorf("stopped: %s", why)
		}
		return errors.New("not started")
	}}
}
