package onboarding

import (
	"context"
	"sync/atomic"
	"time"
)

// Background work gives way to requests (issue 15: the registry documents
// job must not cut create's throughput by more than 10% while it runs).
// The server notes every request it serves (RequestStarted, RequestEnded);
// before each application, the registry documents job waits while any
// request is being served, until none is or for at most its yield
// (Options.RegistryDocumentsYield). Beside an API that is never idle it
// therefore fetches about one application per yield: with the default of
// 100 ms, about 8 a second in the sandbox's fixtures, which is still more
// than a live registry's rate limit lets it fetch (Companies House allows
// 600 requests in 5 minutes, and an application takes one request for its
// filing history and two for each document). Between requests it runs at
// full speed.
//
// Webhook delivery does not give way: a partner waits for its events, and
// its work per event is small.

// DefaultRegistryDocumentsYield is how long, at most, the registry
// documents job waits for the API to be idle before each application.
const DefaultRegistryDocumentsYield = 100 * time.Millisecond

// foreground counts the requests being served.
type foreground struct {
	serving atomic.Int64
	started atomic.Uint64 // every request RequestStarted noted
	// idle holds a value once serving has dropped to zero, for the one
	// job that waits on it (giveWay).
	idle chan struct{}
}

// RequestStarted notes that a request is being served, until
// RequestEnded: background work gives way to it.
func (s *Service) RequestStarted() {
	s.fg.serving.Add(1)
	s.fg.started.Add(1)
}

// Requests reports how many requests are being served now and how many
// were started since the Service was made: two readings with the same
// started count and none being served at the second saw an idle server.
func (s *Service) Requests() (serving int64, started uint64) {
	return s.fg.serving.Load(), s.fg.started.Load()
}

// RequestEnded notes that a request RequestStarted noted has been served.
func (s *Service) RequestEnded() {
	if s.fg.serving.Add(-1) == 0 {
		select {
		case s.fg.idle <- struct{}{}:
		default: // a wake-up is already waiting
		}
	}
}

// giveWay returns once no request is being served, once d has passed, or
// once ctx has ended, whichever comes first; at once when d is not
// positive. It is meant for one caller at a time.
func (s *Service) giveWay(ctx context.Context, d time.Duration) {
	if d <= 0 || s.fg.serving.Load() == 0 {
		return
	}
	select {
	case <-s.fg.idle: // left by a request that ended before this wait
	default:
	}
	if s.fg.serving.Load() == 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-s.fg.idle:
	}
}
