// Package admin is the admin socket's protocol: the operator commands
// (keys, docs force/skip, webhooks, apps verify-log and export, backup)
// served to the CLI while serve holds the data directory. It holds the
// request and answer types, the handler over the Service, and the client
// the CLI uses. The socket is a unix socket with mode 0600 in the data
// directory, so only the operator's account can reach it; its requests run
// the same Service code (Local) as the CLI's direct path.
package admin

import (
	"context"
	"time"

	"onboard/onboarding"
)

// Key is an API key as the admin socket and the CLI show it: never the
// secret or its hash.
type Key struct {
	ClientID   string     `json:"client_id"`
	OrgID      string     `json:"org"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// KeyOf converts a stored key into its admin view.
func KeyOf(k *onboarding.APIKey) Key {
	list := k.ScopeList()
	scopes := make([]string, len(list))
	for i, s := range list {
		scopes[i] = string(s)
	}
	return Key{
		ClientID: k.ClientID, OrgID: k.OrgID, Name: k.Name, Scopes: scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
}

// CreateKey is the body of a key creation on the admin socket.
type CreateKey struct {
	OrgID     string   `json:"org"`
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes" nullable:"true"` // null: none (a nil slice)
	ExpiresIn string   `json:"expires_in"`             // a Go duration; empty: never
}

// CreatedKey is the answer to a key creation: the full key, shown once.
type CreatedKey struct {
	Key    string `json:"key"`
	APIKey Key    `json:"api_key"`
}

// CreateKey creates a key; the answer holds the full key, shown once.
func (a Local) CreateKey(ctx context.Context, req CreateKey) (CreatedKey, error) {
	var expires time.Duration
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return CreatedKey{}, onboarding.Errorf(onboarding.KindInvalid, "invalid expiry '%s': use a positive duration such as 720h", req.ExpiresIn)
		}
		expires = d
	}
	key, k, err := a.Service.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: req.OrgID, Name: req.Name, Scopes: req.Scopes, ExpiresIn: expires})
	if err != nil {
		return CreatedKey{}, err
	}
	return CreatedKey{Key: key, APIKey: KeyOf(k)}, nil
}

// ListKeys lists the keys of org, or every key when org is empty.
func (a Local) ListKeys(ctx context.Context, org string) ([]Key, error) {
	keys, err := a.Service.APIKeys(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(keys))
	for i, k := range keys {
		out[i] = KeyOf(k)
	}
	return out, nil
}

// RevokeKey revokes the key with clientID.
func (a Local) RevokeKey(ctx context.Context, clientID string) (Key, error) {
	k, err := a.Service.RevokeAPIKey(ctx, clientID)
	if err != nil {
		return Key{}, err
	}
	return KeyOf(k), nil
}

// Actions of a document override on the admin socket.
const (
	ActionForce = "force"
	ActionSkip  = "skip"
)

// DocumentOverride is the body of a document force or skip on the
// admin socket (onboard docs force|skip).
type DocumentOverride struct {
	AppID    string `json:"app"`
	FieldID  string `json:"field"`
	PersonID string `json:"person,omitempty"`
	Reason   string `json:"reason"`
	Action   string `json:"action"` // ActionForce or ActionSkip
}

// Document is a document as an override left it.
type Document struct {
	FileID             string     `json:"file_id"`
	FileName           string     `json:"file_name,omitempty"`
	Status             string     `json:"status"`
	UserOverrideReason string     `json:"user_override_reason"`
	OverriddenAt       *time.Time `json:"overridden_at"`
}

// OverrideDocument forces or skips a document requirement.
func (a Local) OverrideDocument(ctx context.Context, req DocumentOverride) (Document, error) {
	var skip bool
	switch req.Action {
	case ActionForce:
	case ActionSkip:
		skip = true
	default:
		return Document{}, onboarding.Errorf(onboarding.KindInvalid, "Invalid action '%s': use force or skip", req.Action)
	}
	d, err := a.Service.OverrideDocument(ctx, onboarding.DocumentOverride{
		AppID: req.AppID, FieldID: req.FieldID, PersonID: req.PersonID, Reason: req.Reason, Skip: skip,
	})
	if err != nil {
		return Document{}, err
	}
	return Document{
		FileID: d.FileID, FileName: d.FileName, Status: string(d.Status),
		UserOverrideReason: d.UserOverrideReason, OverriddenAt: d.OverriddenAt,
	}, nil
}
