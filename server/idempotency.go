package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// headerIdempotencyKey is the request header that makes a create safe to
// retry (docs/api.md).
const headerIdempotencyKey = "Idempotency-Key"

// idempotencyTTL is how long a response is replayed for its key.
const idempotencyTTL = 24 * time.Hour

// maxIdempotencyKey is the longest Idempotency-Key accepted.
const maxIdempotencyKey = 255

// Idempotency errors.
var (
	errIdempotencyKeyInvalid = &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Idempotency-Key must be 1 to 255 printable ASCII characters"}
	errIdempotencyInProgress = &onboarding.Error{Kind: onboarding.KindConflict, Message: "A request with this Idempotency-Key is still being processed; retry after it completes"}
	errIdempotencyMismatch   = &onboarding.Error{Kind: onboarding.KindUnprocessable, Message: "This Idempotency-Key was already used with a different request"}
)

// errNoResponseStore is the cause, for the log, of a request with an
// Idempotency-Key to a server built without a ResponseStore.
var errNoResponseStore = errors.New("server: no ResponseStore to keep responses for Idempotency-Key")

// ResponseStore keeps the responses saved for idempotency keys, as records
// the server encodes; storage.Store implements it.
type ResponseStore interface {
	// SavedResponse returns the record saved for key of the API key
	// clientID, or onboarding.ErrNotFound.
	SavedResponse(ctx context.Context, clientID, key string) (json.RawMessage, error)
	// SaveResponse starts saving record for key and returns at once; the
	// store may forget the record after ttl. It calls done exactly once,
	// when the record is on disk (nil) or could not be saved, perhaps
	// before SaveResponse returns.
	SaveResponse(clientID, key string, record json.RawMessage, ttl time.Duration, done func(error))
}

// savedResponse is a response saved to replay for a retried request.
type savedResponse struct {
	Fingerprint []byte // SHA-256 of method, path and body of the first request
	Status      int
	// Body is the response body, sealed with AES-256-GCM under a key derived
	// from the full API key that sent the request (see sealBody). The API
	// key is never stored, so saved bodies (which hold personal data and
	// pre-auth codes) can be read back only by a retry with the same key.
	Body      []byte
	CreatedAt time.Time
}

// replays runs idempotent requests: it tracks the ones in flight and saves
// and replays their responses.
type replays struct {
	store ResponseStore
	now   func() time.Time
	log   *slog.Logger

	mu       sync.Mutex
	inflight map[string]*flight // by API key client id + idempotency key
}

// flight is a request with an Idempotency-Key that has not finished: it
// runs, or it has answered and its response is being saved.
type flight struct {
	// saving is nil while the request runs, then closed once its
	// response is saved (or could not be).
	saving chan struct{}
}

// idempotent makes a POST that carries an Idempotency-Key safe to retry: the
// same key and body within 24 hours replays the first response with
// Idempotent-Replayed: true. Keys belong to the API key that sent them.
func (s *Server) idempotent(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		keys := c.Request().Header.Values(headerIdempotencyKey)
		if len(keys) == 0 {
			return next(c)
		}
		if len(keys) > 1 {
			// Two keys: which one a proxy or a retry library kept is
			// anyone's guess.
			return errIdempotencyKeyInvalid
		}
		key := keys[0] // an empty one is refused as invalid (begin)
		body, err := s.readBody(c)
		if err != nil {
			return err
		}
		c.Request().Body = io.NopCloser(bytes.NewReader(body))
		h := sha256.New()
		h.Write([]byte(c.Request().Method + " " + c.Request().URL.Path + "\n"))
		h.Write(body)
		token, _ := c.Get(ctxToken).(string)
		saved, finish, err := s.replays.begin(c.Request().Context(), apiKey(c).ClientID, token, key, h.Sum(nil))
		if err != nil {
			return err
		}
		if saved != nil {
			c.Response().Header().Set("Idempotent-Replayed", "true")
			return web.WriteRawJSON(c, saved.Status, saved.Body)
		}
		rec := &teeWriter{ResponseWriter: c.Response().Writer}
		c.Response().Writer = rec
		status := 0 // save nothing unless the handler returns normally
		defer func() { finish(status, rec.body.Bytes()) }()
		if err := next(c); err != nil {
			return err
		}
		status = c.Response().Status
		return nil
	}
}

