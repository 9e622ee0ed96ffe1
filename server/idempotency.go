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
const idempotencyTTL = onboarding.IdempotencyTTL

// Echo context keys of a request with an Idempotency-Key: the key as the
// use-cases take it, and the outcome of the first request to answer
// instead of doing the work again.
const (
	ctxIdempotency = "onboard.idempotency"
	ctxReplay      = "onboard.replay"
)

// idempotency returns the Idempotency-Key of the request, for the
// use-case to commit its outcome under, or nil.
func idempotency(c echo.Context) *onboarding.Idempotency {
	i, _ := c.Get(ctxIdempotency).(*onboarding.Idempotency)
	return i
}

// replay is what the first request with the same Idempotency-Key did,
// committed with its work, when its answer was not saved (the process
// died in between): the handler answers from it what the first request
// answered, and does nothing again.
type replay struct {
	outcome *onboarding.IdempotentOutcome
	code    string // the pre-auth code the first request issued, opened; "" if none
}

// replayOf returns the outcome the handler must answer from instead of
// doing the work, or nil when it is to do the work.
func replayOf(c echo.Context) *replay {
	r, _ := c.Get(ctxReplay).(*replay)
	return r
}

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
// the server encodes; storage.Store implements it. Under the same key, the
// store's writes of records commit the outcome of the request that makes
// them (onboarding.Changes.Idempotent), which a saved response replaces.
type ResponseStore interface {
	// SavedResponse returns the record saved for key of the API key
	// clientID (a saved response, or the outcome committed with the
	// request's work), or onboarding.ErrNotFound.
	SavedResponse(ctx context.Context, clientID, key string) (json.RawMessage, error)
	// SaveResponse starts saving record for key and returns at once; the
	// store may forget the record after ttl. It calls done exactly once,
	// when the record is on disk (nil) or could not be saved, perhaps
	// before SaveResponse returns.
	SaveResponse(clientID, key string, record json.RawMessage, ttl time.Duration, done func(error))
}

// savedResponse is a response saved to replay for a retried request. The
// record under the key before it is saved is the request's outcome
// (onboarding.IdempotentOutcome), with the same Fingerprint and CreatedAt
// and no Status.
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
		a, err := s.replays.begin(c.Request().Context(), apiKey(c).ClientID, token, key, h.Sum(nil))
		if err != nil {
			return err
		}
		if a.saved != nil {
			c.Response().Header().Set("Idempotent-Replayed", "true")
			return web.WriteRawJSON(c, a.saved.Status, a.saved.Body)
		}
		if a.replay != nil {
			// The handler answers from the outcome; the answer, marked
			// replayed unless it is an error, is then saved as any other.
			c.Set(ctxReplay, a.replay)
			res := c.Response()
			res.Before(func() {
				if res.Status >= 200 && res.Status <= 299 {
					res.Header().Set("Idempotent-Replayed", "true")
				}
			})
		} else {
			c.Set(ctxIdempotency, a.idem)
		}
		finish := a.finish
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

// admission is how a request with an Idempotency-Key goes on: with a
// saved response to replay, or with finish to call once it is over, and
// then either with the outcome of the first request to answer from
// (replay) or with the key for the use-case to commit its work's outcome
// under (idem).
type admission struct {
	saved  *savedResponse
	replay *replay
	idem   *onboarding.Idempotency
	finish func(status int, body []byte)
}

// begin starts a request of the API key clientID that carries an
// Idempotency-Key; token is the full API key the request authenticated
// with. When a response was saved for the same key and request, it returns
// it, opened, to replay. When only the outcome of the same request was
// committed (its answer was lost with the process), it returns the
// outcome, to answer from. Otherwise nothing was committed for the key,
// and it returns the key for the use-case. Except with a saved response,
// the caller must call finish exactly once when the request is over: with
// the response to save (a 2xx), or with status 0 to save nothing, so that
// a failed request can be retried.
func (r *replays) begin(ctx context.Context, clientID, token, key string, fingerprint []byte) (admission, error) {
	key = strings.TrimSpace(key)
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' { // sf-string form
		key = key[1 : len(key)-1]
	}
	if !validIdempotencyKey(key) {
		return admission{}, errIdempotencyKeyInvalid
	}
	if r.store == nil {
		return admission{}, errNoResponseStore
	}
	slot := clientID + "\x00" + key
	f, err := r.claim(ctx, slot)
	if err != nil {
		return admission{}, err
	}
	release := func() {
		r.mu.Lock()
		delete(r.inflight, slot)
		r.mu.Unlock()
	}

	saved, outcome, err := r.load(ctx, clientID, key)
	var rep *replay
	switch {
	case errors.Is(err, onboarding.ErrNotFound):
	case err != nil:
		release()
		return admission{}, fmt.Errorf("idempotency look-up: %w", err)
	case r.now().Sub(saved.CreatedAt) >= idempotencyTTL:
	case !bytes.Equal(saved.Fingerprint, fingerprint):
		release()
		return admission{}, errIdempotencyMismatch
	case outcome != nil:
		rep = &replay{outcome: outcome}
		if outcome.SealedCode != nil {
			code, err := openBody(token, slot, outcome.SealedCode)
			if err != nil {
				release()
				return admission{}, fmt.Errorf("open saved outcome: %w", err)
			}
			rep.code = string(code)
		}
	default:
		release()
		body, err := openBody(token, slot, saved.Body)
		if err != nil {
			return admission{}, fmt.Errorf("open saved response: %w", err)
		}
		saved.Body = body
		return admission{saved: saved}, nil
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
	if rep != nil {
		return admission{replay: rep, finish: finish}, nil
	}
	idem := &onboarding.Idempotency{
		ClientID: clientID, Key: key, Fingerprint: fingerprint, At: r.now().UTC(),
		Seal: func(secret []byte) ([]byte, error) { return sealBody(token, slot, secret) },
	}
	return admission{idem: idem, finish: finish}, nil
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

// load reads the record saved for key of the API key clientID: a saved
// response, or the outcome committed with the request's work (then
// outcome is set too, and saved holds its Fingerprint and CreatedAt).
func (r *replays) load(ctx context.Context, clientID, key string) (*savedResponse, *onboarding.IdempotentOutcome, error) {
	rec, err := r.store.SavedResponse(ctx, clientID, key)
	if err != nil {
		return nil, nil, err
	}
	return decodeSaved(rec)
}

// decodeSaved decodes a record saved for an idempotency key: a saved
// response, or an outcome (see load).
func decodeSaved(rec json.RawMessage) (*savedResponse, *onboarding.IdempotentOutcome, error) {
	var saved savedResponse
	if err := json.Unmarshal(rec, &saved); err != nil {
		return nil, nil, fmt.Errorf("decode saved response: %w", err)
	}
	if saved.Status != 0 {
		return &saved, nil, nil
	}
	var o onboarding.IdempotentOutcome
	if err := json.Unmarshal(rec, &o); err != nil {
		return nil, nil, fmt.Errorf("decode saved outcome: %w", err)
	}
	return &saved, &o, nil
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
