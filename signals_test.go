package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// TestServeSecondSignal checks that a second SIGTERM during the graceful
// shutdown ends serve at once, killed by the signal as its default action
// does, instead of waiting for the requests in flight (up to 30 s).
// TestStopOnSignals covers a second signal that comes before serve has
// acted on the first, which the kernel may merge with the first when they
// are sent to a process at once.
func TestServeSecondSignal(t *testing.T) {
	t.Parallel()
	p := startServe(t, "--data-dir", filepath.Join(t.TempDir(), "data"))
	key := p.waitForKey(t)
	var created struct {
		ApplicationID string `json:"application_id"`
	}
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)), &created); err != nil {
		t.Fatal(err)
	}
	startSlowPatch(t, p, key, created.ApplicationID) // never finished: it holds the shutdown open
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitRefused(t, strings.TrimPrefix(p.base, "http://")) // shutting down
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("serve still runs 5 s after a second SIGTERM\nstderr:\n%s", p.stderr.String())
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("serve ended with %v after a second SIGTERM, want killed by it", p.cmd.ProcessState)
	}
}
