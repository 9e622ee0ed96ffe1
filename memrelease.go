package main

import (
	"context"
	"log/slog"

	"onboard/memrelease"
	"onboard/onboarding"
	"onboard/storage"
)

// releaseMemory runs memrelease on svc and store until ctx ends:
// forgetRendered drops the API's rendered answers, maxMapped is
// limits.max_mapped_bytes.
func releaseMemory(ctx context.Context, svc *onboarding.Service, forgetRendered func(), store *storage.Store, log *slog.Logger, maxMapped int64) {
	memrelease.Run(ctx, memrelease.Options{
		Requests: svc.Requests, Forget: func() { store.ForgetCached(); forgetRendered() },
		PageOut: store.PageOut, Trim: store.Trim, MaxMapped: maxMapped, Log: log,
	})
}
