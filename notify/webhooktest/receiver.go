// Package webhooktest is a webhook receiver for tests, as net/http/httptest
// is a server: it listens on 127.0.0.1, verifies every delivery's
// signatures with the Standard Webhooks reference library (an
// implementation independent of ours), answers as the test tells it, and
// hands each delivery to the test in the order it arrived.
package webhooktest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Delivery is one request the receiver got.
type Delivery struct {
	ID        string // webhook-id
	Timestamp string // webhook-timestamp
	Signature string // webhook-signature
	UserAgent string
	Header    http.Header
	Body      []byte
	// Event is the body decoded: {"id","type","timestamp","data"}.
	Event struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	// Verified lists the secrets (of those set with SetSecrets) whose
	// signature the reference library accepted.
	Verified []string
	// Status is what the receiver answered.
	Status int
}

// Answer is what the receiver replies to a delivery.
type Answer struct {
	Status int         // 0: 204
	Header http.Header // added to the reply
	Body   string
	// Hold, when set, keeps the request open until it is closed (for
	// timeouts).
	Hold <-chan struct{}
}

// Receiver is a running test receiver.
type Receiver struct {
	URL string

	srv *httptest.Server
	got chan Delivery

	mu      sync.Mutex
	secrets []string
	answer  func(d *Delivery, n int) Answer
	n       int
	all     []Delivery
	// aside holds deliveries NextAbout took from got while looking for
	// another subject's, for later NextAbout calls.
	aside []Delivery
}

// New starts a receiver that accepts deliveries signed with any of secrets
// and answers 204 until told otherwise. It stops when the test ends.
func New(t testing.TB, secrets ...string) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return NewOn(t, ln, secrets...)
}

// NewOn is New on a listener of the test's, such as one on the address a
// receiver that went away had.
func NewOn(t testing.TB, ln net.Listener, secrets ...string) *Receiver {
	t.Helper()
	r := &Receiver{got: make(chan Delivery, 4096), secrets: secrets}
	r.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(r.serve)}}
	r.srv.Start()
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

// Close stops the receiver: later deliveries find nothing listening.
func (r *Receiver) Close() { r.srv.Close() }

// SetSecrets replaces the secrets signatures are checked with.
func (r *Receiver) SetSecrets(secrets ...string) {
	r.mu.Lock()
	r.secrets = secrets
	r.mu.Unlock()
}

// Answer sets how the receiver answers: f is given each delivery and its
// number (1 for the first the receiver got).
func (r *Receiver) Answer(f func(d *Delivery, n int) Answer) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	d := Delivery{
		ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), UserAgent: req.UserAgent(),
		Header: req.Header.Clone(), Body: body,
	}
	_ = json.Unmarshal(body, &d.Event)
	r.mu.Lock()
	for _, s := range r.secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err == nil && wh.Verify(body, req.Header) == nil {
			d.Verified = append(d.Verified, s)
		}
	}
	r.n++
	n, answer := r.n, r.answer
	r.mu.Unlock()
	a := Answer{}
	if answer != nil {
		a = answer(&d, n)
	}
	if a.Hold != nil {
		select {
		case <-a.Hold:
		case <-req.Context().Done():
		}
	}
	if a.Status == 0 {
		a.Status = http.StatusNoContent
	}
	d.Status = a.Status
	for k, vs := range a.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(a.Status)
	_, _ = io.WriteString(w, a.Body)
	r.mu.Lock()
	r.all = append(r.all, d)
	r.mu.Unlock()
	r.got <- d
}

// Next returns the next delivery, failing the test when none arrives
// within timeout.
func (r *Receiver) Next(t testing.TB, timeout time.Duration) Delivery {
	t.Helper()
	select {
	case d := <-r.got:
		return d
	case <-time.After(timeout):
		t.Fatalf("no webhook delivery within %v", timeout)
		return Delivery{}
	}
}

// Within returns the next delivery, or false when none arrives within
// timeout: for a test that reports more than Next would when deliveries
// stop.
func (r *Receiver) Within(timeout time.Duration) (Delivery, bool) {
	select {
	case d := <-r.got:
		return d, true
	case <-time.After(timeout):
		return Delivery{}, false
	}
}

// NextOf returns the next delivery of event type typ, skipping others,
// failing the test when none arrives within timeout.
func (r *Receiver) NextOf(t testing.TB, typ string, timeout time.Duration) Delivery {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case d := <-r.got:
			if d.Event.Type == typ {
				return d
			}
		case <-deadline:
			t.Fatalf("no %s delivery within %v", typ, timeout)
			return Delivery{}
		}
	}
}

// NextAbout returns the next delivery whose data.id is subject (an
// application's or an RFI request's id), failing the test when none
// arrives within timeout. Deliveries about other subjects are kept for
// later NextAbout calls, so that tests can follow several subjects, whose
// events arrive in order per subject but interleaved between them.
func (r *Receiver) NextAbout(t testing.TB, subject string, timeout time.Duration) Delivery {
	t.Helper()
	r.mu.Lock()
	for i, d := range r.aside {
		if subjectOf(d) == subject {
			r.aside = append(r.aside[:i], r.aside[i+1:]...)
			r.mu.Unlock()
			return d
		}
	}
	r.mu.Unlock()
	deadline := time.After(timeout)
	for {
		select {
		case d := <-r.got:
			if subjectOf(d) == subject {
				return d
			}
			r.mu.Lock()
			r.aside = append(r.aside, d)
			r.mu.Unlock()
		case <-deadline:
			t.Fatalf("no delivery about %s within %v", subject, timeout)
			return Delivery{}
		}
	}
}

// subjectOf is the id in a delivery's data.
func subjectOf(d Delivery) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(d.Event.Data, &v)
	return v.ID
}

// All returns every delivery so far, in arrival order.
func (r *Receiver) All() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.all...)
}
