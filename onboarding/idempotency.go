package onboarding

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
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
	// Body is the response body, sealed with AES-256-GCM under a key derived
	// from the full API key that sent the request. The API key is never
	// stored, so saved bodies (which hold personal data and pre-auth codes)
	// can be read back only by a retry that presents the same key.
	Body      []byte
	CreatedAt time.Time
}

// BeginIdempotent starts a request that carries an Idempotency-Key; token is
// the full API key the request authenticated with. When a response was saved
// for the same key and request, it returns it, opened, to replay.
// Otherwise it returns a finish function that the caller must call exactly
// once when the request is over: with the response to save (a 2xx), or with
// status 0 to save nothing, so that a failed request can be retried.
func (s *Service) BeginIdempotent(ctx context.Context, k *APIKey, token, key string, fingerprint []byte) (*IdempotentResponse, func(status int, body []byte), error) {
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
		body, err := openBody(token, slot, saved.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("open saved response: %w", err)
		}
		return &IdempotentResponse{Fingerprint: saved.Fingerprint, Status: saved.Status, Body: body, CreatedAt: saved.CreatedAt}, nil, nil
	}
	finish := func(status int, body []byte) {
		defer release()
		if status < 200 || status > 299 {
			return
		}
		sealed, err := sealBody(s.random, token, slot, body)
		if err != nil {
			s.log.Error("seal idempotent response", "client_id", k.ClientID, "err", err)
			return
		}
		r := &IdempotentResponse{Fingerprint: fingerprint, Status: status, Body: sealed, CreatedAt: s.now().UTC()}
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

// bodyCipher is AES-256-GCM under a key derived with HKDF-SHA256 from the
// full API key, bound to the API key's client id and the idempotency key.
func bodyCipher(token, slot string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, []byte(token), nil, "onboard idempotent response\x00"+slot, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func sealBody(random io.Reader, token, slot string, body []byte) ([]byte, error) {
	aead, err := bodyCipher(token, slot)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(body)+aead.Overhead())
	if _, err := io.ReadFull(random, nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, body, nil), nil
}

func openBody(token, slot string, sealed []byte) ([]byte, error) {
	aead, err := bodyCipher(token, slot)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed body too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
}
