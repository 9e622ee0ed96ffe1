package onboarding

import (
	"context"
	"sync/atomic"
	"time"
)

// Background work gives way to requests, so that webhook delivery and the
// registry documents job do not take the API's throughput while it is busy.
// The server notes every request it serves (RequestStarted, RequestEnded);
// before each application, the registry documents job waits until the API
// is idle, that is until no request has been in flight for foregroundQuiet,
// or for at most its yield (Options.RegistryDocumentsYield). A moment with
// no request in flight is not enough: clients whose writes share one
// group commit all get their answers at once, and are all between
// requests together many times a second. Beside an API that is never idle
// the job therefore fetches about one application per yield, still more
// than a live registry's rate limit lets it fetch; when the API has gaps it
// runs at full speed.
//
// Webhook delivery gives way too, before each claim of deliveries (up to
// WebhookWorkers of them), for at most Options.WebhooksYield: an attempt
// (claim, signature, POST, record) costs about as much CPU as a create.
// Giving way, it delivers at most a claim per lull or yield while the API
// is saturated, and at full speed as soon as the API has gaps, so events
// wait only while requests keep the server busy.

// DefaultWebhooksYield is how long, at most, the webhook deliverer waits
// for the API to be idle before each claim.
const DefaultWebhooksYield = 100 * time.Millisecond

// DefaultRegistryDocumentsYield is how long, at most, the registry
// documents job waits for the API to be idle before each application.
const DefaultRegistryDocumentsYield = 100 * time.Millisecond

// foregroundQuiet is how long the API must have had no request in flight
// to be idle.
const foregroundQuiet = 20 * time.Millisecond

// foreground counts the requests being served.
type foreground struct {
	serving atomic.Int64
	started atomic.Uint64 // every request RequestStarted noted
	// last is when a request last started or ended, in Unix nanoseconds.
	last atomic.Int64
}

// RequestStarted notes that a request is being served, until
// RequestEnded: background work gives way to it.
func (s *Service) RequestStarted() {
	s.fg.serving.Add(1)
	s.fg.started.Add(1)
	s.fg.last.Store(time.Now().UnixNano())
}

// Requests reports how many requests are being served now and how many
// were started since the Service was made: two readings with the same
// started count and none being served at the second saw an idle server.
func (s *Service) Requests() (serving int64, started uint64) {
	return s.fg.serving.Load(), s.fg.started.Load()
}

// RequestEnded notes that a request RequestStarted noted has been served.
func (s *Service) RequestEnded() {
	s.fg.last.Store(time.Now().UnixNano())
	s.fg.serving.Add(-1)
}

// giveWay returns once the API is idle (no request in flight for
// foregroundQuiet), once d has passed, or once ctx has ended, whichever
// comes first; at once when d is not positive. It looks every
// foregroundQuiet at most.
func (s *Service) giveWay(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	deadline := time.Now().Add(d)
	for {
		now := time.Now()
		quietFor := now.Sub(time.Unix(0, s.fg.last.Load()))
		if s.fg.serving.Load() == 0 && quietFor >= foregroundQuiet {
			return
		}
		wait := min(deadline.Sub(now), foregroundQuiet)
		if s.fg.serving.Load() == 0 {
			wait = min(wait, foregroundQuiet-quietFor)
		}
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
