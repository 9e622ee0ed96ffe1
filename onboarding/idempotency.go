package onboarding

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// IdempotencyTTL is how long a response is replayed for its idempotency key
// (DESIGN §5.9).
const IdempotencyTTL = 24 * time.Hour

const maxIdempotencyKey = 255

// Idempotency errors (DESIGN §5.9).
var (
	ErrIdempotencyKeyInvalid = &Error{Kind: KindInvalid, Message: "Idempotency-Key must be 1 to 255 printable ASCII characters"}
	ErrIdempotencyInProgress = &Error{Kind: KindConflict, Message: "A request with this Idempotency-Key is still being processed; retry after it completes"}
	ErrIdempotencyMismatch   = &Error{Kind: KindUnprocessable, Message: "This Idempotency-Key was already used with a different request"}
)

// IdempotentResponse is a saved response, replayed for a retried request.
type IdempotentResponse struct {
	Fingerprint []byte // SHA-256 of method, path and body of the first request
	Status      int
	Body        []byte
	CreatedAt   time.Time
}

// BeginIdempotent starts a request that carries an Idempotency-Key. When a
// response was saved for the same key and request, it returns it to replay.
// Otherwise it returns a finish function that the caller must call exactly
// once when the request is over: with the response to save (a 2xx), or with
// status 0 to save nothing, so that a failed request can be retried.
func (s *Service) BeginIdempotent(ctx context.Context, k *APIKey, key string, fingerprint []byte) (*IdempotentResponse, func(status int, body []byte), error) {
	key = strings.TrimSpace(key)
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' { // sf-string form
		key = key[1 : len(key)-1]
	}
	if !validIdempotencyKey(key) {
		return nil, nil, ErrIdempotencyKeyInvalid
	}
	slot := k.ClientID + "\x00" + key
	s.inflightMu.Lock()
	if s.inflight[slot] {
		s.inflightMu.Unlock()
		return nil, nil, ErrIdempotencyInProgress
	}
	s.inflight[slot] = true
	s.inflightMu.Unlock()
	release := func() {
		s.inflightMu.Lock()
		delete(s.inflight, slot)
		s.inflightMu.Unlock()
	}

	saved, err := s.store.IdempotentResponse(ctx, k.ClientID, key)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		release()
		return nil, nil, fmt.Errorf("idempotency look-up: %w", err)
	case s.now().Sub(saved.CreatedAt) < IdempotencyTTL:
		release()
		if !bytes.Equal(saved.Fingerprint, fingerprint) {
			return nil, nil, ErrIdempotencyMismatch
		}
		return saved, nil, nil
	}
	finish := func(status int, body []byte) {
		defer release()
		if status < 200 || status > 299 {
			return
		}
		r := &IdempotentResponse{Fingerprint: fingerprint, Status: status, Body: body, CreatedAt: s.now().UTC()}
		if err := s.store.SaveIdempotentResponse(context.WithoutCancel(ctx), k.ClientID, key, r, IdempotencyTTL); err != nil {
			s.log.Error("save idempotent response", "client_id", k.ClientID, "err", err)
		}
	}
	return nil, finish, nil
}

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
