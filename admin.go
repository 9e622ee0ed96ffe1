package main

import (
	"context"
	"io"
	"log/slog"

	"onboard/backup"
	"onboard/onboarding"
	"onboard/server"
)

// admin is what the operator's commands (keys, docs, webhooks) need, from the
// running server's admin socket or from the store opened directly.
type admin interface {
	CreateKey(context.Context, server.AdminCreateKey) (server.AdminCreatedKey, error)
	ListKeys(context.Context, string) ([]server.AdminKey, error)
	RevokeKey(context.Context, string) (server.AdminKey, error)
	OverrideDocument(context.Context, server.AdminDocumentOverride) (server.AdminDocument, error)

	AddEndpoint(context.Context, server.AdminAddEndpoint) (server.AdminAddedEndpoint, error)
	ListEndpoints(context.Context, string) ([]server.AdminEndpoint, error)
	RemoveEndpoint(context.Context, string) error
	EnableEndpoint(context.Context, string) (server.AdminSwitchedEndpoint, error)
	DisableEndpoint(context.Context, string) (server.AdminSwitchedEndpoint, error)
	RotateEndpointSecret(context.Context, string) (server.AdminRotatedSecret, error)
	TestEndpoint(context.Context, string) (server.AdminTestEvent, error)
	Redeliver(context.Context, server.AdminRedeliver) (server.AdminRedelivery, error)
	DeliveryAttempts(context.Context, server.AdminDeliveryQuery) ([]server.AdminDeliveryAttempt, error)

	VerifyLog(context.Context, server.AdminVerifyLog, func(server.AdminLogBreak) error) (server.AdminLogReport, error)
	Export(context.Context, onboarding.ExportQuery, onboarding.ExportSink) (onboarding.ExportSummary, error)
	Backup(context.Context, io.Writer) error
}

// localAdmin runs the admin commands on a store opened by this process.
type localAdmin struct {
	server.KeyAdmin
	server.DocAdmin
	server.WebhookAdmin
	server.ActivityAdmin
	server.ExportAdmin
	*backup.Maker
}

// withAdmin runs fn against the running server when one holds the data
// directory, else against the store opened directly; both run the same
// Service code. The data directory must exist (see existingConfig).
func (e *env) withAdmin(fn func(context.Context, admin) error) error {
	cfg, err := e.existingConfig()
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
	return fn(ctx, localAdmin{server.KeyAdmin{Service: a.svc}, server.DocAdmin{Service: a.svc}, server.WebhookAdmin{Service: a.svc},
		server.ActivityAdmin{Service: a.svc}, server.ExportAdmin{Service: a.svc}, a.backup})
}
