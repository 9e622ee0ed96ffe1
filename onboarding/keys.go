package onboarding

import "time"

// Scope is a permission an API key carries (spec §5).
type Scope string

// The scopes.
const (
	ScopeApplicationsCreate Scope = "applications:create"
	ScopeApplicationsRead   Scope = "applications:read"
	ScopeApplicationsWrite  Scope = "applications:write"
	ScopeRFICreate          Scope = "rfi:create"
)

// AllScopes returns every scope: what a key created without --scope gets.
func AllScopes() []Scope {
	return []Scope{ScopeApplicationsCreate, ScopeApplicationsRead, ScopeApplicationsWrite, ScopeRFICreate}
}

// APIKey is a partner's credential. Only a SHA-256 of the secret is kept.
type APIKey struct {
	ClientID   string // public identifier: the part of the key before the dot
	OrgID      string
	Name       string
	Scopes     []Scope
	SecretHash []byte // SHA-256 of the secret
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Has reports whether the key carries scope s.
func (k *APIKey) Has(s Scope) bool {
	for _, g := range k.Scopes {
		if g == s {
			return true
		}
	}
	return false
}
