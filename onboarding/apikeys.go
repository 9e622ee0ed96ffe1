package onboarding

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Key format: svc_{client_id}.{secret}.
const (
	keyPrefix       = "svc_"
	clientIDLength  = 16 // lower-case alphanumerics: about 82 bits
	secretLength    = 43 // alphanumerics: about 256 bits
	clientIDAlpha   = "abcdefghijklmnopqrstuvwxyz0123456789"
	lastUsedEvery   = time.Minute // LastUsedAt is written at most this often per key
	maxKeyNameRunes = 100
)

// KeySpec describes an API key to create.
type KeySpec struct {
	OrgID     string
	Name      string
	Scopes    []string      // empty: every scope
	ExpiresIn time.Duration // 0: never expires
}

// CreateAPIKey creates a key and returns it in full, the only time the
// secret exists outside the caller's hands, with its stored record.
func (s *Service) CreateAPIKey(ctx context.Context, spec KeySpec) (string, *APIKey, error) {
	if _, ok := s.orgs[spec.OrgID]; !ok {
		return "", nil, Errorf(KindInvalid, "unknown organization '%s'", spec.OrgID)
	}
	name := strings.TrimSpace(spec.Name)
	if name == "" {
		return "", nil, Errorf(KindInvalid, "a key name is required")
	}
	if hasControl(name, false) {
		// Names are printed in tables and logs, where a line break or an
		// escape sequence would forge lines.
		return "", nil, Errorf(KindInvalid, "a key name must not contain control characters such as tabs or line breaks")
	}
	if len([]rune(name)) > maxKeyNameRunes {
		return "", nil, Errorf(KindInvalid, "a key name is at most %d characters", maxKeyNameRunes)
	}
	scopes, all, err := parseScopes(spec.Scopes)
	if err != nil {
		return "", nil, err
	}
	if spec.ExpiresIn < 0 {
		return "", nil, Errorf(KindInvalid, "the expiry must be a positive duration")
	}
	clientID, err := randomString(s.random, clientIDLength, clientIDAlpha)
	if err != nil {
		return "", nil, err
	}
	secret, err := randomString(s.random, secretLength, alphanumeric)
	if err != nil {
		return "", nil, err
	}
	now := s.now().UTC()
	k := &APIKey{
		ClientID:    clientID,
		OrgID:       spec.OrgID,
		Name:        name,
		AllScopes:   all,
		Scopes:      scopes,
		SecretHash:  hashSecret(secret),
		CreatedAt:   now,
		Environment: s.environment,
	}
	if spec.ExpiresIn > 0 {
		exp := now.Add(spec.ExpiresIn)
		k.ExpiresAt = &exp
	}
	if err := s.store.CreateAPIKey(ctx, k); err != nil {
		return "", nil, fmt.Errorf("create api key: %w", err)
	}
	s.log.Info("api key created", "client_id", clientID, "org", spec.OrgID, "name", name)
	return keyPrefix + clientID + "." + secret, k, nil
}

