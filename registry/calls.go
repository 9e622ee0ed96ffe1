package registry

import "net/http"

// Outcomes of a registry call, as Options.CountCall receives them.
const (
	// OutcomeOK is an answer with a 2xx or 3xx status (a Document API
	// redirect to the file's storage host).
	OutcomeOK = "ok"
	// OutcomeNotFound is a 404: the registry has no such company or filing.
	OutcomeNotFound = "not_found"
	// OutcomeThrottled is a 429 from the registry, or a request the
	// credential's rate limit held back until its deadline passed (none
	// was sent).
	OutcomeThrottled = "throttled"
	// OutcomeUnavailable is a 502, 503 or 504, or no answer at all: a
	// timeout, a refused or broken connection.
	OutcomeUnavailable = "unavailable"
	// OutcomeError is any other answer (400, 401, 500, ...) or a request
	// that could not be made; in fixtures mode, a request that has no
	// recording.
	OutcomeError = "error"
)

// Registry labels of Options.CountCall.
const (
	// RegistryUK is Companies House, the registry of GB.
	RegistryUK = "uk"
	// RegistryIE is the CRO, the registry of IE.
	RegistryIE = "ie"
)

// Outcomes lists every outcome CountCall may receive, so that a counter
// can start each series at zero.
func Outcomes() []string {
	return []string{OutcomeOK, OutcomeNotFound, OutcomeThrottled, OutcomeUnavailable, OutcomeError}
}

// Registries lists every registry label CountCall may receive.
func Registries() []string { return []string{RegistryUK, RegistryIE} }

// counted reports one call of e's registry with outcome to Options.CountCall.
func (e *endpoint) counted(outcome string) {
	if e.count != nil {
		e.count(e.registry, outcome)
	}
}

// statusOutcome is the outcome of a call the registry answered with status.
func statusOutcome(status int) string {
	switch {
	case status >= 200 && status < 400:
		return OutcomeOK
	case status == http.StatusNotFound:
		return OutcomeNotFound
	case status == http.StatusTooManyRequests:
		return OutcomeThrottled
	case transientStatus(status):
		return OutcomeUnavailable
	}
	return OutcomeError
}
