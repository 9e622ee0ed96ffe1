package notify

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"onboard/onboarding"
)

// The receivers of these tests verify signatures with the Standard Webhooks
// reference library: an implementation independent of ours must accept
// what we send.

var (
	testKey1 = bytes.Repeat([]byte{0x11}, 32)
	testKey2 = bytes.Repeat([]byte{0x22}, 32)
	testKey3 = bytes.Repeat([]byte{0x33}, 32)
)

const testBody = `{"id":"evt_01","type":"application.created","timestamp":"2025-01-02T03:04:05Z","data":{"id":"app_01"}}`

// sandboxWebhooks is a transport as the sandbox configures it.
func sandboxWebhooks(timeout time.Duration) *Webhooks {
	return NewWebhooks(WebhookOptions{UserAgent: "onboard/test", Timeout: timeout, AllowPrivate: true, AllowHTTP: true})
}

// testRequest is a delivery of testBody to url signed with keys, stamped now
// (the reference library refuses timestamps more than 5 minutes off).
func testRequest(url string, keys ...[]byte) onboarding.WebhookRequest {
	return onboarding.WebhookRequest{URL: url, EventID: "evt_01", Body: []byte(testBody), Keys: keys, Timestamp: time.Now()}
}

// received is a request as a test receiver got it.
type received struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// serve starts a receiver on 127.0.0.1 running h, closed when the test ends.
func serve(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// recorder is a handler that hands each request to got and answers status.
func recorder(got chan<- received, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "thanks")
	}
}

// counter is a handler that counts its requests and answers 204.
func counter(hits *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}
}

func TestSignKnownAnswer(t *testing.T) {
	// The reference library's own test vector.
	key, err := standardwebhooks.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	want, err := key.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("the library signs %q", want)
	}
	raw, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	if got := sign([][]byte{raw}, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", []byte(`{"test": 2432232314}`)); got != want {
		t.Errorf("sign = %q, want %q", got, want)
	}
}

func TestSendSignatures(t *testing.T) {
	tests := []struct {
		name string
		keys [][]byte
	}{
		{"one key", [][]byte{testKey1}},
		{"rotation", [][]byte{testKey1, testKey2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan received, 1)
			srv := serve(t, recorder(got, http.StatusNoContent))
			if _, err := sandboxWebhooks(0).Send(t.Context(), testRequest(srv.URL, tt.keys...)); err != nil {
				t.Fatalf("Send: %v", err)
			}
			r := <-got
			parts := strings.Split(r.Header.Get("webhook-signature"), " ")
			if len(parts) != len(tt.keys) {
				t.Fatalf("webhook-signature has %d parts, want %d: %q", len(parts), len(tt.keys), parts)
			}
			for i, key := range tt.keys {
				wh, _ := standardwebhooks.NewWebhookRaw(key)
				// Each secret alone verifies the delivery, as a receiver
				// holding either side of a rotation would.
				if err := wh.Verify(r.Body, r.Header); err != nil {
					t.Errorf("key %d: the reference library refuses the delivery: %v", i+1, err)
				}
				// And the signatures come in the order of the keys.
				one := r.Header.Clone()
				one.Set("webhook-signature", parts[i])
				if err := wh.Verify(r.Body, one); err != nil {
					t.Errorf("signature %d is not key %d's: %v", i+1, i+1, err)
				}
			}
			other, _ := standardwebhooks.NewWebhookRaw(testKey3)
			if err := other.Verify(r.Body, r.Header); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
				t.Errorf("a key that did not sign: Verify = %v, want ErrNoMatchingSignature", err)
			}
			tampered := bytes.Replace(r.Body, []byte("app_01"), []byte("app_02"), 1)
			first, _ := standardwebhooks.NewWebhookRaw(tt.keys[0])
			if err := first.Verify(tampered, r.Header); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
				t.Errorf("a changed body: Verify = %v, want ErrNoMatchingSignature", err)
			}
		})
	}
}

