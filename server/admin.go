package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"onboard/onboarding"
)

// The admin socket serves operator commands (keys create/list/revoke, docs
// force/skip, the webhooks commands) to the CLI while `serve` holds the data directory. It is a
// unix socket with mode 0600 in the data directory, so only the operator's
// account can reach it; its requests run the same Service code as the CLI's
// direct path.

// AdminKey is an API key as the admin socket and the CLI show it: never the
// secret or its hash.
type AdminKey struct {
	ClientID   string     `json:"client_id"`
	OrgID      string     `json:"org"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// AdminKeyOf converts a stored key into its admin view.
func AdminKeyOf(k *onboarding.APIKey) AdminKey {
	list := k.ScopeList()
	scopes := make([]string, len(list))
	for i, s := range list {
		scopes[i] = string(s)
	}
	return AdminKey{
		ClientID: k.ClientID, OrgID: k.OrgID, Name: k.Name, Scopes: scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
}

// AdminCreateKey is the body of a key creation on the admin socket.
type AdminCreateKey struct {
	OrgID     string   `json:"org"`
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	ExpiresIn string   `json:"expires_in"` // a Go duration; empty: never
}

// AdminCreatedKey is the answer to a key creation: the full key, shown once.
type AdminCreatedKey struct {
	Key    string   `json:"key"`
	APIKey AdminKey `json:"api_key"`
}

// KeyAdmin runs the key commands on a Service. The admin socket's handlers
// use it, and so does the CLI when no server holds the data directory, so
// both paths behave the same.
type KeyAdmin struct{ Service *onboarding.Service }

// CreateKey creates a key; the answer holds the full key, shown once.
func (a KeyAdmin) CreateKey(ctx context.Context, req AdminCreateKey) (AdminCreatedKey, error) {
	var expires time.Duration
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return AdminCreatedKey{}, onboarding.Errorf(onboarding.KindInvalid, "invalid expiry '%s': use a positive duration such as 720h", req.ExpiresIn)
		}
		expires = d
	}
	key, k, err := a.Service.CreateAPIKey(ctx, onboarding.KeySpec{OrgID: req.OrgID, Name: req.Name, Scopes: req.Scopes, ExpiresIn: expires})
	if err != nil {
		return AdminCreatedKey{}, err
	}
	return AdminCreatedKey{Key: key, APIKey: AdminKeyOf(k)}, nil
}

// ListKeys lists the keys of org, or every key when org is empty.
func (a KeyAdmin) ListKeys(ctx context.Context, org string) ([]AdminKey, error) {
	keys, err := a.Service.APIKeys(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make([]AdminKey, len(keys))
	for i, k := range keys {
		out[i] = AdminKeyOf(k)
	}
	return out, nil
}

// RevokeKey revokes the key with clientID.
func (a KeyAdmin) RevokeKey(ctx context.Context, clientID string) (AdminKey, error) {
	k, err := a.Service.RevokeAPIKey(ctx, clientID)
	if err != nil {
		return AdminKey{}, err
	}
	return AdminKeyOf(k), nil
}

// Actions of a document override on the admin socket.
const (
	AdminActionForce = "force"
	AdminActionSkip  = "skip"
)

// AdminDocumentOverride is the body of a document force or skip on the
// admin socket (onboard docs force|skip).
type AdminDocumentOverride struct {
	AppID    string `json:"app"`
	FieldID  string `json:"field"`
	PersonID string `json:"person,omitempty"`
	Reason   string `json:"reason"`
	Action   string `json:"action"` // AdminActionForce or AdminActionSkip
}

// AdminDocument is a document as an override left it.
type AdminDocument struct {
	FileID             string     `json:"file_id"`
	FileName           string     `json:"file_name,omitempty"`
	Status             string     `json:"status"`
	UserOverrideReason string     `json:"user_override_reason"`
	OverriddenAt       *time.Time `json:"overridden_at"`
}

// DocAdmin runs the document override commands on a Service, for the admin
// socket and for the CLI's direct path alike.
type DocAdmin struct{ Service *onboarding.Service }

// OverrideDocument forces or skips a document requirement.
func (a DocAdmin) OverrideDocument(ctx context.Context, req AdminDocumentOverride) (AdminDocument, error) {
	var skip bool
	switch req.Action {
	case AdminActionForce:
	case AdminActionSkip:
		skip = true
	default:
		return AdminDocument{}, onboarding.Errorf(onboarding.KindInvalid, "Invalid action '%s': use force or skip", req.Action)
	}
	d, err := a.Service.OverrideDocument(ctx, onboarding.DocumentOverride{
		AppID: req.AppID, FieldID: req.FieldID, PersonID: req.PersonID, Reason: req.Reason, Skip: skip,
	})
	if err != nil {
		return AdminDocument{}, err
	}
	return AdminDocument{
		FileID: d.FileID, FileName: d.FileName, Status: string(d.Status),
		UserOverrideReason: d.UserOverrideReason, OverriddenAt: d.OverriddenAt,
	}, nil
}

// AdminHandler returns the admin socket's handler.
func (s *Server) AdminHandler() http.Handler {
	admin := KeyAdmin{s.svc}
	docs := DocAdmin{s.svc}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		var req AdminCreateKey
		if !s.adminDecode(w, r, &req) {
			return
		}
		created, err := admin.CreateKey(r.Context(), req)
		s.adminReply(w, http.StatusCreated, created, err)
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		keys, err := admin.ListKeys(r.Context(), r.URL.Query().Get("org"))
		s.adminReply(w, http.StatusOK, keys, err)
	})
	mux.HandleFunc("POST /keys/{id}/revoke", func(w http.ResponseWriter, r *http.Request) {
		k, err := admin.RevokeKey(r.Context(), r.PathValue("id"))
		s.adminReply(w, http.StatusOK, k, err)
	})
	mux.HandleFunc("POST /docs/override", func(w http.ResponseWriter, r *http.Request) {
		var req AdminDocumentOverride
		if !s.adminDecode(w, r, &req) {
			return
		}
		d, err := docs.OverrideDocument(r.Context(), req)
		s.adminReply(w, http.StatusOK, d, err)
	})
	s.webhookRoutes(mux)
	s.activityRoutes(mux)
	s.exportRoutes(mux)
	s.backupRoutes(mux)
	return mux
}

func (s *Server) adminReply(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		s.adminError(w, err)
		return
	}
	adminWrite(w, status, v)
}

func (s *Server) adminError(w http.ResponseWriter, err error) {
	f := failureOf(err)
	if f.unexpected() {
		s.log.Error("admin request failed", "err", err)
	}
	adminWrite(w, f.status, errorBody{Error: f.body.Error})
}

func adminWrite(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// AdminClient talks to a running server's admin socket.
type AdminClient struct {
	http *http.Client
}

// DialAdmin returns a client for the admin socket at path, or an error when
// no server answers there (no socket, or a stale one left by a crash).
func DialAdmin(ctx context.Context, path string) (*AdminClient, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	conn.Close()
	return &AdminClient{http: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		}},
	}}, nil
}

// CreateKey creates a key through the running server.
func (c *AdminClient) CreateKey(ctx context.Context, req AdminCreateKey) (AdminCreatedKey, error) {
	var out AdminCreatedKey
	err := c.do(ctx, http.MethodPost, "/keys", req, &out)
	return out, err
}

// ListKeys lists keys through the running server; org may be empty.
func (c *AdminClient) ListKeys(ctx context.Context, org string) ([]AdminKey, error) {
	var out []AdminKey
	err := c.do(ctx, http.MethodGet, "/keys?org="+url.QueryEscape(org), nil, &out)
	return out, err
}

// RevokeKey revokes a key through the running server.
func (c *AdminClient) RevokeKey(ctx context.Context, clientID string) (AdminKey, error) {
	var out AdminKey
	err := c.do(ctx, http.MethodPost, "/keys/"+url.PathEscape(clientID)+"/revoke", nil, &out)
	return out, err
}

// OverrideDocument forces or skips a document requirement through the
// running server.
func (c *AdminClient) OverrideDocument(ctx context.Context, req AdminDocumentOverride) (AdminDocument, error) {
	var out AdminDocument
	err := c.do(ctx, http.MethodPost, "/docs/override", req, &out)
	return out, err
}

func (c *AdminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://admin"+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e errorBody
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" {
			return fmt.Errorf("admin socket: %s", resp.Status)
		}
		return errors.New(e.Error)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
