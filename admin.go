package main

import (
	"context"
	"log/slog"

	"onboard/server"
)

// admin is what the operator's commands (keys, docs) need, from the
// running server's admin socket or from the store opened directly.
type admin interface {
	CreateKey(context.Context, server.AdminCreateKey) (server.AdminCreatedKey, error)
	ListKeys(context.Context, string) ([]server.AdminKey, error)
	RevokeKey(context.Context, string) (server.AdminKey, error)
	OverrideDocument(context.Context, server.AdminDocumentOverride) (server.AdminDocument, error)
}

// localAdmin runs the admin commands on a store opened by this process.
type localAdmin struct {
	server.KeyAdmin
	server.DocAdmin
}

// withAdmin runs fn against the running server when one holds the data
// directory, else against the store opened directly; both run the same
// Service code.
func (e *env) withAdmin(fn func(context.Context, admin) error) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if client, err := server.DialAdmin(ctx, adminSocket(cfg)); err == nil {
		return fn(ctx, client)
	}
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer a.close(e.stderr)
	return fn(ctx, localAdmin{server.KeyAdmin{Service: a.svc}, server.DocAdmin{Service: a.svc}})
}
