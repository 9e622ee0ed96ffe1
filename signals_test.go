package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStopOnSignals checks what serve does on its shutdown signals: the
// first cancels, the second kills, even when both are queued before the
// first is acted on, and nothing happens once serve has stopped listening.
func TestStopOnSignals(t *testing.T) {
	for _, tt := range []struct {
		name       string
		queued     []os.Signal
		wantCancel bool
		wantKill   os.Signal
	}{
		{name: "no signal"},
		{name: "one signal", queued: []os.Signal{syscall.SIGTERM}, wantCancel: true},
		{name: "two at once", queued: []os.Signal{syscall.SIGTERM, os.Interrupt}, wantCancel: true, wantKill: os.Interrupt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			for _, s := range tt.queued {
				sigs <- s
			}
			done, returned := make(chan struct{}), make(chan struct{})
			cancelled, killed := make(chan struct{}), make(chan os.Signal, 1)
			go func() {
				defer close(returned)
				stopOnSignals(sigs, done, func() { close(cancelled) }, func(s os.Signal) { killed <- s })
			}()
			if tt.wantKill != nil {
				select {
				case got := <-killed:
					if got != tt.wantKill {
						t.Errorf("killed with %v, want %v", got, tt.wantKill)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no kill 10 s after two signals")
				}
			} else if tt.wantCancel {
				select {
				case <-cancelled:
				case <-time.After(10 * time.Second):
					t.Fatal("no cancel 10 s after a signal")
				}
			}
			close(done) // serve stopped listening
			<-returned
			select {
			case <-cancelled:
				if !tt.wantCancel {
					t.Error("cancelled without a signal")
				}
			default:
				if tt.wantCancel {
					t.Error("not cancelled")
				}
			}
			if s := len(killed); tt.wantKill == nil && s != 0 {
				t.Errorf("killed with %v after %d signals", <-killed, len(tt.queued))
			}
		})
	}
}
