package bench

import (
	"fmt"
	"net/http"
	"sync"
)

// benchPool is the submitted applications the decisions take, one each.
// Submitting one through the test helper takes every step of the form, so
// it costs many times a decision: the pool is filled just before the
// decisions, to what their duration needs at the rate PATCH (one
// transaction, as a decision) has just reached, with a margin.
type benchPool struct {
	api         *benchAPI
	concurrency int

	mu  sync.Mutex
	ids []string
}

// size is how many applications the pool holds.
func (p *benchPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids)
}

// submitted answers the prepared applications.
func (p *benchPool) submitted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids
}

// prepare creates and submits one application, in the configuration
// without registry documents (deciding does not need them, and fetching
// them would keep the job busy).
func (p *benchPool) prepare() error {
	c, err := p.api.create(QuietConfig, false)
	if err != nil {
		return err
	}
	if err := p.api.call("POST", "/test-helpers/applications/"+c.ID+"/submit", "", http.StatusOK, nil); err != nil {
		return err
	}
	p.mu.Lock()
	p.ids = append(p.ids, c.ID)
	p.mu.Unlock()
	return nil
}

// fill prepares applications until the pool holds want.
func (p *benchPool) fill(want int) error {
	if n := want - p.size(); n > 0 {
		if err := Parallel(n, p.concurrency, func(int) error { return p.prepare() }); err != nil {
			return fmt.Errorf("prepare decisions: %w", err)
		}
	}
	return nil
}
