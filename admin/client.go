package admin

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
)

// Client talks to a running server's admin socket.
type Client struct {
	http *http.Client
}

// Dial returns a client for the admin socket at path, or an error when
// no server answers there (no socket, or a stale one left by a crash).
func Dial(ctx context.Context, path string) (*Client, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	conn.Close()
	return &Client{http: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		}},
	}}, nil
}

// CreateKey creates a key through the running server.
func (c *Client) CreateKey(ctx context.Context, req CreateKey) (CreatedKey, error) {
	var out CreatedKey
	err := c.do(ctx, http.MethodPost, "/keys", req, &out)
	return out, err
}

// ListKeys lists keys through the running server; org may be empty.
func (c *Client) ListKeys(ctx context.Context, org string) ([]Key, error) {
	var out []Key
	err := c.do(ctx, http.MethodGet, "/keys?org="+url.QueryEscape(org), nil, &out)
	return out, err
}

// RevokeKey revokes a key through the running server.
func (c *Client) RevokeKey(ctx context.Context, clientID string) (Key, error) {
	var out Key
	err := c.do(ctx, http.MethodPost, "/keys/"+url.PathEscape(clientID)+"/revoke", nil, &out)
	return out, err
}

// OverrideDocument forces or skips a document requirement through the
// running server.
func (c *Client) OverrideDocument(ctx context.Context, req DocumentOverride) (Document, error) {
	var out Document
	err := c.do(ctx, http.MethodPost, "/docs/override", req, &out)
	return out, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
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
