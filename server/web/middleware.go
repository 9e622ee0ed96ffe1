package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// RecoverPanic turns a panic into a 500 Internal server error, whose
// cause ErrorHandler logs. http.ErrAbortHandler goes on up: it is how a
// handler aborts its answer on purpose.
func RecoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// BaseHeaders sets the headers every answer carries, success or error,
// whatever its route: no sniffing, and no caching unless the handler says
// otherwise (the assets, the OpenAPI document). ErrorHandler sets them
// again on every error, over what a failing handler set.
func BaseHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		NoStore(c.Response().Header())
		return next(c)
	}
}

// NoStore marks an answer as not to be sniffed nor stored.
func NoStore(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}
