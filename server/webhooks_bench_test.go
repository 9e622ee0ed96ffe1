package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"onboard/notify"
	"onboard/onboarding"
)

// BenchmarkCreateApplicationWithEndpoint is BenchmarkCreateApplication
// with one webhook endpoint registered, so each create also queues its two
// events (created, sent) for delivery in the transactions that commit
// them. Nothing delivers them: this measures the outbox's write.
func BenchmarkCreateApplicationWithEndpoint(b *testing.B) {
	e := newEnv(b, envOptions{transport: notify.NewWebhooks(notify.WebhookOptions{AllowPrivate: true, AllowHTTP: true})})
	if _, _, err := e.svc.AddEndpoint(context.Background(), onboarding.EndpointSpec{OrgID: "acme", URL: "http://127.0.0.1:9/hooks"}); err != nil {
		b.Fatal(err)
	}
	benchRequest(b, e, "POST", "/api/external/applications",
		`{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`)
}

// BenchmarkWebhookDelivery measures deliveries per second to a local
// receiver: b.N events are queued first, then the delivery job signs,
// sends and logs each one (a durable write per attempt) until the receiver
// has them all.
func BenchmarkWebhookDelivery(b *testing.B) {
	var got atomic.Int64
	all := make(chan struct{})
	var want int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if got.Add(1) == atomic.LoadInt64(&want) {
			close(all)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	transport := notify.NewWebhooks(notify.WebhookOptions{UserAgent: "onboard/bench", AllowPrivate: true, AllowHTTP: true})
	e := newEnv(b, envOptions{transport: transport})
	ctx := context.Background()
	_, ep, err := e.svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "acme", URL: rcv.URL})
	if err != nil {
		b.Fatal(err)
	}
	atomic.StoreInt64(&want, int64(b.N))
	for range b.N {
		if _, err := e.svc.TestEndpoint(ctx, ep.ID); err != nil {
			b.Fatal(err)
		}
	}
	jobCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go func() { done <- notify.RunWebhooks(jobCtx, e.svc) }()
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d delivered", got.Load(), b.N)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
}

// BenchmarkListEvents lists a page of 50 events out of a few hundred.
func BenchmarkListEvents(b *testing.B) {
	e := newEnv(b, envOptions{})
	for range 150 {
		e.create(b, "acme", `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`)
	}
	benchRequest(b, e, "GET", "/api/external/events?limit=50", "")
}

// BenchmarkGetEvent reads one event.
func BenchmarkGetEvent(b *testing.B) {
	e := newEnv(b, envOptions{})
	e.create(b, "acme", "")
	page, err := e.svc.ListEvents(context.Background(), mustKey(b, e, "acme"), "", onboarding.PageRequest{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		b.Fatalf("ListEvents = %v, %v", page, err)
	}
	benchRequest(b, e, "GET", "/api/external/events/"+page.Items[0].ID, "")
}

// BenchmarkRecordDecision records an approval of a submitted application
// (a durable write and its event); seeding each application is not timed.
func BenchmarkRecordDecision(b *testing.B) {
	e := newEnv(b, envOptions{})
	auth := "Bearer " + e.keys["acme"]
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		id := e.create(b, "acme", `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`)
		if _, err := e.store.UpdateApplication(context.Background(), id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = onboarding.StatusSubmitted
			return onboarding.Changes{}, nil
		}); err != nil {
			b.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/api/external/applications/"+id+"/decision", strings.NewReader(`{"type":"application.approved","data":{"score":7}}`))
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		b.StartTimer()
		e.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("decision = %d %s", w.Code, w.Body)
		}
	}
}

// mustKey authenticates one of the env's keys.
func mustKey(b *testing.B, e *env, name string) *onboarding.APIKey {
	b.Helper()
	k, err := e.svc.Authenticate(context.Background(), e.keys[name])
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkResendInvite resends an application's invite (a durable write,
// the email, and the status write); a fresh application every five
// resends keeps within the daily limit, outside the timing.
func BenchmarkResendInvite(b *testing.B) {
	e := newEnv(b, envOptions{})
	auth := "Bearer " + e.keys["acme"]
	b.ReportAllocs()
	var id string
	n := 0
	for b.Loop() {
		if n%5 == 0 {
			b.StopTimer()
			id = e.create(b, "acme", `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`)
			b.StartTimer()
		}
		n++
		r := httptest.NewRequest("POST", "/api/external/applications/"+id+"/invite", nil)
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("resend = %d %s", w.Code, w.Body)
		}
	}
}