// parseScopes validates scope names; none means all (and all is true).
func parseScopes(names []string) (scopes []Scope, all bool, err error) {
	if len(names) == 0 {
		return AllScopes(), true, nil
	}
	var out []Scope
	for _, n := range names {
		for _, part := range strings.Split(n, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			sc := Scope(part)
			if all := AllScopes(); !slices.Contains(all, sc) {
				valid := make([]string, len(all))
				for i, a := range all {
					valid[i] = string(a)
				}
				return nil, false, Errorf(KindInvalid, "unknown scope '%s' (valid scopes: %s)", part, strings.Join(valid, ", "))
			}
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	if len(out) == 0 {
		return AllScopes(), true, nil
	}
	return out, false, nil
}

// Authenticate returns the active key that token (the bearer value of the
// Authorization header) names. Malformed, unknown, revoked and expired keys,
// and keys of an organization no longer configured, all give ErrInvalidAPIKey.
func (s *Service) Authenticate(ctx context.Context, token string) (*APIKey, error) {
	rest, ok := strings.CutPrefix(token, keyPrefix)
	if !ok {
		return nil, ErrInvalidAPIKey
	}
	clientID, secret, ok := strings.Cut(rest, ".")
	if !ok || len(clientID) != clientIDLength || secret == "" {
		return nil, ErrInvalidAPIKey
	}
	k, err := s.apiKey(ctx, clientID)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrInvalidAPIKey
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if subtle.ConstantTimeCompare(hashSecret(secret), k.SecretHash) != 1 {
		return nil, ErrInvalidAPIKey
	}
	now := s.now()
	if k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return nil, ErrInvalidAPIKey
	}
	if k.Environment != "" && s.environment != "" && k.Environment != s.environment {
		// A sandbox key (the bootstrap key printed to a terminal, say)
		// does not open a data directory that went to production.
		return nil, ErrInvalidAPIKey
	}
	if _, ok := s.orgs[k.OrgID]; !ok {
		return nil, ErrInvalidAPIKey
	}
	s.touch(ctx, k, now)
	return k, nil
}

// apiKey returns the key with clientID from the cache or the store. The
// returned key is shared: callers must not modify it.
func (s *Service) apiKey(ctx context.Context, clientID string) (*APIKey, error) {
	if k, ok := s.keys.Load(clientID); ok {
		return k.(*APIKey), nil
	}
	k, err := s.store.APIKey(ctx, clientID)
	if err != nil {
		return nil, err
	}
	// LoadOrStore, not Store: a fill must never replace the entry a
	// concurrent revoke wrote after this read.
	cached, _ := s.keys.LoadOrStore(clientID, k)
	return cached.(*APIKey), nil
}

// touch records that k was used, at most once per lastUsedEvery, so that a
// busy key does not turn every request into a durable write.
func (s *Service) touch(ctx context.Context, k *APIKey, now time.Time) {
	s.usedMu.Lock()
	last, seen := s.used[k.ClientID]
	due := !seen || now.Sub(last) >= lastUsedEvery
	if due {
		s.used[k.ClientID] = now
	}
	s.usedMu.Unlock()
	if !due {
		return
	}
	at := now.UTC()
	_, err := s.store.UpdateAPIKey(ctx, k.ClientID, func(stored *APIKey) error {
		stored.LastUsedAt = &at
		return nil
	})
	if err != nil && !errors.Is(err, ErrInsufficientStorage) { // the store logs a full disk once
		s.log.Warn("record api key use", "client_id", k.ClientID, "err", err)
	}
}

// Authorize returns ErrMissingScopes unless k carries every scope in need.
func Authorize(k *APIKey, need ...Scope) error {
	var missing []Scope
	for _, sc := range need {
		if !k.Has(sc) {
			missing = append(missing, sc)
		}
	}
	if len(missing) > 0 {
		return ErrMissingScopes(missing...)
	}
	return nil
}

// APIKeys lists the keys of orgID, or of every organization when orgID is
// empty, oldest first.
func (s *Service) APIKeys(ctx context.Context, orgID string) ([]*APIKey, error) {
	if orgID != "" {
		if _, ok := s.orgs[orgID]; !ok {
			return nil, Errorf(KindInvalid, "unknown organization '%s'", orgID)
		}
	}
	keys, err := s.store.APIKeys(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey revokes the key with clientID; it takes effect on the next
// request. Revoking a revoked key changes nothing.
func (s *Service) RevokeAPIKey(ctx context.Context, clientID string) (*APIKey, error) {
	now := s.now().UTC()
	k, err := s.store.UpdateAPIKey(ctx, clientID, func(k *APIKey) error {
		if k.RevokedAt == nil {
			k.RevokedAt = &now
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, "API key '%s' not found", clientID)
	}
	if err != nil {
		return nil, fmt.Errorf("revoke api key: %w", err)
	}
	s.keys.Store(clientID, k)
	s.log.Info("api key revoked", "client_id", clientID, "org", k.OrgID)
	return k, nil
}
