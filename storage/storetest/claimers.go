package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"onboard/onboarding"
)

// runClaimers runs workers at once, and alongside beside them: worker w
// calls claim through stores[w%len(stores)] as owner "w<w>" until claim
// reports it is done, retrying a round that lost to a conflict. An error
// of any fails t once all have returned.
func runClaimers(t *testing.T, workers int, stores []onboarding.Store, claim func(s onboarding.Store, owner string) (done bool, err error),
	alongside ...func() error) {
	var wg sync.WaitGroup
	errs := make(chan error, workers+len(alongside))
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errs <- err
			}
		}()
	}
	for w := 0; w < workers; w++ {
		s, owner := stores[w%len(stores)], fmt.Sprintf("w%d", w)
		run(func() error {
			for {
				done, err := claim(s, owner)
				switch {
				case errors.Is(err, onboarding.ErrWriteConflict):
					continue
				case err != nil || done:
					return err
				}
				runtime.Gosched() // what is due may be in another worker's hands
			}
		})
	}
	for _, f := range alongside {
		run(f)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// claimLedger records which owner claimed each id, in the order claimed,
// failing t when an id is claimed twice. Its methods may run at once.
type claimLedger struct {
	t     *testing.T
	mu    sync.Mutex
	owner map[string]string
	order []string
}

func newClaimLedger(t *testing.T) *claimLedger {
	return &claimLedger{t: t, owner: map[string]string{}}
}

// claimed records that owner claimed ids.
func (l *claimLedger) claimed(owner string, ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if prev, dup := l.owner[id]; dup {
			l.t.Errorf("%s claimed by %s and %s", id, prev, owner)
		}
		l.owner[id] = owner
		l.order = append(l.order, id)
	}
}
