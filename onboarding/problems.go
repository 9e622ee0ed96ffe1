package onboarding

import (
	"errors"
	"fmt"
)

// Problems collects what is wrong with an input, in the order found: one
// message per key (a field id, a form field, a configuration table), the
// first one found. Every save of the applicant's form, PATCH, form loading
// and configuration validation report through it, so that errors are
// listed in the order the input has them, never in map order. The zero
// value is ready to use.
type Problems struct {
	keys     []string
	messages map[string]string
	all      []string // every message, for Err
}

// Add records msg for key, unless key already has a problem.
func (p *Problems) Add(key, msg string) {
	if _, ok := p.messages[key]; ok {
		return
	}
	if p.messages == nil {
		p.messages = map[string]string{}
	}
	p.keys = append(p.keys, key)
	p.messages[key] = msg
	p.all = append(p.all, msg)
}

// Note records one more message under key even when key already has one:
// for inputs (a configuration, a form file) where every problem is worth
// reading at once.
func (p *Problems) Note(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if _, ok := p.messages[key]; !ok {
		p.Add(key, msg)
		return
	}
	p.all = append(p.all, msg)
}

// Has reports whether key has a problem.
func (p *Problems) Has(key string) bool {
	_, ok := p.messages[key]
	return ok
}

// Empty reports whether nothing was found wrong.
func (p *Problems) Empty() bool { return len(p.keys) == 0 }

// FieldErr returns nil when nothing is wrong, and otherwise the 400 that
// names each failing field with its first problem, in the order found
// (ErrInvalidFieldValues).
func (p *Problems) FieldErr() error {
	if p.Empty() {
		return nil
	}
	return ErrInvalidFieldValues(p.keys, p.messages)
}

// Err returns nil when nothing is wrong, and otherwise every message, one
// a line, in the order found.
func (p *Problems) Err() error {
	if p.Empty() {
		return nil
	}
	errs := make([]error, len(p.all))
	for i, m := range p.all {
		errs[i] = errors.New(m)
	}
	return errors.Join(errs...)
}