// begin starts a request of the API key clientID that carries an
// Idempotency-Key; token is the full API key the request authenticated
// with. When a response was saved for the same key and request, it returns
// it, opened, to replay. Otherwise it returns a finish function that the
// caller must call exactly once when the request is over: with the response
// to save (a 2xx), or with status 0 to save nothing, so that a failed
// request can be retried.
func (r *replays) begin(ctx context.Context, clientID, token, key string, fingerprint []byte) (*savedResponse, func(status int, body []byte), error) {
	key = strings.TrimSpace(key)
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' { // sf-string form
		key = key[1 : len(key)-1]
	}
	if !validIdempotencyKey(key) {
		return nil, nil, errIdempotencyKeyInvalid
	}
	if r.store == nil {
		return nil, nil, errNoResponseStore
	}
	slot := clientID + "\x00" + key
	f, err := r.claim(ctx, slot)
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		r.mu.Lock()
		delete(r.inflight, slot)
		r.mu.Unlock()
	}

	saved, err := r.load(ctx, clientID, key)
	switch {
	case errors.Is(err, onboarding.ErrNotFound):
	case err != nil:
		release()
		return nil, nil, fmt.Errorf("idempotency look-up: %w", err)
	case r.now().Sub(saved.CreatedAt) < idempotencyTTL:
		release()
		if !bytes.Equal(saved.Fingerprint, fingerprint) {
			return nil, nil, errIdempotencyMismatch
		}
		body, err := openBody(token, slot, saved.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("open saved response: %w", err)
		}
		saved.Body = body
		return saved, nil, nil
	}
	finish := func(status int, body []byte) {
		if status < 200 || status > 299 {
			release()
			return
		}
		sealed, err := sealBody(token, slot, body)
		if err != nil {
			r.log.Error("seal idempotent response", "client_id", clientID, "err", err)
			release()
			return
		}
		rec, err := json.Marshal(&savedResponse{Fingerprint: fingerprint, Status: status, Body: sealed, CreatedAt: r.now().UTC()})
		if err != nil {
			r.log.Error("save idempotent response", "client_id", clientID, "err", err)
			release()
			return
		}
		// The response goes to the client without waiting for this commit:
		// the request's own commit is on disk already, and a client that
		// got its answer does not retry. Until the record is saved, the slot
		// stays taken, and a retry waits for it (claim) to replay it.
		saving := make(chan struct{})
		r.mu.Lock()
		f.saving = saving
		r.mu.Unlock()
		r.store.SaveResponse(clientID, key, rec, idempotencyTTL, func(err error) {
			if err != nil {
				r.log.Error("save idempotent response", "client_id", clientID, "err", err)
			}
			release()
			close(saving)
		})
	}
	return nil, finish, nil
}

// claim takes slot for a request that is about to run. A request with the
// same slot that is still running makes it a 409; one that has answered
// and is saving its response is waited for, so that the caller then finds
// the saved response.
func (r *replays) claim(ctx context.Context, slot string) (*flight, error) {
	for {
		r.mu.Lock()
		other, busy := r.inflight[slot]
		if !busy {
			f := &flight{}
			r.inflight[slot] = f
			r.mu.Unlock()
			return f, nil
		}
		saving := other.saving
		r.mu.Unlock()
		if saving == nil {
			return nil, errIdempotencyInProgress
		}
		select {
		case <-saving:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// load reads the response saved for key of the API key clientID.
func (r *replays) load(ctx context.Context, clientID, key string) (*savedResponse, error) {
	rec, err := r.store.SavedResponse(ctx, clientID, key)
	if err != nil {
		return nil, err
	}
	var saved savedResponse
	if err := json.Unmarshal(rec, &saved); err != nil {
		return nil, fmt.Errorf("decode saved response: %w", err)
	}
	return &saved, nil
}

// validIdempotencyKey reports whether key is 1 to 255 printable ASCII
// characters.
func validIdempotencyKey(key string) bool {
	if key == "" || len(key) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// teeWriter keeps a copy of what a handler writes.
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}
