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

// maxJSONBody caps a registry JSON answer; a company profile is a few KiB.
const maxJSONBody = 1 << 20

// endpoint is the HTTP plumbing one registry adapter owns: its base URL, its
// client (whose transport is the only thing fixtures and live mode swap) and
// how it authenticates.
type endpoint struct {
	label  string // for wrapped error text, e.g. "companies house"
	name   string // the registry's name in API messages, e.g. "UK company registry"
	base   *url.URL
	client *http.Client
	auth   func(*http.Request)
}

// response is a registry answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// newHTTPClient returns a client that never follows redirects (a Document API
// 302 is read by the adapter itself) and gives up on a request after timeout.
func newHTTPClient(rt http.RoundTripper, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: rt,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// get sends GET base+urlPath?query with the adapter's credentials and reads
// the answer. Transport failures come back already classified: a request the
// fixtures have no recording for is onboarding.ErrRegistryFailed; a timeout,
// refused connection or cancelled context is ErrRegistryUnavailable.
func (e *endpoint) get(ctx context.Context, urlPath string, query url.Values, accept string) (*response, error) {
	u := *e.base
	u.Path = strings.TrimSuffix(e.base.Path, "/") + urlPath
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, e.failed(urlPath, err)
	}
	req.Header.Set("Accept", accept)
	e.auth(req)
	resp, err := e.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrNoRecording) {
			return nil, e.failed(urlPath, err)
		}
		return nil, e.unavailable(urlPath, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBody+1))
	if err != nil {
		return nil, e.unavailable(urlPath, err)
	}
	if len(body) > maxJSONBody {
		return nil, e.failed(urlPath, fmt.Errorf("answer over %d bytes", maxJSONBody))
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// unexpectedStatus classifies an answer the adapter has no meaning for:
// throttling (429) and maintenance (503) are ErrRegistryUnavailable, anything
// else ErrRegistryFailed.
func (e *endpoint) unexpectedStatus(urlPath string, r *response) error {
	cause := fmt.Errorf("status %d%s", r.status, rateLimitNote(r.header))
	if r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable {
		return e.unavailable(urlPath, cause)
	}
	return e.failed(urlPath, cause)
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
