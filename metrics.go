package main

import (
	"fmt"
	"log/slog"
	"net"

	"onboard/config"
)

// listenMetrics opens the listener of [metrics] listen, or none when it is
// empty (/metrics is then on the API's listener).
func listenMetrics(cfg config.Config) (net.Listener, error) {
	if cfg.Metrics.Listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Metrics.Listen)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", cfg.Metrics.Listen, err)
	}
	return ln, nil
}

// metricsAddr is what the "onboard serving" line says of /metrics.
func metricsAddr(ln net.Listener) slog.Attr {
	if ln == nil {
		return slog.String("metrics", "on the API listener")
	}
	return slog.String("metrics", ln.Addr().String())
}
