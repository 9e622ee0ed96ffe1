package onboarding_test

import (
	"testing"
	"time"

	"onboard/onboarding"
)

// TestRegistryDocumentsGiveWay checks that the registry documents job
// waits before each application while a request is being served, for at
// most its yield, and not at all when none is.
func TestRegistryDocumentsGiveWay(t *testing.T) {
	const apps = 3
	queue := func(t *testing.T, yield time.Duration) *docsEnv {
		e := newDocsEnv(t, threeFilings(1<<10), nil, func(o *onboarding.Options) { o.RegistryDocumentsYield = yield })
		for range apps {
			if _, err := createGB(e.svc, e.key); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	t.Run("busy: a yield before each application", func(t *testing.T) {
		const yield = 100 * time.Millisecond
		e := queue(t, yield)
		e.svc.RequestStarted()
		defer e.svc.RequestEnded()
		start := time.Now()
		e.runOnce(t)
		if took := time.Since(start); took < apps*yield {
			t.Errorf("the job took %v for %d applications beside a request; want at least %v", took, apps, apps*yield)
		}
	})
	t.Run("idle: no wait", func(t *testing.T) {
		// A job that waited its yield would not finish within runOnce's
		// minute.
		e := queue(t, time.Hour)
		e.runOnce(t)
	})
	t.Run("busy, then idle: the job goes on", func(t *testing.T) {
		e := queue(t, time.Hour)
		e.svc.RequestStarted()
		ended := time.AfterFunc(50*time.Millisecond, e.svc.RequestEnded)
		defer ended.Stop()
		e.runOnce(t)
	})
}
