package main

import (
	"log/slog"
	"runtime/debug"
	"testing"
)

// TestSetMemoryLimit: serve applies its soft memory limit unless
// GOMEMLIMIT sets one.
func TestSetMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.DiscardHandler)

	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(1 << 40)
	setMemoryLimit(log)
	if got := debug.SetMemoryLimit(-1); got != defaultMemoryLimit {
		t.Errorf("without GOMEMLIMIT the limit is %d, want %d", got, defaultMemoryLimit)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	setMemoryLimit(log)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT the limit is %d, want GOMEMLIMIT's %d", got, 1<<30)
	}
}
