package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"onboard/onboarding"
)

// DefaultWebhookTimeout bounds one delivery attempt when
// WebhookOptions.Timeout is zero.
const DefaultWebhookTimeout = 15 * time.Second

// drainLimit is how much of an answer beyond its logged part Send reads so
// that the connection can carry the next delivery; a longer answer is cut
// off by closing the connection.
const drainLimit = 64 << 10

// WebhookOptions tunes a Webhooks transport; the zero value is production.
type WebhookOptions struct {
	// UserAgent is the User-Agent of every delivery ("onboard/<version>").
	UserAgent string
	// Timeout bounds each attempt, from dial to the logged part of the
	// answer (default DefaultWebhookTimeout).
	Timeout time.Duration
	// AllowPrivate lets deliveries go to loopback, private and link-local
	// addresses (sandbox).
	AllowPrivate bool
	// AllowHTTP lets endpoints use http rather than https (sandbox).
	AllowHTTP bool
	// Resolver resolves host names for the address check (default
	// net.DefaultResolver).
	Resolver Resolver
}

// Webhooks delivers webhooks over HTTP with Standard Webhooks signatures.
// It implements onboarding.WebhookTransport and is safe for concurrent use;
// its connections are kept and reused across deliveries.
type Webhooks struct {
	client       *http.Client
	dialer       net.Dialer
	resolver     Resolver
	userAgent    string
	timeout      time.Duration
	allowPrivate bool
	allowHTTP    bool
}

var _ onboarding.WebhookTransport = (*Webhooks)(nil)

// NewWebhooks returns a transport configured by opts. Its HTTP client
// follows no redirect, keeps no cookies, uses no proxy (a proxy would
// connect on our behalf to addresses never checked) and, unless
// opts.AllowPrivate, connects only to addresses it has checked.
func NewWebhooks(opts WebhookOptions) *Webhooks {
	w := &Webhooks{
		resolver:     opts.Resolver,
		userAgent:    opts.UserAgent,
		timeout:      opts.Timeout,
		allowPrivate: opts.AllowPrivate,
		allowHTTP:    opts.AllowHTTP,
	}
	if w.resolver == nil {
		w.resolver = net.DefaultResolver
	}
	if w.userAgent == "" {
		w.userAgent = "onboard"
	}
	if w.timeout <= 0 {
		w.timeout = DefaultWebhookTimeout
	}
	dial := w.dialer.DialContext
	if !w.allowPrivate {
		dial = w.dial
	}
	w.client = &http.Client{
		Transport: &http.Transport{
			DialContext:            dial,
			ForceAttemptHTTP2:      true,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			MaxIdleConns:           256,
			MaxIdleConnsPerHost:    16,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
			// The logged answer is the bytes the receiver sent.
			DisableCompression: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return w
}

// Send makes one delivery attempt (onboarding.WebhookTransport): a POST of
// r.Body to r.URL signed with each of r.Keys, bounded by the timeout. Any
// HTTP answer, a redirect included, is returned with no error; its body is
// read up to onboarding.MaxLoggedResponse bytes. When no answer came, the
// error's message says why in a few words for the delivery log
// ("connection refused", "timed out after 15s", "destination refused: …").
func (w *Webhooks) Send(ctx context.Context, r onboarding.WebhookRequest) (onboarding.WebhookResponse, error) {
	var resp onboarding.WebhookResponse
	if _, err := parseWebhookURL(r.URL, w.allowHTTP); err != nil {
		return resp, &deliveryError{msg: "destination refused: " + err.Error(), err: err}
	}
	if len(r.Keys) == 0 {
		return resp, errors.New("no signing key: the delivery was not sent unsigned")
	}
	// The attempt's time starts with its timeout, so that an attempt that
	// timed out never reports less than the timeout.
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return resp, err
	}
	ts := strconv.FormatInt(r.Timestamp.Unix(), 10)
	req.Header = http.Header{
		"Content-Type":      {"application/json"},
		"User-Agent":        {w.userAgent},
		"Webhook-Id":        {r.EventID},
		"Webhook-Timestamp": {ts},
		"Webhook-Signature": {sign(r.Keys, r.EventID, ts, r.Body)},
	}

	res, err := w.client.Do(req)
	if err != nil {
		resp.Latency = time.Since(start)
		return resp, w.explain(ctx, err)
	}
	defer res.Body.Close()
	resp.StatusCode = res.StatusCode
	buf := make([]byte, onboarding.MaxLoggedResponse)
	// A failure to read the body does not undo the answer.
	if n, _ := io.ReadFull(res.Body, buf); n > 0 {
		resp.Body = buf[:n]
	}
	resp.Latency = time.Since(start)
	if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
		resp.RetryAfter = retryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	_, _ = io.CopyN(io.Discard, res.Body, drainLimit)
	return resp, nil
}

// sign returns the webhook-signature header: "v1," and the base64 of the
// HMAC-SHA256 of "id.timestamp.body" under each key, space-separated, in
// the order of keys.
func sign(keys [][]byte, id, timestamp string, body []byte) string {
	prefix := []byte(id + "." + timestamp + ".")
	out := make([]byte, 0, len(keys)*(len("v1,")+base64.StdEncoding.EncodedLen(sha256.Size)+1))
	var sum [sha256.Size]byte
	for i, key := range keys {
		if i > 0 {
			out = append(out, ' ')
		}
		m := hmac.New(sha256.New, key)
		m.Write(prefix)
		m.Write(body)
		out = append(out, "v1,"...)
		out = base64.StdEncoding.AppendEncode(out, m.Sum(sum[:0]))
	}
	return string(out)
}

// retryAfter reads a Retry-After header, delta-seconds or an HTTP-date
// (relative to now); zero when absent, unreadable or past.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	maxSeconds := int64(math.MaxInt64 / time.Second)
	switch s, err := strconv.ParseInt(v, 10, 64); {
	case err == nil:
		return time.Duration(min(max(s, 0), maxSeconds)) * time.Second
	case errors.Is(err, strconv.ErrRange) && s > 0:
		// More seconds than an int64 holds: as long as can be (the
		// deliverer caps it), not unreadable.
		return time.Duration(maxSeconds) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// deliveryError is an attempt that got no answer: a short message for the
// delivery log, and the error it stands for.
type deliveryError struct {
	msg string
	err error
}

func (e *deliveryError) Error() string { return e.msg }
func (e *deliveryError) Unwrap() error { return e.err }

// explain turns the error of an attempt that got no answer into one the
// delivery log can show: the cause in a few words, without the URL.
func (w *Webhooks) explain(ctx context.Context, err error) error {
	var (
		refused *refusedError
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		urlErr  *url.Error
		msg     string
	)
	switch {
	case errors.As(err, &refused):
		return refused
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		msg = fmt.Sprintf("timed out after %s", w.timeout)
	case ctx.Err() != nil:
		msg = "cancelled before an answer came"
	case errors.As(err, &dnsErr):
		msg = fmt.Sprintf("host '%s' could not be resolved", dnsErr.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		msg = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		msg = "connection reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		msg = "connection closed before an answer came"
	case errors.As(err, &certErr):
		msg = "TLS certificate not accepted: " + certErr.Err.Error()
	case errors.As(err, &urlErr):
		msg = urlErr.Err.Error()
	default:
		msg = err.Error()
	}
	return &deliveryError{msg: msg, err: err}
}
