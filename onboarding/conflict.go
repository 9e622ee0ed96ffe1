package onboarding

import "errors"

// ErrWriteConflict is what a Store returns when its transaction lost a race
// with a concurrent one over the same records; the caller may retry.
var ErrWriteConflict = errors.New("write conflict")
