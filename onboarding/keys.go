package onboarding

import "time"

// Scope is a permission an API key carries.
type Scope string

// The scopes.
const (
	ScopeApplicationsCreate Scope = "applications:create"
	ScopeApplicationsRead   Scope = "applications:read"
	ScopeApplicationsWrite  Scope = "applications:write"
	ScopeRFICreate          Scope = "rfi:create"
	ScopeEventsRead         Scope = "events:read"
	ScopeRFIRead            Scope = "rfi:read"
)

// AllScopes returns every scope this version knows.
func AllScopes() []Scope {
	return []Scope{ScopeApplicationsCreate, ScopeApplicationsRead, ScopeApplicationsWrite, ScopeRFICreate, ScopeEventsRead, ScopeRFIRead}
}

// APIKey is a partner's credential. Only a SHA-256 of the secret is kept.
type APIKey struct {
	ClientID string // public identifier: the part of the key before the dot
	OrgID    string
	Name     string
	// AllScopes marks a key created without a scope list: it carries every
	// scope, including scopes later versions add. Scopes then lists what
	// this version knows, for display.
	AllScopes  bool
	Scopes     []Scope
	SecretHash []byte // SHA-256 of the secret
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// Environment is the one the key was created in ("sandbox" or
	// "production"), where alone it works; empty for keys made before
	// keys had one, which work in either.
	Environment string `json:",omitempty"`
}

// Has reports whether the key carries scope s.
func (k *APIKey) Has(s Scope) bool {
	if k.AllScopes {
		return true
	}
	for _, g := range k.Scopes {
		if g == s {
			return true
		}
	}
	return false
}

// ScopeList is the scopes k carries as this version names them.
func (k *APIKey) ScopeList() []Scope {
	if k.AllScopes {
		return AllScopes()
	}
	return k.Scopes
}
