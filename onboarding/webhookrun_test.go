package onboarding_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage"
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

// TestDeliveryDeadlineAndLoggedURL checks that an attempt's deadline
// derives from its claim's lease (the timeout, leaving the lease's margin
// to record it), and that the log names an endpoint by scheme, host and
// path only: its query may carry the receiver's token.
func TestDeliveryDeadlineAndLoggedURL(t *testing.T) {
	const timeout = 3 * time.Second
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	logs := &lockedBuffer{}
	tr := &recordingTransport{status: 410, sent: make(chan sentAttempt, 1)}
	// Events expire by the real clock: this one starts at it, and stands.
	clock := &formClock{now: time.Now().UTC()}
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
	go func() { stopped <- svc.RunWebhooks(runCtx) }()
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
