package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"onboard/onboarding"
)

// fakeOutbox is an OutboxStore of a fixed queue and endpoints that counts
// the walks of its queue.
type fakeOutbox struct {
	queued, walks int
	endpoints     []*onboarding.Endpoint
}

func (f *fakeOutbox) QueuedDeliveries(context.Context) (int, error) {
	f.walks++
	return f.queued, nil
}

func (f *fakeOutbox) Endpoints(context.Context, string) ([]*onboarding.Endpoint, error) {
	return f.endpoints, nil
}

// gauges scrapes reg: onboard_outbox_pending, and
// onboard_webhook_endpoints_disabled by reason.
func gauges(t *testing.T, reg *prometheus.Registry) (float64, map[string]float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var pending float64
	disabled := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "onboard_outbox_pending":
				pending = m.GetGauge().GetValue()
			case "onboard_webhook_endpoints_disabled":
				disabled[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	return pending, disabled
}

// TestStoreCollector: a scrape within the refresh reuses the last count
// of the outbox, and disabled endpoints are counted by reason.
func TestStoreCollector(t *testing.T) {
	now := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	store := &fakeOutbox{queued: 4, endpoints: []*onboarding.Endpoint{
		{Enabled: true},
		{DisabledReason: onboarding.DisabledByOperator},
		{DisabledReason: onboarding.DisabledGone},
		{DisabledReason: "3 events in a row failed every delivery attempt"},
		{DisabledReason: "another reason"},
	}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewStoreCollector(store, time.Minute, func() time.Time { return now }))
	wantDisabled := map[string]float64{"operator": 1, "gone": 1, "failing": 2}
	for i, step := range []struct {
		advance time.Duration
		queued  int
		want    float64
		walks   int
	}{
		{0, 4, 4, 1},
		{30 * time.Second, 9, 4, 1}, // within the refresh: the last count
		{time.Minute, 9, 9, 2},
	} {
		now = now.Add(step.advance)
		store.queued = step.queued
		pending, disabled := gauges(t, reg)
		if pending != step.want || store.walks != step.walks {
			t.Errorf("scrape %d: pending %v after %d walks, want %v after %d", i, pending, store.walks, step.want, step.walks)
		}
		if diff := cmp.Diff(wantDisabled, disabled); diff != "" {
			t.Errorf("scrape %d: disabled endpoints (-want +got):\n%s", i, diff)
		}
	}
}
