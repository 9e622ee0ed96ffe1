package main

import (
	"context"
	"log/slog"

	"onboard/memrelease"
	"onboard/onboarding"
	"onboard/storage"
)

// releaseMemory runs memrelease on svc until ctx ends: forgetRendered
// drops the API's rendered answers. badger is the embedded store, whose
// cache and mapped files it also releases, within maxMapped
// (limits.max_mapped_bytes); nil on PostgreSQL, whose memory is another
// process's.
func releaseMemory(ctx context.Context, svc *onboarding.Service, forgetRendered func(), badger *storage.Store, log *slog.Logger, maxMapped int64) {
	o := memrelease.Options{Requests: svc.Requests, Forget: forgetRendered, Log: log}
	if badger != nil {
		o.Forget = func() { badger.ForgetCached(); forgetRendered() }
		o.PageOut, o.Trim, o.MaxMapped = badger.PageOut, badger.Trim, maxMapped
	}
	memrelease.Run(ctx, o)
}
