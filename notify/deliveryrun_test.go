package notify_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"onboard/notify"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// lockedBuffer is a log destination the delivery workers and the test
// share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// sentAttempt is what a recordingTransport saw of one attempt.
type sentAttempt struct {
	deadline time.Time
	left     time.Duration // until the deadline, when Send was called
	ok       bool          // the attempt's context has a deadline
}

// recordingTransport answers every attempt with status and reports it on
// sent.
type recordingTransport struct {
	status int
	sent   chan sentAttempt
}

func (tr *recordingTransport) Send(ctx context.Context, _ onboarding.WebhookRequest) (onboarding.WebhookResponse, error) {
	dl, ok := ctx.Deadline()
	tr.sent <- sentAttempt{deadline: dl, left: time.Until(dl), ok: ok}
	return onboarding.WebhookResponse{StatusCode: tr.status}, nil
}

func (tr *recordingTransport) CheckURL(context.Context, string) error { return nil }

// fixedClock is a clock that stands still.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// TestDeliveryDeadlineAndLoggedURL checks that an attempt's deadline
// derives from its claim's lease (the timeout, leaving the lease's margin
// to record it), and that the log names an endpoint by scheme, host and
// path only: its query may carry the receiver's token.
func TestDeliveryDeadlineAndLoggedURL(t *testing.T) {
	const timeout = 3 * time.Second
	store := storetest.Open(t)
	logs := &lockedBuffer{}
	tr := &recordingTransport{status: 410, sent: make(chan sentAttempt, 1)}
	// Events expire by the real clock: this one starts at it, and stands.
	clock := &fixedClock{now: time.Now().UTC()}
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Now: clock.Now, PageCounter: pdf.PageCount, PublicURL: "https://onboard.example",
		Organizations: []*onboarding.Organization{{ID: "acme", Name: "Acme Payments"}},
		Logger:        slog.New(slog.NewTextHandler(logs, nil)),
		Webhooks:      tr, WebhookTimeout: timeout, RetrySchedule: []time.Duration{0},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, ep, err := svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "acme", URL: "https://hooks.example.com/in?token=s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.TestEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- notify.RunWebhooks(runCtx, svc) }()
	var got sentAttempt
	select {
	case got = <-tr.sent:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery attempt")
	}
	// The attempt answers 410, disabling the endpoint; RunWebhooks returns
	// once it is recorded and logged.
	cancel()
	<-stopped
	if !got.ok || got.left > timeout || got.left < timeout-time.Second {
		t.Errorf("attempt deadline: set %v, %v ahead; want %v ahead (the lease's end less its margin)", got.ok, got.left, timeout)
	}
	log := logs.String()
	for _, want := range []string{
		"msg=\"webhook endpoint added\" endpoint_id=" + ep.ID + " org=acme url=https://hooks.example.com/in\n",
		"url=https://hooks.example.com/in reason=\"the endpoint answered 410 Gone\"\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "s3cret") {
		t.Errorf("the log shows the endpoint URL's query:\n%s", log)
	}
}

// TestWebhooksGiveWay checks that the webhook deliverer waits before a
// claim while a request is being served, for at most its yield, and not at
// all when none is.
func TestWebhooksGiveWay(t *testing.T) {
	start := func(t *testing.T, yield time.Duration) (*onboarding.Service, <-chan sentAttempt) {
		store := storetest.Open(t)
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
		go func() { stopped <- notify.RunWebhooks(ctx, svc) }()
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
