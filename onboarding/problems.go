package onboarding

import (
	"errors"
	"fmt"
)

// Problems collects what is wrong with an input, in the order found: one
// problem per key (a field id, a form control, a configuration table), the
// first one found. Every save of the applicant's form, PATCH, form loading
// and configuration validation report through it, so that errors are
// listed in the order the input has them, never in map order. The zero
// value is ready to use.
type Problems struct {
	keys     []string
	problems map[string]Problem
	all      []string // every message, for Err
}

// Add records problem pr of key, unless key already has a problem.
func (p *Problems) Add(key string, pr Problem) {
	if _, ok := p.problems[key]; ok {
		return
	}
	if p.problems == nil {
		p.problems = map[string]Problem{}
	}
	p.keys = append(p.keys, key)
	p.problems[key] = pr
	p.all = append(p.all, pr.Message())
}

// AddError records err under key as Add does: the Problem it is (the
// errors of Field.Normalize are), or else a ProblemOther in its words.
func (p *Problems) AddError(key string, err error) {
	p.Add(key, problemOf(err))
}

// Note records one more message under key even when key already has one:
// for inputs (a configuration, a form file) where every problem is worth
// reading at once. Such problems are ProblemOther.
func (p *Problems) Note(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if _, ok := p.problems[key]; !ok {
		p.Add(key, Problem{Code: ProblemOther, Text: msg})
		return
	}
	p.all = append(p.all, msg)
}

// Has reports whether key has a problem.
func (p *Problems) Has(key string) bool {
	_, ok := p.problems[key]
	return ok
}

// Empty reports whether nothing was found wrong.
func (p *Problems) Empty() bool { return len(p.keys) == 0 }

// FieldErr returns nil when nothing is wrong, and otherwise the 400 that
// names each failing field with its first problem, in the order found
// (ErrInvalidFieldValues), with the problems themselves in its Problems.
func (p *Problems) FieldErr() error {
	if p.Empty() {
		return nil
	}
	return errFieldProblems(p.keys, p.problems)
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

// errFieldProblems is ErrInvalidFieldValues of typed problems: Details
// holds their messages and Problems the problems.
func errFieldProblems(ids []string, problems map[string]Problem) *Error {
	reasons := make(map[string]string, len(problems))
	for id, pr := range problems {
		reasons[id] = pr.Message()
	}
	e := ErrInvalidFieldValues(ids, reasons)
	e.Problems = problems
	return e
}

// errFieldProblem is the 400 of one field's problem.
func errFieldProblem(id string, pr Problem) *Error {
	return errFieldProblems([]string{id}, map[string]Problem{id: pr})
}
