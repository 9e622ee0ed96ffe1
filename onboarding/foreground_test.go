package onboarding_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage"
)

// TestRegistryDocumentsGiveWay checks that the registry documents job
// waits before each application while a request is being served, for at
// most its yield, and not at all when none is.
func TestRegistryDocumentsGiveWay(t *testing.T) {
	const apps = 3
	queue := func(t *testing.T, yield time.Duration) *docsEnv {
		e := newDocsEnv(t, threeFilings(1<<10), nil, func(o *onboarding.Options) { o.RegistryDocumentsYield = yield })
		for range apps {
			if _, err := createGB(e.svc, e.key); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	t.Run("busy: a yield before each application", func(t *testing.T) {
		const yield = 100 * time.Millisecond
		e := queue(t, yield)
		e.svc.RequestStarted()
		defer e.svc.RequestEnded()
		start := time.Now()
		e.runOnce(t)
		if took := time.Since(start); took < apps*yield {
			t.Errorf("the job took %v for %d applications beside a request; want at least %v", took, apps, apps*yield)
		}
	})
	t.Run("idle: no wait", func(t *testing.T) {
		// A job that waited its yield would not finish within runOnce's
		// minute.
		e := queue(t, time.Hour)
		e.runOnce(t)
	})
	t.Run("busy, then idle: the job goes on", func(t *testing.T) {
		e := queue(t, time.Hour)
		e.svc.RequestStarted()
		ended := time.AfterFunc(50*time.Millisecond, e.svc.RequestEnded)
		defer ended.Stop()
		e.runOnce(t)
	})
}

// TestWebhooksGiveWay checks that the webhook deliverer waits before a
// claim while a request is being served, for at most its yield, and not at
// all when none is.
func TestWebhooksGiveWay(t *testing.T) {
	start := func(t *testing.T, yield time.Duration) (*onboarding.Service, <-chan sentAttempt) {
		store, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		tr := &recordingTransport{status: 204, sent: make(chan sentAttempt, 1)}
		svc, err := onboarding.New(onboarding.Options{
			Store: store, Now: time.Now, PageCounter: pdf.PageCount, PublicURL: "https://onboard.example",
			Organizations: []*onboarding.Organization{{ID: "acme", Name: "Acme Payments"}},
			Webhooks:      tr, WebhooksYield: yield,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, ep, err := svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "acme", URL: "https://hooks.example.com/in"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.TestEndpoint(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
		return svc, tr.sent
	}
	run := func(t *testing.T, svc *onboarding.Service) {
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan error, 1)
		go func() { stopped <- svc.RunWebhooks(ctx) }()
		t.Cleanup(func() { cancel(); <-stopped })
	}
	delivered := func(t *testing.T, sent <-chan sentAttempt) {
		t.Helper()
		select {
		case <-sent:
		case <-time.After(time.Minute):
			t.Fatal("no delivery within a minute")
		}
	}
	t.Run("busy: a yield before the claim", func(t *testing.T) {
		const yield = 100 * time.Millisecond
		svc, sent := start(t, yield)
		svc.RequestStarted()
		defer svc.RequestEnded()
		began := time.Now()
		run(t, svc)
		delivered(t, sent)
		if took := time.Since(began); took < yield {
			t.Errorf("delivered after %v beside a request; want at least %v", took, yield)
		}
	})
	t.Run("idle: no wait", func(t *testing.T) {
		// A deliverer that waited its yield would not deliver within the
		// minute.
		svc, sent := start(t, time.Hour)
		run(t, svc)
		delivered(t, sent)
	})
	t.Run("busy, then idle: delivery goes on", func(t *testing.T) {
		svc, sent := start(t, time.Hour)
		svc.RequestStarted()
		ended := time.AfterFunc(50*time.Millisecond, svc.RequestEnded)
		defer ended.Stop()
		run(t, svc)
		delivered(t, sent)
	})
}
