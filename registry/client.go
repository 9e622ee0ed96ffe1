package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"onboard/onboarding"
)

// maxJSONBody caps a registry JSON answer; a page of 100 officers is well
// under 1 MiB.
const maxJSONBody = 4 << 20

// endpoint is the HTTP plumbing one registry adapter owns: its base URL, its
// client (whose transport is the only thing fixtures and live mode swap),
// how it authenticates, and the limiter its credential shares.
type endpoint struct {
	label   string // for wrapped error text, e.g. "companies house"
	name    string // the registry's name in API messages, e.g. "UK company registry"
	base    *url.URL
	client  *http.Client
	timeout time.Duration // bounds each JSON request, reading included
	auth    func(*http.Request)
	limit   *limiter // nil: no limit (fixtures mode)
	// registry and count report each call (Options.CountCall); count may be nil.
	registry string
	count    func(registry, outcome string)
}

// response is a registry answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// newHTTPClient returns a client that never follows redirects (a Document API
// 302 is read by the adapter itself, which fetches the Location without
// credentials). Requests are bounded by their context, not a client timeout,
// so that a streamed download can outlive a JSON request's bound.
func newHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// get sends GET base+urlPath?query with the adapter's credentials and reads
// the answer.
func (e *endpoint) get(ctx context.Context, urlPath string, query url.Values, accept string) (*response, error) {
	u := *e.base
	u.Path = strings.TrimSuffix(e.base.Path, "/") + urlPath
	u.RawQuery = query.Encode()
	return e.getURL(ctx, &u, accept, true)
}

// getURL sends GET u, with the adapter's credentials when auth is set, and
// reads the answer in full within the endpoint's timeout. Transport failures
// come back already classified: a request the fixtures have no recording for
// is onboarding.ErrRegistryFailed; a timeout, refused connection, cancelled
// context or exhausted rate limit is ErrRegistryUnavailable.
func (e *endpoint) getURL(ctx context.Context, u *url.URL, accept string, auth bool) (*response, error) {
	if auth {
		if err := e.wait(ctx, u.Path); err != nil {
			return nil, err
		}
	}
	// The timeout starts once the request may go: waiting for the rate
	// limit is bounded by the caller's own deadline, if any.
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	resp, err := e.send(ctx, u, accept, auth)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBody+1))
	if err != nil {
		return nil, e.unavailable(u.Path, err)
	}
	if len(body) > maxJSONBody {
		return nil, e.failed(u.Path, fmt.Errorf("answer over %d bytes", maxJSONBody))
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// wait takes a request slot from the credential's limiter. Background work
// (onboarding.IsBackground) may use only part of the allowance, so that
// creates keep finding slots while the registry documents job is busy.
func (e *endpoint) wait(ctx context.Context, urlPath string) error {
	if err := e.limit.wait(ctx, onboarding.IsBackground(ctx)); err != nil {
		e.counted(OutcomeThrottled)
		return e.unavailable(urlPath, err)
	}
	return nil
}

// send sends GET u and returns the response with its body unread; with auth
// set it carries the credentials, and the caller has taken a slot from the
// limiter (wait). A 429 holds the limiter until the registry's reset time.
func (e *endpoint) send(ctx context.Context, u *url.URL, accept string, auth bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		e.counted(OutcomeError)
		return nil, e.failed(u.Path, err)
	}
	req.Header.Set("Accept", accept)
	if auth {
		e.auth(req)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// *url.Error quotes the whole URL, and a storage URL's query is a
		// pre-signed credential: keep only the operation and the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s %s://%s%s: %w", ue.Op, u.Scheme, u.Host, u.Path, ue.Err)
		}
		if errors.Is(err, ErrNoRecording) {
			e.counted(OutcomeError)
			return nil, e.failed(u.Path, err)
		}
		e.counted(OutcomeUnavailable)
		return nil, e.unavailable(u.Path, err)
	}
	e.counted(statusOutcome(resp.StatusCode))
	if auth && resp.StatusCode == http.StatusTooManyRequests {
		e.limit.throttled(resp.Header)
	}
	return resp, nil
}

// unexpectedStatus classifies an answer the adapter has no meaning for:
// throttling (429) and a registry that is down or behind a failing gateway
// (502, 503, 504) are ErrRegistryUnavailable, worth retrying later;
// anything else is ErrRegistryFailed.
func (e *endpoint) unexpectedStatus(urlPath string, r *response) error {
	cause := fmt.Errorf("status %d%s", r.status, rateLimitNote(r.header))
	if transientStatus(r.status) {
		return e.unavailable(urlPath, cause)
	}
	return e.failed(urlPath, cause)
}

// transientStatus reports whether an HTTP status says "try again later".
func transientStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// failed wraps cause (for the logs) with onboarding.ErrRegistryFailed (for the API).
func (e *endpoint) failed(urlPath string, cause error) error {
	return fmt.Errorf("%s GET %s: %w: %w", e.label, urlPath, cause, onboarding.ErrRegistryFailed)
}

// unavailable wraps cause (for the logs) with onboarding.ErrRegistryUnavailable.
func (e *endpoint) unavailable(urlPath string, cause error) error {
	return fmt.Errorf("%s GET %s: %w: %w", e.label, urlPath, cause, onboarding.ErrRegistryUnavailable(e.name))
}

// rateLimitNote describes the Companies House rate-limit headers of an
// answer, for the logs ("" when there are none). The Document API spells the
// remaining count X-Ratelimit-Remaining.
func rateLimitNote(h http.Header) string {
	limit := h.Get("X-Ratelimit-Limit")
	if limit == "" {
		return ""
	}
	remain := h.Get("X-Ratelimit-Remain")
	if remain == "" {
		remain = h.Get("X-Ratelimit-Remaining")
	}
	return fmt.Sprintf(" (rate limit %s per %s, %s left, resets at %s)",
		limit, h.Get("X-Ratelimit-Window"), remain, h.Get("X-Ratelimit-Reset"))
}
