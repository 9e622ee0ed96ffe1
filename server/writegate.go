package server

import (
	"github.com/labstack/echo/v4"
)

// WriteGate says whether the store accepts writes now: the storage
// refuses them while the disk is nearly full.
type WriteGate interface {
	// Writable returns nil while writes are accepted, and an error
	// matching onboarding.ErrInsufficientStorage while they are refused.
	Writable() error
}

// writable refuses an API request that would write (every POST and PATCH
// of the API) while the gate refuses writes, before the handler runs: a
// create or an invite would otherwise send its email and only then find
// that nothing can be stored.
func (s *Server) writable(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.writes.Writable(); err != nil {
			return err
		}
		return next(c)
	}
}
