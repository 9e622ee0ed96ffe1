package storage

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"onboard/onboarding"
	"onboard/storage/storetest"
)

// TestConformance runs the Store suite on Badger.
func TestConformance(t *testing.T) {
	storetest.Run(t, badgerOpener())
}

// badgerOpener opens Badger stores in temporary directories: a restart
// closes a store and opens its directory again; a second store on one
// directory cannot be, as the first holds it.
func badgerOpener() storetest.Opener {
	var mu sync.Mutex
	dirs := map[onboarding.Store]string{}
	return func(t *testing.T, o storetest.Options) onboarding.Store {
		t.Helper()
		if o.Beside != nil {
			return nil
		}
		mu.Lock()
		dir, known := dirs[o.Reopen]
		mu.Unlock()
		switch {
		case o.Reopen == nil:
			dir = filepath.Join(t.TempDir(), "db")
		case !known:
			t.Fatal("Reopen names a store this Opener did not open")
		default:
			if err := o.Reopen.(*Store).Close(); err != nil {
				t.Fatal(err)
			}
		}
		now := o.Now
		if now == nil {
			now = time.Now
		}
		s, err := Open(dir, Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		mu.Lock()
		dirs[s] = dir
		mu.Unlock()
		return s
	}
}

// CheckQueues checks the invariants of the delivery and RFI expiry
// queues, for the Store suite.
func (s *Store) CheckQueues(t *testing.T) {
	t.Helper()
	h := &hooks{t: t, s: s}
	h.queued()
	rfiQueue(t, s)
}
