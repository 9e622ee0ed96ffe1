package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// notifyShutdown returns a context that ends at the first SIGINT or
// SIGTERM, and a function that stops listening for them. A second signal
// ends the process at once, killed by that signal as its default action
// does, instead of waiting for the graceful shutdown: however soon after
// the first it comes. (With signal.NotifyContext, a second signal that came
// before serve stopped listening was taken and ignored, and serve went on
// waiting for its requests.)
func notifyShutdown() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go stopOnSignals(sigs, done, cancel, killSelf)
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// stopOnSignals calls cancel at the first signal from sigs and kill at the
// second, until done is closed.
func stopOnSignals(sigs <-chan os.Signal, done <-chan struct{}, cancel func(), kill func(os.Signal)) {
	select {
	case <-sigs:
	case <-done:
		return
	}
	cancel()
	select {
	case sig := <-sigs:
		kill(sig)
	case <-done:
	}
}

// killSelf ends the process with sig's default action (or exits 1 when it
// cannot send sig).
func killSelf(sig os.Signal) {
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if s, ok := sig.(syscall.Signal); !ok || syscall.Kill(os.Getpid(), s) != nil {
		os.Exit(1)
	}
}
