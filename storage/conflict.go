package storage

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
)

// writeConflict is a Badger write conflict as the Store returns it: it
// matches onboarding.ErrWriteConflict for callers outside this package and
// still badger.ErrConflict for the retries inside it, and its message is
// Badger's, unchanged.
type writeConflict struct{ err error }

func (e *writeConflict) Error() string { return e.err.Error() }

func (e *writeConflict) Unwrap() []error { return []error{onboarding.ErrWriteConflict, e.err} }

// translateConflict returns err as onboarding.ErrWriteConflict when it is
// (or wraps) badger.ErrConflict, and err itself otherwise. Every error that
// a transaction of the Store can lose a conflict with passes through it
// before it leaves the package.
func translateConflict(err error) error {
	if errors.Is(err, badger.ErrConflict) && !errors.Is(err, onboarding.ErrWriteConflict) {
		return &writeConflict{err}
	}
	return err
}