func TestSendHeaders(t *testing.T) {
	got := make(chan received, 1)
	srv := serve(t, recorder(got, http.StatusAccepted))
	req := testRequest(srv.URL+"/hooks/onboard?x=1", testKey1)
	resp, err := sandboxWebhooks(0).Send(t.Context(), req)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.StatusCode != http.StatusAccepted || string(resp.Body) != "thanks" || resp.RetryAfter != 0 || resp.Latency <= 0 {
		t.Errorf("response = %+v", resp)
	}
	r := <-got
	if r.Method != http.MethodPost || r.Path != "/hooks/onboard" || string(r.Body) != testBody {
		t.Errorf("request = %s %s %q", r.Method, r.Path, r.Body)
	}
	want := http.Header{
		"Content-Type":      {"application/json"},
		"Content-Length":    {strconv.Itoa(len(testBody))},
		"User-Agent":        {"onboard/test"},
		"Webhook-Id":        {"evt_01"},
		"Webhook-Timestamp": {strconv.FormatInt(req.Timestamp.Unix(), 10)},
		"Webhook-Signature": {sign([][]byte{testKey1}, "evt_01", strconv.FormatInt(req.Timestamp.Unix(), 10), []byte(testBody))},
	}
	// Nothing else: no cookie, no credentials, no Accept-Encoding.
	if diff := cmp.Diff(want, r.Header); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestSendNoRedirect(t *testing.T) {
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", counter(&followed))
	srv := serve(t, mux.ServeHTTP)
	resp, err := sandboxWebhooks(0).Send(t.Context(), testRequest(srv.URL+"/hook", testKey1))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.StatusCode != http.StatusFound {
		t.Errorf("StatusCode = %d, want 302", resp.StatusCode)
	}
	// Send has returned: a redirect followed would have reached the target.
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

func TestSendTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	resp, err := sandboxWebhooks(50*time.Millisecond).Send(t.Context(), testRequest(srv.URL, testKey1))
	if err == nil || err.Error() != "timed out after 50ms" {
		t.Fatalf("Send error = %v, want timed out after 50ms", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, context.DeadlineExceeded) is false", err)
	}
	if resp.StatusCode != 0 || resp.Latency < 50*time.Millisecond {
		t.Errorf("response = %+v", resp)
	}
}

func TestSendCancelled(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	})
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := sandboxWebhooks(0).Send(ctx, testRequest(srv.URL, testKey1))
	if err == nil || err.Error() != "cancelled before an answer came" || !errors.Is(err, context.Canceled) {
		t.Fatalf("Send error = %v", err)
	}
}

func TestSendConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/"
	l.Close()
	_, err = sandboxWebhooks(0).Send(t.Context(), testRequest(url, testKey1))
	if err == nil || err.Error() != "connection refused" {
		t.Fatalf("Send error = %v, want connection refused", err)
	}
}

func TestSendHungUp(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			c.Close()
		}
	})
	_, err := sandboxWebhooks(0).Send(t.Context(), testRequest(srv.URL, testKey1))
	if err == nil || err.Error() != "connection closed before an answer came" {
		t.Fatalf("Send error = %v, want connection closed before an answer came", err)
	}
}

func TestSendUntrustedCertificate(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(counter(&hits))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)
	w := NewWebhooks(WebhookOptions{AllowPrivate: true})
	_, err := w.Send(t.Context(), testRequest(srv.URL, testKey1))
	const want = "TLS certificate not accepted: x509: certificate signed by unknown authority"
	if err == nil || err.Error() != want {
		t.Fatalf("Send error = %v, want %s", err, want)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver was reached %d times", n)
	}
}

func TestSendRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		min, max   time.Duration
	}{
		{"429 seconds", 429, "120", 120 * time.Second, 120 * time.Second},
		{"503 seconds", 503, "7", 7 * time.Second, 7 * time.Second},
		{"429 date", 429, time.Now().Add(2 * time.Minute).UTC().Format(http.TimeFormat), 118 * time.Second, 120 * time.Second},
		{"503 date", 503, time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 59 * time.Minute, time.Hour},
		{"503 past date", 503, "Wed, 21 Oct 2015 07:28:00 GMT", 0, 0},
		{"429 negative", 429, "-5", 0, 0},
		{"429 unreadable", 429, "soon", 0, 0},
		{"429 none", 429, "", 0, 0},
		{"500 ignored", 500, "30", 0, 0},
		{"200 ignored", 200, "30", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
			})
			resp, err := sandboxWebhooks(0).Send(t.Context(), testRequest(srv.URL, testKey1))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if resp.StatusCode != tt.status || resp.RetryAfter < tt.min || resp.RetryAfter > tt.max {
				t.Errorf("StatusCode, RetryAfter = %d, %v; want %d, in [%v, %v]", resp.StatusCode, resp.RetryAfter, tt.status, tt.min, tt.max)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"90", 90 * time.Second},
		{"-1", 0},
		{"99999999999999999", time.Duration(1<<63-1) / time.Second * time.Second},
		{"99999999999999999999", time.Duration(1<<63-1) / time.Second * time.Second}, // more than an int64
		{"-99999999999999999999", 0},
		{"1.5", 0},
		{"Thu, 02 Jan 2025 03:05:05 GMT", time.Minute},
		{"Thursday, 02-Jan-25 03:04:15 GMT", 10 * time.Second}, // RFC 850, which HTTP-date allows
		{"Thu, 02 Jan 2025 03:04:04 GMT", 0},
		{"tomorrow", 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSendBodyTruncated(t *testing.T) {
	var answer []byte
	for i := range 1 << 20 {
		answer = append(answer, 'a'+byte(i%26))
	}
	tests := []struct {
		size int
		want []byte
	}{
		{0, nil},
		{10, answer[:10]},
		{onboarding.MaxLoggedResponse, answer[:onboarding.MaxLoggedResponse]},
		{5000, answer[:onboarding.MaxLoggedResponse]},
		{1 << 20, answer[:onboarding.MaxLoggedResponse]},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.size), func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(answer[:tt.size])
			})
			resp, err := sandboxWebhooks(0).Send(t.Context(), testRequest(srv.URL, testKey1))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if resp.StatusCode != http.StatusBadRequest || !bytes.Equal(resp.Body, tt.want) || (resp.Body == nil) != (tt.want == nil) {
				t.Errorf("StatusCode %d, Body of %d bytes %.20q…; want 400, %d bytes", resp.StatusCode, len(resp.Body), resp.Body, len(tt.want))
			}
		})
	}
}

func TestSendReusesConnections(t *testing.T) {
	// Answers longer than the logged part, but short enough to be drained,
	// leave the connection to the next delivery.
	answer := strings.Repeat("x", 4096)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, answer)
	}))
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	w := sandboxWebhooks(0)
	for range 3 {
		if _, err := w.Send(t.Context(), testRequest(srv.URL, testKey1)); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 deliveries opened %d connections, want 1", n)
	}
}

func TestSendNoKey(t *testing.T) {
	var hits atomic.Int32
	srv := serve(t, counter(&hits))
	if _, err := sandboxWebhooks(0).Send(t.Context(), testRequest(srv.URL)); err == nil {
		t.Error("Send without a key: no error")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("an unsigned delivery reached the receiver %d times", n)
	}
}

func BenchmarkSend(b *testing.B) {
	srv := serve(b, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	w := sandboxWebhooks(0)
	body := []byte(`{"id":"evt_01JH5R3S8X4N6Q2W9E7T1Y0U3I","type":"application.submitted","timestamp":"2025-01-02T03:04:05Z","data":{` +
		strings.Repeat(`"field":"a value of some length",`, 24) + `"id":"app_01"}}`)
	req := onboarding.WebhookRequest{URL: srv.URL + "/hook", EventID: "evt_01JH5R3S8X4N6Q2W9E7T1Y0U3I", Body: body, Keys: [][]byte{testKey1}, Timestamp: time.Now()}
	send := func(b *testing.B) bool {
		resp, err := w.Send(context.Background(), req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			b.Errorf("Send = %d, %v", resp.StatusCode, err)
			return false
		}
		return true
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !send(b) {
				return
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() && send(b) {
			}
		})
	})
}
