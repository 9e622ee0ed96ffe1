package metrics

import "github.com/prometheus/client_golang/prometheus"

// SpaceStore is what the disk-space gauges read: the storage.Store's gate,
// as it last saw the data directory's filesystem.
type SpaceStore interface {
	SpaceState() (free, reserve int64, refused bool)
}

// WatchSpace registers onboard_storage_writes_refused,
// onboard_storage_free_bytes and onboard_storage_reserve_bytes, read from
// store at scrape time.
func (m *Collectors) WatchSpace(store SpaceStore) {
	gauge := func(name, help string, value func(free, reserve int64, refused bool) float64) prometheus.GaugeFunc {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			return value(store.SpaceState())
		})
	}
	m.reg.MustRegister(
		gauge("onboard_storage_writes_refused",
			"1 while writes are refused because the data directory's disk is nearly full (free space below the reserve), 0 otherwise.",
			func(_, _ int64, refused bool) float64 {
				if refused {
					return 1
				}
				return 0
			}),
		gauge("onboard_storage_free_bytes",
			"Free space of the database's filesystem, as last seen (at most a second ago).",
			func(free, _ int64, _ bool) float64 { return float64(free) }),
		gauge("onboard_storage_reserve_bytes",
			"The free space below which writes are refused: what the database may still write on its own.",
			func(_, reserve int64, _ bool) float64 { return float64(reserve) }),
	)
}
