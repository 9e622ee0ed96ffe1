package registry

import (
	"context"
	"slices"
	"sync"

	"onboard/onboarding"
)

// Recordings never change, so in fixtures mode what an adapter makes of
// one is the same every time: memoize wraps the adapters' company, parties
// and filings lookups so that each normalised number is fetched and decoded
// once per process: repeating it was a large share of a sandbox create's
// CPU.
//
// Only answers are kept, never errors: an error can be transient (a
// cancelled context), and a missing recording answers quickly anyway. Each
// caller gets its own copy of an answer, so nothing a caller does to it
// reaches the memo. A memo holds at most maxMemoized numbers per lookup:
// recordings with a {wildcard} can answer any number, and past the bound a
// lookup is simply not kept. Live mode never memoizes: a registry's records
// change, and every lookup there is a request, counted (Options.CountCall)
// and rate limited. A memoized answer is not a request, so it is not
// counted either.

// maxMemoized bounds the numbers each memoized lookup keeps.
const maxMemoized = 4096

// memo keeps the answers of one lookup by normalised number; the zero
// value is ready to use.
type memo[T any] struct {
	mu      sync.Mutex
	answers map[string]T
}

// do answers number's value from the memo, or from fetch, keeping fetch's
// answer when it succeeded and the memo has room; clone copies an answer
// for a caller.
func (m *memo[T]) do(ctx context.Context, number string, fetch func(context.Context, string) (T, error), clone func(T) T) (T, error) {
	m.mu.Lock()
	v, ok := m.answers[number]
	m.mu.Unlock()
	if ok {
		return clone(v), nil
	}
	v, err := fetch(ctx, number)
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	if m.answers == nil {
		m.answers = make(map[string]T)
	}
	if len(m.answers) < maxMemoized {
		m.answers[number] = clone(v)
	}
	m.mu.Unlock()
	return v, nil
}

// memoize returns adapters whose company, parties and filings lookups are
// memoized, each in a memo of its own.
func (as adapters) memoize() adapters {
	out := make(adapters, len(as))
	for country, a := range as {
		if a.company != nil {
			fetch, m := a.company, new(memo[onboarding.Company])
			a.company = func(ctx context.Context, n string) (onboarding.Company, error) {
				return m.do(ctx, n, fetch, cloneCompany)
			}
		}
		if a.parties != nil {
			fetch, m := a.parties, new(memo[onboarding.Parties])
			a.parties = func(ctx context.Context, n string) (onboarding.Parties, error) {
				return m.do(ctx, n, fetch, cloneParties)
			}
		}
		if a.filings != nil {
			fetch, m := a.filings, new(memo[[]onboarding.Filing])
			a.filings = func(ctx context.Context, n string) ([]onboarding.Filing, error) {
				return m.do(ctx, n, fetch, slices.Clone[[]onboarding.Filing])
			}
		}
		out[country] = a
	}
	return out
}

// cloneCompany copies c, its address included.
func cloneCompany(c onboarding.Company) onboarding.Company {
	c.RegisteredAddress = clonePtr(c.RegisteredAddress)
	return c
}

// cloneParties copies p down to its roles and share bands.
func cloneParties(p onboarding.Parties) onboarding.Parties {
	people := slices.Clone(p.People)
	for i := range people {
		people[i].Roles = slices.Clone(people[i].Roles)
		people[i].Shares = clonePtr(people[i].Shares)
	}
	entities := slices.Clone(p.Entities)
	for i := range entities {
		entities[i].Shares = clonePtr(entities[i].Shares)
	}
	return onboarding.Parties{People: people, Entities: entities}
}

// clonePtr returns a pointer to a copy of *p, or nil when p is nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
