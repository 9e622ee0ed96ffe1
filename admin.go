package main

import (
	"context"
	"io"
	"log/slog"

	"onboard/admin"
	"onboard/backup"
	"onboard/onboarding"
)

// adminOps is what the operator's commands (keys, docs, webhooks) need, from the
// running server's admin socket or from the store opened directly.
type adminOps interface {
	CreateKey(context.Context, admin.CreateKey) (admin.CreatedKey, error)
	ListKeys(context.Context, string) ([]admin.Key, error)
	RevokeKey(context.Context, string) (admin.Key, error)
	OverrideDocument(context.Context, admin.DocumentOverride) (admin.Document, error)

	AddEndpoint(context.Context, admin.AddEndpoint) (admin.AddedEndpoint, error)
	ListEndpoints(context.Context, string) ([]admin.Endpoint, error)
	RemoveEndpoint(context.Context, string) error
	EnableEndpoint(context.Context, string) (admin.SwitchedEndpoint, error)
	DisableEndpoint(context.Context, string) (admin.SwitchedEndpoint, error)
	RotateEndpointSecret(context.Context, string) (admin.RotatedSecret, error)
	TestEndpoint(context.Context, string) (admin.TestEvent, error)
	Redeliver(context.Context, admin.Redeliver) (admin.Redelivery, error)
	DeliveryAttempts(context.Context, admin.DeliveryQuery) ([]admin.DeliveryAttempt, error)

	VerifyLog(context.Context, admin.VerifyLog, func(admin.LogBreak) error) (admin.LogReport, error)
	Export(context.Context, onboarding.ExportQuery, onboarding.ExportSink) (onboarding.ExportSummary, error)
	Backup(context.Context, io.Writer) error
}

// localAdmin runs the admin commands on a store opened by this process.
type localAdmin struct {
	admin.Local
	backup *backup.Maker
	shared bool // the records are in a database other servers may use
}

// Backup writes a backup archive of the store opened by this process.
func (l localAdmin) Backup(ctx context.Context, w io.Writer) error {
	return l.backup.Backup(ctx, w)
}

// withAdmin runs fn against the running server when one listens on the
// data directory's admin socket, else against the stores opened directly;
// both run the same Service code. The data directory must exist (see
// existingConfig), unless the records and files are shared (PostgreSQL
// and S3): a command then needs no server and no socket.
func (e *env) withAdmin(fn func(context.Context, adminOps) error) error {
	cfg, err := e.existingConfig()
	if err != nil {
		return err
	}
	ctx := context.Background()
	if client, err := admin.Dial(ctx, adminSocket(cfg)); err == nil {
		return fn(ctx, client)
	}
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer a.close(e.stderr)
	return fn(ctx, localAdmin{admin.Local{Service: a.svc}, a.backup, a.badger == nil})
}
